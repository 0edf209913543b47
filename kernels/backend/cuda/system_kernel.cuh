// The fused path's __global__ kernel, apart from the module's host code (cuda_api.cuh) so that a
// kernel compiled at run time for one user model (kernels/backend/cuda/jit/) is this same kernel.
#pragma once

namespace ukes::cuda {

// The kernels take their function object as a __grid_constant__ parameter: its operator() takes
// the object's address, which would otherwise copy the whole object (views and settings, about
// 300 B) into each thread's stack (ptxas: scara warp FP64 400 B -> 40 B, fused FP64 2520 B ->
// 2248 B).

// kernel(i) for each of `count` systems, one thread each.
template <class Kernel>
__global__ void system_kernel(int count, const __grid_constant__ Kernel kernel) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < count) kernel(i);
}

}  // namespace ukes::cuda
