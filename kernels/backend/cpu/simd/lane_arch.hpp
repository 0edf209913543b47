// The lane type of each instruction set: an xsimd batch of doubles on the architecture its lane
// library is compiled for (CMakeLists.txt), for the backend (lane_batch_impl.hpp) and the
// library's other functions (lane_functions.cpp) alike.
#pragma once

#include "kernels/backend/cpu/cpu_isa.hpp"
#include "kernels/backend/cpu/simd/simd_lanes.hpp"

namespace ukes {

template <CpuIsa kIsa>
struct LaneArch;
template <>
struct LaneArch<CpuIsa::kSse2> {
  using type = xsimd::sse2;
};
template <>
struct LaneArch<CpuIsa::kAvx2> {
  using type = xsimd::fma3<xsimd::avx2>;
};
template <>
struct LaneArch<CpuIsa::kAvx512> {
  using type = xsimd::avx512f;
};

template <CpuIsa kIsa>
using LaneBatch = xsimd::batch<double, typename LaneArch<kIsa>::type>;

}  // namespace ukes
