// The fused path: one thread integrates one system from t0 to t_end with the CPU backend's
// control logic and numbers. Built-in models run SystemKernel::run as the CPU does; user models
// (bucket programs) run integrate_with_one_call_site (kernels/staged/staged_system.hpp), the same
// integration driven one right-hand side at a time. That halves a user model's stack frame
// (ptxas, FP64: bucket 4 15 KB -> 9 KB, bucket 16 143 KB -> 73 KB) but would add about 600 B of
// stage storage to a small built-in's (benchmarks/perf_model/README.md, "One call site").
#pragma once

#include <cuda_runtime.h>

#include "kernels/backend/cuda/cuda_check.cuh"
#include "kernels/staged/staged_system.hpp"

namespace ukes {

template <class Model, class T>
__global__ void integrate_batch_kernel(BatchInputView in, RunSettings<T> settings,
                                       BatchOutputView out) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= in.count) return;
  if constexpr (BucketModel<Model>) {
    integrate_with_one_call_site<Model, T>(in, settings, i, out);
  } else {
    SystemKernel<Model, T>::run(in, settings, i, out);
  }
}

// Threads per block of the fused kernel: small blocks let the scheduler balance systems whose
// adaptive step counts differ, and register-heavy FP64 threads fit more blocks per SM.
inline constexpr int kFusedBlockThreads = 128;

// Launches the whole chunk `in` (device pointers) on `stream`; returns at once.
template <class Model, class T>
void launch_fused_path(const BatchInputView& in, const RunSettings<T>& settings,
                       const BatchOutputView& out, cudaStream_t stream) {
  if (in.count <= 0) return;
  const int blocks = (in.count + kFusedBlockThreads - 1) / kFusedBlockThreads;
  integrate_batch_kernel<Model, T><<<blocks, kFusedBlockThreads, 0, stream>>>(in, settings, out);
  cuda::check_launch("integrate_batch_kernel");
}

}  // namespace ukes
