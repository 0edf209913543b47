// Classical fixed-step Runge–Kutta of order 4 on a first-order state x' = f(t, x).
#pragma once

#include "kernels/linalg/small_matrix.hpp"

namespace ukes {

// One RK4 step taken one evaluation at a time, so that a caller can evaluate the right-hand side at
// a single place (SystemKernel, kernels/ensemble/system_kernel.hpp). begin() gives the input of
// k2; advance() takes evaluation e's derivative (1: k2, 2: k3, 3: k4) and gives the input of the
// next, the new state after k4. Only k2 + k3 is kept between evaluations.
template <class T, int D>
struct Rk4Stages {
  static constexpr int kStageEvaluations = 3;  // k2, k3, k4
  Vec<T, D> sum;                               // k2, then k2 + k3

  UKES_HD static T begin(T t, T h, const Vec<T, D>& x, const Vec<T, D>& k1, Vec<T, D>& y) {
    const T h2 = T(0.5) * h;
    for (int i = 0; i < D; ++i) y[i] = x[i] + h2 * k1[i];
    return t + h2;
  }

  // Returns the time of the next input (after k4: t + h, where the new state y lies).
  UKES_HD T advance(int e, T t, T h, const Vec<T, D>& x, const Vec<T, D>& k1, const Vec<T, D>& dx,
                    Vec<T, D>& y) {
    const T h2 = T(0.5) * h;
    if (e == 1) {
      sum = dx;
      for (int i = 0; i < D; ++i) y[i] = x[i] + h2 * dx[i];
      return t + h2;
    }
    if (e == 2) {
      for (int i = 0; i < D; ++i) {
        sum[i] = sum[i] + dx[i];
        y[i] = x[i] + h * dx[i];
      }
      return t + h;
    }
    const T h6 = h / T(6);
    for (int i = 0; i < D; ++i) y[i] = x[i] + h6 * (k1[i] + T(2) * sum[i] + dx[i]);
    return t + h;
  }
};

// One step from (t, x) with k1 = f(t, x) already known (it doubles as the observation of the
// accepted state). `f(t, x, dx)` evaluates the derivative.
template <class T, int D, class F>
UKES_HD Vec<T, D> rk4_step(F& f, T t, const Vec<T, D>& x, const Vec<T, D>& k1, T h) {
  Rk4Stages<T, D> stages{};
  Vec<T, D> y, dx;
  T te = stages.begin(t, h, x, k1, y);
  for (int e = 1; e <= Rk4Stages<T, D>::kStageEvaluations; ++e) {
    f(te, y, dx);
    te = stages.advance(e, t, h, x, k1, dx, y);
  }
  return y;
}

}  // namespace ukes
