// Classical fixed-step Runge–Kutta of order 4 on a first-order state x' = f(t, x).
#pragma once

#include "kernels/linalg/small_matrix.hpp"

namespace ukes {

// One step from (t, x) with k1 = f(t, x) already known (it doubles as the observation of the
// accepted state). `f(t, x, dx)` evaluates the derivative.
template <class T, int D, class F>
UKES_HD Vec<T, D> rk4_step(F& f, T t, const Vec<T, D>& x, const Vec<T, D>& k1, T h) {
  Vec<T, D> k2, k3, k4, y;
  const T h2 = T(0.5) * h;
  for (int i = 0; i < D; ++i) y[i] = x[i] + h2 * k1[i];
  f(t + h2, y, k2);
  for (int i = 0; i < D; ++i) y[i] = x[i] + h2 * k2[i];
  f(t + h2, y, k3);
  for (int i = 0; i < D; ++i) y[i] = x[i] + h * k3[i];
  f(t + h, y, k4);
  const T h6 = h / T(6);
  for (int i = 0; i < D; ++i) y[i] = x[i] + h6 * (k1[i] + T(2) * (k2[i] + k3[i]) + k4[i]);
  return y;
}

}  // namespace ukes
