// The fused CUDA kernel: one system per thread, running the very SystemKernel the CPU backend runs.
// The CUDA backend's launch machinery, batched linear algebra and statistics build on this.
#pragma once

#include "kernels/ensemble/system_kernel.hpp"

namespace ukes {

template <class Model, class T>
__global__ void integrate_batch_kernel(BatchInputView in, RunSettings<T> settings,
                                       BatchOutputView out) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < in.count) SystemKernel<Model, T>::run(in, settings, i, out);
}

}  // namespace ukes
