// NVRTC for the kernels compiled at run time (fused_source.hpp): compiles a translation unit
// against kernels/ headers embedded in the module at build time (scripts/embed_headers.cmake),
// so that an installed module needs no source tree, and against the CUDA toolkit's libcu++
// (cuda/std), which stands in for the few standard headers device code includes. Runs on the
// host alone: CI compiles every example model's kernel here without a GPU
// (tests/jit/nvrtc_compile_test.cpp).
#pragma once

#include <stdexcept>
#include <string>

#include "kernels/backend/cuda/jit/fused_source.hpp"

namespace ukes::jit {

// Why a kernel could not be compiled: a bounded message (NVRTC's log is cut), never user text.
struct JitError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// ptxas's figures for a kernel, per thread (-1: not reported).
struct KernelResources {
  int registers = -1;
  int stack = -1;  // bytes: the kernel's frame, or its cumulative stack when larger
  int spill_stores = -1, spill_loads = -1;
};

struct CompiledKernel {
  std::string cubin;         // for cudaLibraryLoadData
  std::string lowered_name;  // the kernel's mangled name, for cudaLibraryGetKernel
  std::string ptxas_report;  // ptxas's resource lines, as it printed them
  KernelResources resources;
  double compile_s = 0.0;   // seconds to compile, or to load from the disk cache
  bool from_cache = false;  // loaded from the disk cache (kernel_cache.hpp)
};

// The figures ptxas's report gives for `function`.
KernelResources resources_of(const std::string& ptxas_report, const std::string& function);

// The directory holding cuda/std/ (libcu++), looked for under UKES_CUDA_INCLUDE_DIR, the build's
// CUDA toolkit, CUDA_HOME, CUDA_PATH and /usr/local/cuda (each include's cccl/, then include/
// itself). Throws JitError naming where it looked when none has it.
std::string libcudacxx_include_dir();

// Compiles `source` for sm_<arch> (90: H100/H200), or loads what an earlier compile of the same
// inputs left in the disk cache (kernel_cache.hpp). Throws JitError.
CompiledKernel compile_kernel(const FusedSource& source, int arch);

}  // namespace ukes::jit
