// The cubic Hermite interpolant of a step from its end states and derivatives: the dense output
// of order 3 that events are located on after RK4 and RODAS4 steps (DOPRI5 has its own of
// order 4, kernels/integrators/dopri5.hpp).
#pragma once

#include "kernels/linalg/small_matrix.hpp"

namespace ukes {

// The state at t + theta h of the step from x (derivative k0) to y (derivative k1).
template <class T, int D>
UKES_HD void cubic_hermite(T theta, T h, const Vec<T, D>& x, const Vec<T, D>& k0,
                           const Vec<T, D>& y, const Vec<T, D>& k1, Vec<T, D>& z) {
  const T rest = T(1) - theta;
  const T h00 = rest * rest * (T(1) + T(2) * theta);
  const T h01 = theta * theta * (T(3) - T(2) * theta);
  const T h10 = theta * rest * rest * h;
  const T h11 = -theta * theta * rest * h;
  for (int i = 0; i < D; ++i) z[i] = h00 * x[i] + h10 * k0[i] + h01 * y[i] + h11 * k1[i];
}

}  // namespace ukes
