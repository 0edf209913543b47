// The lanes' vector functions as entry points of their library (kernels/backend/cpu/simd/
// exports.map), so that tests/lanes/lanes_test.cpp measures the code each instruction set's lanes
// run, compiled with their options, from a test built for the portable baseline. One copy per
// lane library: CMakeLists.txt defines UKES_LANE_ISA.
#include "kernels/backend/cpu/cpu_backend.hpp"
#include "kernels/backend/cpu/simd/lane_batch_impl.hpp"

namespace ukes {

template <CpuIsa kIsa>
void lane_sin_cos(const double* x, double* sin_x, double* cos_x, int count) {
  using Lanes = xsimd::batch<double, typename LaneArch<kIsa>::type>;
  constexpr int kWidth = LaneCount<Lanes>::value;
  for (int i = 0; i + kWidth <= count; i += kWidth) {
    const auto sc = LaneMath<Lanes>::sin_cos(Lanes::load_unaligned(x + i));
    sc.first.store_unaligned(sin_x + i);
    sc.second.store_unaligned(cos_x + i);
  }
}

template void lane_sin_cos<CpuIsa::UKES_LANE_ISA>(const double*, double*, double*, int);

}  // namespace ukes
