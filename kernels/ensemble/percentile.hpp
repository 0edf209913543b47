// The one definition of the ensemble percentiles, shared by the host statistics (statistics.cpp)
// and the device statistics (kernels/backend/thrust/), so both report the very same numbers.
#pragma once

#include <cstddef>

#include "kernels/core/hd.hpp"

namespace ukes {

// a * b rounded on its own. nvcc would otherwise fuse `a + diff * t` below into one fma on the
// device, and the device percentiles would differ from the host's in the last bit.
UKES_HD UKES_INLINE double product_unfused(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  // Our host builds target plain x86-64 (no -mfma), so g++ has no fma to fuse into; with -mfma
  // or -march=native it would need -ffp-contract=off.
  return a * b;
#endif
}

// numpy's default ("linear", Hyndman-Fan type 7) percentile of n >= 1 finite values sorted
// ascending, p in [0, 1]: the order statistic at virtual index h = (n - 1) p, interpolated the way
// numpy's _lerp does (from the nearer neighbour, so t = 0 and t = 1 give the order statistics
// exactly).
UKES_HD UKES_INLINE double percentile_sorted(const double* sorted, std::size_t n, double p) {
  const double h = static_cast<double>(n - 1) * p;
  const auto lo = static_cast<std::size_t>(h);  // floor: h >= 0
  const std::size_t hi = lo + 1 < n ? lo + 1 : n - 1;
  const double t = h - static_cast<double>(lo);
  const double a = sorted[lo], b = sorted[hi];
  const double diff = b - a;
  return t >= 0.5 ? b - product_unfused(diff, 1.0 - t) : a + product_unfused(diff, t);
}

}  // namespace ukes
