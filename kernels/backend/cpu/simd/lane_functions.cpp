// The lane library's exports beside its backend (kernels/backend/cpu/simd/lane_functions.hpp),
// compiled with the library's options. One copy per lane library: CMakeLists.txt defines
// UKES_LANE_ISA.
#include "kernels/backend/cpu/simd/lane_functions.hpp"

#include "kernels/backend/cpu/simd/lane_arch.hpp"

namespace ukes {

template <CpuIsa kIsa>
void lane_sin_cos(const double* x, double* sin_x, double* cos_x, int count) {
  using Lanes = LaneBatch<kIsa>;
  constexpr int kWidth = LaneCount<Lanes>::value;
  for (int i = 0; i + kWidth <= count; i += kWidth) {
    const auto sc = LaneMath<Lanes>::sin_cos(Lanes::load_unaligned(x + i));
    sc.first.store_unaligned(sin_x + i);
    sc.second.store_unaligned(cos_x + i);
  }
}

template <CpuIsa kIsa>
double lane_fma_chains(long rounds, double& result) {
  using Lanes = LaneBatch<kIsa>;
  // More chains than the multiply-add units' latency times their count (4 cycles x 2 units on
  // current cores): every unit can start one each cycle.
  constexpr int kChains = 12;
  Lanes chain[kChains];
  for (int i = 0; i < kChains; ++i) chain[i] = Lanes(1.0 + 1e-3 * i);
  // chain <- chain m + c converges to c / (1 - m): the values stay normal numbers.
  const Lanes m(0.999999), c(1e-6);
  for (long r = 0; r < rounds; ++r) {
    for (int i = 0; i < kChains; ++i) chain[i] = xsimd::fma(chain[i], m, c);
  }
  Lanes sum = chain[0];
  for (int i = 1; i < kChains; ++i) sum += chain[i];
  result = xsimd::hadd(sum);
  return 2.0 * LaneCount<Lanes>::value * kChains * static_cast<double>(rounds);
}

template void lane_sin_cos<CpuIsa::UKES_LANE_ISA>(const double*, double*, double*, int);
template double lane_fma_chains<CpuIsa::UKES_LANE_ISA>(long, double&);

}  // namespace ukes
