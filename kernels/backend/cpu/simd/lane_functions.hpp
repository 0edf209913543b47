// What each lane library exports beside its backend (kernels/backend/cpu/simd/exports.map): code
// compiled with the lanes' options for their instruction set, for a test or a benchmark built for
// the portable baseline. Defined in kernels/backend/cpu/simd/lane_functions.cpp, one copy per
// lane library; call one only where cpu_supports(kIsa) (kernels/backend/cpu/cpu_isa.hpp).
#pragma once

#include "kernels/backend/cpu/cpu_isa.hpp"

namespace ukes {

// sin and cos of x[0 .. count) as the lanes of kIsa compute them (LaneMath,
// kernels/backend/cpu/simd/simd_lanes.hpp), in whole vectors: count a multiple of the lane width.
// For tests of their accuracy (tests/lanes/lanes_test.cpp).
template <CpuIsa kIsa>
void lane_sin_cos(const double* x, double* sin_x, double* cos_x, int count);

// Independent chains of multiply-adds in kIsa's lane vectors, `rounds` of them: the FP64
// operations a second the lanes can do at most (benchmarks/perf_model/fp64_peak.cpp). Returns the
// operations done, a multiply and an add each; `result` keeps the chains' values alive.
template <CpuIsa kIsa>
double lane_fma_chains(long rounds, double& result);

// f.template operator()<kIsa>() for the lane instruction set `isa` known at run time: how a caller
// picks one of the functions above (kScalar calls nothing).
template <class F>
void with_lane_isa(CpuIsa isa, F&& f) {
  switch (isa) {
#define UKES_LANE_ISA_CASE(Name, spelling, width)                                               \
  case CpuIsa::k##Name:                                                                         \
    if constexpr (CpuIsa::k##Name != CpuIsa::kScalar) f.template operator()<CpuIsa::k##Name>(); \
    break;
    UKES_CPU_ISAS(UKES_LANE_ISA_CASE)
#undef UKES_LANE_ISA_CASE
  }
}

}  // namespace ukes
