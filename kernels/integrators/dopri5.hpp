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
// The continuous extension of order 4 (Hairer, Norsett & Wanner I, sec. II.6; their dopri5.f).
inline constexpr double d1 = -12715105075.0 / 11282082432, d3 = 87487479700.0 / 32700410799,
                        d4 = -10690763975.0 / 1880347072, d5 = 701980252875.0 / 199316789632,
                        d6 = -1453857185.0 / 822651844, d7 = 69997945.0 / 29380423;
}  // namespace dopri5

// One trial step taken one evaluation at a time, so that a caller can evaluate the right-hand side
// at a single place (SystemKernel, kernels/ensemble/system_kernel.hpp). begin() gives the input of
// k2; advance() takes evaluation e's derivative (1: k2, ..., 5: k6) and gives the input of the
// next, the 5th-order solution y after k6. Once k7 = f(t + h, y) is known, error_norm() gives the
// scaled RMS error norm (accept when <= 1) over the first `size` components (a bucket model's
// padding is not part of its state). A non-finite stage yields a non-finite norm, which the
// caller treats as a rejection.
template <class T, int D>
struct Dopri5Stages {
  static constexpr int kStageEvaluations = 5;  // k2 .. k6; then k7 at the new state
  Vec<T, D> k2, k3, k4, k5, k6;

  UKES_HD static T begin(T t, T h, const Vec<T, D>& x, const Vec<T, D>& k1, Vec<T, D>& z) {
    using namespace dopri5;
    for (int i = 0; i < D; ++i) z[i] = x[i] + h * T(a21) * k1[i];
    return t + T(c2) * h;
  }

  // Returns the time of the next input (after k6: t + h, where y lies).
  UKES_HD T advance(int e, T t, T h, const Vec<T, D>& x, const Vec<T, D>& k1, const Vec<T, D>& dx,
                    Vec<T, D>& z) {
    using namespace dopri5;
    switch (e) {
      case 1:
        k2 = dx;
        for (int i = 0; i < D; ++i) z[i] = x[i] + h * (T(a31) * k1[i] + T(a32) * k2[i]);
        return t + T(c3) * h;
      case 2:
        k3 = dx;
        for (int i = 0; i < D; ++i)
          z[i] = x[i] + h * (T(a41) * k1[i] + T(a42) * k2[i] + T(a43) * k3[i]);
        return t + T(c4) * h;
      case 3:
        k4 = dx;
        for (int i = 0; i < D; ++i)
          z[i] = x[i] + h * (T(a51) * k1[i] + T(a52) * k2[i] + T(a53) * k3[i] + T(a54) * k4[i]);
        return t + T(c5) * h;
      case 4:
        k5 = dx;
        for (int i = 0; i < D; ++i)
          z[i] = x[i] + h * (T(a61) * k1[i] + T(a62) * k2[i] + T(a63) * k3[i] + T(a64) * k4[i] +
                             T(a65) * k5[i]);
        return t + h;
      default:
        k6 = dx;
        for (int i = 0; i < D; ++i)
          z[i] = x[i] + h * (T(a71) * k1[i] + T(a73) * k3[i] + T(a74) * k4[i] + T(a75) * k5[i] +
                             T(a76) * k6[i]);
        return t + h;
    }
  }

  // The accepted step's dense output at t + theta h, theta in [0, 1] (x at 0, y at 1): what
  // events are located on (kernels/ensemble/events.hpp).
  UKES_HD void dense(T theta, T h, const Vec<T, D>& x, const Vec<T, D>& k1, const Vec<T, D>& y,
                     const Vec<T, D>& k7, Vec<T, D>& z) const {
    using namespace dopri5;
    const T rest = T(1) - theta;
    for (int i = 0; i < D; ++i) {
      const T diff = y[i] - x[i];
      const T b = h * k1[i] - diff;
      const T c = diff - h * k7[i] - b;
      const T d = h * (T(d1) * k1[i] + T(d3) * k3[i] + T(d4) * k4[i] + T(d5) * k5[i] +
                       T(d6) * k6[i] + T(d7) * k7[i]);
      z[i] = x[i] + theta * (diff + rest * (b + theta * (c + rest * d)));
    }
  }

  UKES_HD T error_norm(T h, T rtol, T atol, const Vec<T, D>& x, const Vec<T, D>& k1,
                       const Vec<T, D>& y, const Vec<T, D>& k7, int size = D) const {
    using namespace dopri5;
    T sum = T(0);
    for (int i = 0; i < D; ++i) {
      const T err = h * (T(e1) * k1[i] + T(e3) * k3[i] + T(e4) * k4[i] + T(e5) * k5[i] +
                         T(e6) * k6[i] + T(e7) * k7[i]);
      const T scale = atol + rtol * max_of(abs(x[i]), abs(y[i]));
      sum += square(err / scale);
    }
    return sqrt(sum / T(size > 0 ? size : 1));
  }
};

// One trial step from (t, x) with k1 = f(t, x): the 5th-order solution y, its derivative
// k7 = f(t + h, y), and the error norm (Dopri5Stages::error_norm).
template <class T, int D, class F>
UKES_HD T dopri5_step(F& f, T t, const Vec<T, D>& x, const Vec<T, D>& k1, T h, T rtol, T atol,
                      Vec<T, D>& y, Vec<T, D>& k7, int size = D) {
  Dopri5Stages<T, D> stages{};  // zeroed: GCC cannot tell that the loop sets k2 .. k6 in order
  Vec<T, D> dx;
  T te = stages.begin(t, h, x, k1, y);
  for (int e = 1; e <= Dopri5Stages<T, D>::kStageEvaluations; ++e) {
    f(te, y, dx);
    te = stages.advance(e, t, h, x, k1, dx, y);
  }
  f(te, y, k7);
  return stages.error_norm(h, rtol, atol, x, k1, y, k7, size);
}

}  // namespace ukes
