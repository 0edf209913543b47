// Step-size control of the adaptive methods (DOPRI5, kernels/integrators/dopri5.hpp; RODAS4,
// kernels/integrators/rosenbrock.hpp), __host__ __device__.
#pragma once

#include "kernels/linalg/small_matrix.hpp"

namespace ukes {

// The factor on the step from its error norm err (accept when <= 1), for an error estimate of
// order kEstimateOrder: Hairer's 0.9 err^(-1 / (kEstimateOrder + 1)) (HNW I, sec. II.4), clamped
// to [fac_min, fac_max]. A non-finite norm shrinks the step most; an exact step grows it most.
template <int kEstimateOrder, class T>
UKES_HD T step_factor(T err, T fac_min, T fac_max) {
  if (!isfinite(err)) return fac_min;
  if (!(err > T(0))) return fac_max;
  const T fac = T(0.9) * pow(err, T(-1) / T(kEstimateOrder + 1));
  return min_of(fac_max, max_of(fac_min, fac));
}

}  // namespace ukes
