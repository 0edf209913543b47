// The directory where run-time compiled kernels are kept between processes: NVRTC's for the GPU
// (kernels/backend/cuda/jit/kernel_cache.hpp) and the C++ compiler's for the CPU lanes
// (kernels/backend/cpu/jit/cpu_jit.hpp), each in a folder of its own under it.
//
// Where: $UKES_JIT_CACHE, else $XDG_CACHE_HOME/ukes/jit, else $HOME/.cache/ukes/jit; none when
// UKES_JIT_CACHE is "off" or no such variable is set. At most $UKES_JIT_CACHE_MAX_MB megabytes
// per folder (default 512): after each store the least recently used entries go.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace ukes {

struct CacheDirSettings {
  std::filesystem::path dir;
  std::uintmax_t max_bytes = 0;
};

// The cache the environment asks for (above), or none.
std::optional<CacheDirSettings> cache_dir_settings();

// Marks an entry used now: the last to go when its folder is trimmed.
void mark_cache_entry_used(const std::filesystem::path& entry);

// Removes the least recently used files of `dir` named *`extension` until they hold at most
// `max_bytes`, and the temporaries (*.tmp.*) of writers that died over an hour ago. Never throws.
void trim_cache_dir(const std::filesystem::path& dir, const std::string& extension,
                    std::uintmax_t max_bytes);

}  // namespace ukes
