// Fused kernels compiled at run time for one user model (kernels/backend/cuda/jit/): the model's
// program as code instead of the interpreter's register file in local memory. Compiled on a
// model's first run on the device, then kept for the process (each variant of each model once,
// the 64 most recently used);
// where one cannot be compiled or loaded, the run uses the bucket's interpreted kernel, and the
// report says why. UKES_GPU_JIT=0 turns this off.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <string>

#include "kernels/backend/cuda/jit/fused_source.hpp"
#include "kernels/backend/device/system_kernels.hpp"
#include "kernels/core/cancel.hpp"

namespace ukes::cuda {

// A compiled kernel loaded on the device: unloaded when the cache and every run let go of it.
struct CompiledKernel {
  cudaLibrary_t library = nullptr;
  cudaKernel_t kernel = nullptr;
  std::string description;  // for GpuRunReport::kernel: NVRTC's time and ptxas's figures
  CompiledKernel() = default;
  CompiledKernel(const CompiledKernel&) = delete;
  CompiledKernel& operator=(const CompiledKernel&) = delete;
  ~CompiledKernel();
};

// The compiled kernel for `program` and `spec`, from the cache or compiled now; null, with the
// reason in *why, when there is none. NVRTC runs on a thread of its own while the caller waits,
// so that a run cancelled meanwhile returns at once (null); the compile goes on and is kept.
std::shared_ptr<const CompiledKernel> compiled_fused_kernel(const UserModelProgram& program,
                                                            const jit::FusedKernelSpec& spec,
                                                            const CancelFlag* cancel,
                                                            std::string* why);

// The spec of FusedSystem<UserModel<K>, T, method, general>, the kernel object the host passes.
template <class Kernel>
struct FusedSpecOf;
template <int kBucket, class T, Method kMethod, bool kGeneral>
struct FusedSpecOf<FusedSystem<UserModel<kBucket>, T, kMethod, kGeneral>> {
  static jit::FusedKernelSpec get() {
    using Kernel = FusedSystem<UserModel<kBucket>, T, kMethod, kGeneral>;
    return {kBucket,        sizeof(T) == sizeof(double), kMethod, kGeneral, sizeof(Kernel),
            alignof(Kernel)};
  }
};

}  // namespace ukes::cuda
