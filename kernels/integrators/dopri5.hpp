// Dormand–Prince 5(4) embedded pair with the step-size control of Hairer, Nørsett & Wanner,
// "Solving Ordinary Differential Equations I", sec. II.4 and II.5 (code DOPRI5).
// The 5th-order solution is propagated; the difference to the embedded 4th-order one estimates the
// local error. The last stage is evaluated at the new point (FSAL), so an accepted step hands its
// derivative, and the observation of the new state, to the next step for free.
#pragma once

#include "kernels/linalg/small_matrix.hpp"

namespace ukes {

namespace dopri5 {
// Butcher tableau.
inline constexpr double c2 = 1.0 / 5, c3 = 3.0 / 10, c4 = 4.0 / 5, c5 = 8.0 / 9;
inline constexpr double a21 = 1.0 / 5;
inline constexpr double a31 = 3.0 / 40, a32 = 9.0 / 40;
inline constexpr double a41 = 44.0 / 45, a42 = -56.0 / 15, a43 = 32.0 / 9;
inline constexpr double a51 = 19372.0 / 6561, a52 = -25360.0 / 2187, a53 = 64448.0 / 6561,
                        a54 = -212.0 / 729;
inline constexpr double a61 = 9017.0 / 3168, a62 = -355.0 / 33, a63 = 46732.0 / 5247,
                        a64 = 49.0 / 176, a65 = -5103.0 / 18656;
inline constexpr double a71 = 35.0 / 384, a73 = 500.0 / 1113, a74 = 125.0 / 192,
                        a75 = -2187.0 / 6784, a76 = 11.0 / 84;
// Error weights: 5th-order minus 4th-order weights.
inline constexpr double e1 = 71.0 / 57600, e3 = -71.0 / 16695, e4 = 71.0 / 1920,
                        e5 = -17253.0 / 339200, e6 = 22.0 / 525, e7 = -1.0 / 40;
}  // namespace dopri5

// One trial step from (t, x) with k1 = f(t, x). Fills the 5th-order solution y, its derivative
// k7 = f(t + h, y), and returns the scaled RMS error norm (accept when <= 1) over the first
// `size` components (a bucket model's padding is not part of its state). A non-finite stage
// yields a non-finite norm, which the caller treats as a rejection.
template <class T, int D, class F>
UKES_HD T dopri5_step(F& f, T t, const Vec<T, D>& x, const Vec<T, D>& k1, T h, T rtol, T atol,
                      Vec<T, D>& y, Vec<T, D>& k7, int size = D) {
  using namespace dopri5;
  Vec<T, D> k2, k3, k4, k5, k6, z;
  for (int i = 0; i < D; ++i) z[i] = x[i] + h * T(a21) * k1[i];
  f(t + T(c2) * h, z, k2);
  for (int i = 0; i < D; ++i) z[i] = x[i] + h * (T(a31) * k1[i] + T(a32) * k2[i]);
  f(t + T(c3) * h, z, k3);
  for (int i = 0; i < D; ++i) z[i] = x[i] + h * (T(a41) * k1[i] + T(a42) * k2[i] + T(a43) * k3[i]);
  f(t + T(c4) * h, z, k4);
  for (int i = 0; i < D; ++i)
    z[i] = x[i] + h * (T(a51) * k1[i] + T(a52) * k2[i] + T(a53) * k3[i] + T(a54) * k4[i]);
  f(t + T(c5) * h, z, k5);
  for (int i = 0; i < D; ++i)
    z[i] = x[i] +
           h * (T(a61) * k1[i] + T(a62) * k2[i] + T(a63) * k3[i] + T(a64) * k4[i] + T(a65) * k5[i]);
  f(t + h, z, k6);
  for (int i = 0; i < D; ++i)
    y[i] = x[i] +
           h * (T(a71) * k1[i] + T(a73) * k3[i] + T(a74) * k4[i] + T(a75) * k5[i] + T(a76) * k6[i]);
  f(t + h, y, k7);

  T sum = T(0);
  for (int i = 0; i < D; ++i) {
    const T err = h * (T(e1) * k1[i] + T(e3) * k3[i] + T(e4) * k4[i] + T(e5) * k5[i] +
                       T(e6) * k6[i] + T(e7) * k7[i]);
    const T scale = atol + rtol * max_of(abs(x[i]), abs(y[i]));
    sum += square(err / scale);
  }
  return sqrt(sum / T(size > 0 ? size : 1));
}

// Step-size factor from an error norm (Hairer's safety factor 0.9, exponent 1/5), clamped to
// [fac_min, fac_max].
template <class T>
UKES_HD T dopri5_step_factor(T err, T fac_min, T fac_max) {
  if (!isfinite(err)) return fac_min;
  if (!(err > T(0))) return fac_max;
  const T fac = T(0.9) * pow(err, T(-0.2));
  return min_of(fac_max, max_of(fac_min, fac));
}

}  // namespace ukes
