// The disk cache of the kernels NVRTC compiles (nvrtc_compiler.hpp), so that every process after
// the first (a server's restart, each MPI rank, another server on the node) loads a user model's
// kernel in milliseconds instead of compiling it for seconds.
//
// Where: the cache directory of kernels/core/cache_dir.hpp ($UKES_JIT_CACHE and its defaults,
// bounded by $UKES_JIT_CACHE_MAX_MB), whose files *.kernel are this cache's.
//
// An entry is named by the SHA-256 of everything that decides the kernel (the translation unit,
// the embedded kernels/ headers, NVRTC's version and options, the architecture: kernel_key in
// nvrtc_compiler.cpp) and is written to a temporary file renamed into place, so that concurrent
// writers and readers (ranks, servers) see a whole entry or none. It carries its key and the
// SHA-256 of its contents: an entry that does not check out is recompiled and replaced. The cache
// never fails a compile: a directory it cannot read or write only costs the compile.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>

#include "kernels/backend/cuda/jit/nvrtc_compiler.hpp"
#include "kernels/core/cache_dir.hpp"

namespace ukes::jit {

using KernelCacheSettings = CacheDirSettings;

// The cache the environment asks for (kernels/core/cache_dir.hpp), or none.
inline std::optional<KernelCacheSettings> kernel_cache_settings() { return cache_dir_settings(); }

class KernelCache {
 public:
  explicit KernelCache(KernelCacheSettings settings) : settings_(std::move(settings)) {}

  // The kernel stored under `key` (hex), when a whole, unaltered entry is there; marks it used.
  std::optional<CompiledKernel> find(const std::string& key) const;
  // Stores `kernel` under `key`, then trims the cache to its bound. Never throws.
  void store(const std::string& key, const CompiledKernel& kernel) const;

  std::filesystem::path entry_path(const std::string& key) const;

 private:
  KernelCacheSettings settings_;
};

}  // namespace ukes::jit
