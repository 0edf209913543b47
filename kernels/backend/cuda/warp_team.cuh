// WarpTeam: a CUDA warp as a team (kernels/linalg/team.hpp), for the warp-per-system kernels: lane
// threadIdx.x % 32, every collective over the full warp. A block's warps are independent teams.
#pragma once

#include <cuda_runtime.h>

namespace ukes {

struct WarpTeam {
  static constexpr unsigned kFullMask = 0xffffffffu;
  static constexpr int kSize = 32;

  __device__ int rank() const { return static_cast<int>(threadIdx.x & (kSize - 1)); }
  __device__ int size() const { return kSize; }
  // Orders the lanes' memory accesses too (global and shared).
  __device__ void sync() const { __syncwarp(kFullMask); }

  // Butterfly all-reduce: at each level two partner lanes add the same two values in opposite
  // order, which IEEE addition makes bit-identical, so every lane ends with the same bits.
  template <class T>
  __device__ T sum(T x) const {
#pragma unroll
    for (int offset = kSize / 2; offset > 0; offset /= 2)
      x += __shfl_xor_sync(kFullMask, x, offset);
    return x;
  }

  template <class T>
  __device__ T broadcast(T x, int src) const {
    return __shfl_sync(kFullMask, x, src);
  }
};

}  // namespace ukes
