// Fused kernels compiled at run time for one model (kernels/backend/cuda/jit/): a user model's
// program as code instead of the interpreter's register file in local memory, and any model's
// kernel that follows servo rows of a higher relative degree (which the module has no
// ahead-of-time code for). Compiled on a model's first run on the device, then kept for the
// process (each variant of each model once, the 64 most recently used); where a user model's
// cannot be compiled or loaded, the run uses the bucket's interpreted kernel, and the report says
// why. UKES_GPU_JIT=0 turns this off.
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

// The compiled kernel for `spec` (and `program`, a user model's; null for a built-in), from the
// cache or compiled now; null, with the reason in *why, when there is none. NVRTC runs on a
// thread of its own while the caller waits, so that a run cancelled meanwhile returns at once
// (null); the compile goes on and is kept.
std::shared_ptr<const CompiledKernel> compiled_fused_kernel(const UserModelProgram* program,
                                                            const jit::FusedKernelSpec& spec,
                                                            const CancelFlag* cancel,
                                                            std::string* why);

// The spec of FusedSystem<Model, T, ...>, the kernel object the host passes: a user model's
// UserModel<K> (the interpreter's) by its bucket, a built-in by its name.
template <class Kernel>
struct FusedSpecOf;
template <class Model, class T, Method kMethod, bool kGeneral, bool kServoDerivatives, bool kEvents>
struct FusedSpecOf<FusedSystem<Model, T, kMethod, kGeneral, kServoDerivatives, kEvents>> {
  static jit::FusedKernelSpec get() {
    using Kernel = FusedSystem<Model, T, kMethod, kGeneral, kServoDerivatives, kEvents>;
    jit::FusedKernelSpec spec;
    if constexpr (BucketModel<Model>) {
      spec.bucket = Model::kN;
    } else {
      spec.model = Model::kName;
    }
    spec.fp64 = sizeof(T) == sizeof(double);
    spec.method = kMethod;
    spec.general = kGeneral;
    spec.servo_derivatives = kServoDerivatives;
    spec.events = kEvents;
    spec.host_size = sizeof(Kernel);
    spec.host_align = alignof(Kernel);
    return spec;
  }
};

}  // namespace ukes::cuda
