// The staged cuSOLVER path (GpuPath::kCusolver): per RK stage the batch's mass matrices and
// constraint matrices are factored by batched cuSOLVER routines, around per-system kernels that
// run the same integrator control logic and UK solve as the fused kernel (kernels/staged/).
#pragma once

#include <cuda_runtime.h>
#include <cusolverDn.h>

#include "kernels/backend/cuda/staged_executor.cuh"

namespace ukes {

// All views hold DEVICE pointers with the layouts of batch_layout.hpp. Blocks until the batch is
// integrated; throws std::runtime_error on a CUDA or cuSOLVER error. `cancel` (may be null) is
// checked between iterations: once requested, return early. Binds `solver` to `stream`.
template <class Model, class T>
void run_staged_path(const BatchInputView& in, const RunSettings<T>& s, const BatchOutputView& out,
                     cudaStream_t stream, cusolverDnHandle_t solver, const CancelFlag* cancel) {
  if (in.count <= 0) return;
  CudaStagedExecutor<Model, T> executor(in.count, stream, solver);
  run_staged<Model, T>(executor, in, s, out, cancel);
}

}  // namespace ukes
