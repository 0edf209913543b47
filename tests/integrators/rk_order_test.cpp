// Convergence order of the classical RK4 step (kernels/integrators/rk4.hpp) and of the
// Dormand–Prince 5(4) pair (kernels/integrators/dopri5.hpp), on ODEs with known solutions:
//   y0' = y0 cos t       -> y0 = exp(sin t)               (time-dependent)
//   y1' = -2 t y1^2      -> y1 = 1 / (1 + t^2)            (nonlinear, time-dependent)
//   y2' = y2 (1 - y2)    -> y2 = 1 / (1 + 9 e^-t)         (logistic, y2(0) = 0.1)
// Global errors at t = 1 with N and 2N fixed steps must shrink by 2^p: the observed order
// log2(e_N / e_2N) of every component is required within 0.3 of p = 4 (RK4) and p = 5 (DOPRI5's
// propagated 5th-order solution), over step counts where truncation dominates rounding
// (measured: 3.83-4.01 for RK4 at N = 16..256, 5.03-5.26 for DOPRI5 at N = 8..64). The
// embedded error estimate (5th minus 4th order) is a local error of order h^5. Also the
// step-size factor of Hairer's controller and the tableau's consistency.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "kernels/integrators/dopri5.hpp"
#include "kernels/integrators/rk4.hpp"
#include "kernels/integrators/step_control.hpp"

namespace ukes {
namespace {

constexpr int kD = 3;

struct TestOde {
  int evaluations = 0;
  template <class T>
  void operator()(T t, const Vec<T, kD>& y, Vec<T, kD>& dy) {
    ++evaluations;
    dy[0] = y[0] * cos(t);
    dy[1] = T(-2) * t * y[1] * y[1];
    dy[2] = y[2] * (T(1) - y[2]);
  }
};

template <class T>
Vec<T, kD> exact(T t) {
  const double s = double(t);
  Vec<T, kD> y;
  y[0] = T(std::exp(std::sin(s)));
  y[1] = T(1.0 / (1.0 + s * s));
  y[2] = T(1.0 / (1.0 + 9.0 * std::exp(-s)));
  return y;
}

constexpr double kT = 1.0;
using Errors = std::array<double, kD>;

template <class T>
Errors errors_of(const Vec<T, kD>& y) {
  const Vec<double, kD> ref = exact(kT);
  Errors e;
  for (int c = 0; c < kD; ++c) e[c] = std::abs(double(y[c]) - ref[c]);
  return e;
}

// Component-wise global errors at kT after n fixed steps.
template <class T = double>
Errors rk4_errors(int n) {
  TestOde f;
  Vec<T, kD> y = exact(T(0)), k;
  const T h = T(kT) / T(n);
  T t = T(0);
  for (int i = 0; i < n; ++i) {
    f(t, y, k);
    y = rk4_step(f, t, y, k, h);
    t = T(i + 1) * h;
  }
  EXPECT_EQ(f.evaluations, 4 * n);  // k1 passed in, three more stages per step
  return errors_of(y);
}

Errors dopri5_errors(int n) {
  TestOde f;
  Vec<double, kD> y = exact(0.0), k, ynew, knew;
  f(0.0, y, k);
  const double h = kT / n;
  double t = 0.0;
  for (int i = 0; i < n; ++i) {
    dopri5_step(f, t, y, k, h, 0.0, 1.0, ynew, knew);
    y = ynew;
    k = knew;  // FSAL: k7 = f(t + h, y_new)
    t = (i + 1) * h;
  }
  EXPECT_EQ(f.evaluations, 1 + 6 * n);  // six new stages per step (FSAL)
  return errors_of(y);
}

template <class F>
void expect_order(F errors, int n_first, int n_last, double p, double slack) {
  Errors prev = errors(n_first);
  for (int n = 2 * n_first; n <= n_last; n *= 2) {
    const Errors e = errors(n);
    for (int c = 0; c < kD; ++c) {
      EXPECT_NEAR(std::log2(prev[c] / e[c]), p, slack)
          << "component " << c << ", N = " << n / 2 << " -> " << n << ": " << prev[c] << " -> "
          << e[c];
    }
    prev = e;
  }
}

TEST(Rk4, FourthOrderConvergence) {
  expect_order([](int n) { return rk4_errors(n); }, 16, 256, 4.0, 0.3);
  const Errors e = rk4_errors(256);
  EXPECT_LT(*std::max_element(e.begin(), e.end()), 1e-11);
}

TEST(Dopri5, FifthOrderConvergence) {
  expect_order(dopri5_errors, 8, 64, 5.0, 0.3);
  const Errors e = dopri5_errors(64);
  EXPECT_LT(*std::max_element(e.begin(), e.end()), 1e-12);
}

// Float: the order shows while truncation (1e-4 .. 1e-5 at N = 2, 4) dominates float rounding.
TEST(Rk4, FourthOrderConvergenceFloat) {
  const Errors e2 = rk4_errors<float>(2), e4 = rk4_errors<float>(4);
  for (int c = 0; c < kD; ++c) EXPECT_NEAR(std::log2(e2[c] / e4[c]), 4.0, 0.6) << c;
}

TEST(Dopri5, EmbeddedErrorEstimateIsFifthOrderLocal) {
  TestOde f;
  const double t0 = 0.1;
  const Vec<double, kD> y0 = exact(t0);
  Vec<double, kD> k0, y, k7;
  f(t0, y0, k0);
  double prev = dopri5_step(f, t0, y0, k0, 0.2, 0.0, 1.0, y, k7);
  double last_h = 0.0;
  for (double h = 0.1; h > 0.01; h /= 2) {
    last_h = h;
    const double est = dopri5_step(f, t0, y0, k0, h, 0.0, 1.0, y, k7);
    EXPECT_NEAR(std::log2(prev / est), 5.0, 0.3) << "h = " << h;
    // The estimate is of the 4th-order solution's local error: it exceeds the 5th-order one's.
    const Vec<double, kD> ref = exact(t0 + h);
    double true_err = 0.0;
    for (int c = 0; c < kD; ++c) true_err += (y[c] - ref[c]) * (y[c] - ref[c]);
    true_err = std::sqrt(true_err / kD);
    EXPECT_LT(true_err, est);
    prev = est;
  }
  // k7 is f at the new point (first same as last).
  Vec<double, kD> check;
  f(t0 + last_h, y, check);
  for (int c = 0; c < kD; ++c) EXPECT_EQ(check[c], k7[c]);
}

// The error norm is the RMS of err_i / (atol + rtol max(|x_i|, |y_i|)).
TEST(Dopri5, ErrorNormScaling) {
  TestOde f;
  const Vec<double, kD> y0 = exact(0.0);
  Vec<double, kD> k0, y, k7;
  f(0.0, y0, k0);
  const double raw = dopri5_step(f, 0.0, y0, k0, 0.1, 0.0, 1.0, y, k7);
  const double half = dopri5_step(f, 0.0, y0, k0, 0.1, 0.0, 2.0, y, k7);
  EXPECT_DOUBLE_EQ(half, raw / 2);
  // Relative scaling is also linear in 1/rtol, and adding both can only shrink the norm.
  const double relative = dopri5_step(f, 0.0, y0, k0, 0.1, 1.0, 0.0, y, k7);
  const double relative2 = dopri5_step(f, 0.0, y0, k0, 0.1, 4.0, 0.0, y, k7);
  EXPECT_DOUBLE_EQ(relative2, relative / 4);
  const double both = dopri5_step(f, 0.0, y0, k0, 0.1, 1.0, 1.0, y, k7);
  EXPECT_LT(both, std::min(raw, relative));
  EXPECT_GT(both, 0.0);
}

TEST(Dopri5, StepFactor) {
  // fac = 0.9 err^(-1/5), clamped to [fac_min, fac_max].
  EXPECT_DOUBLE_EQ(step_factor<4>(1.0, 0.2, 10.0), 0.9);
  EXPECT_NEAR(step_factor<4>(1.0 / 32, 0.2, 10.0), 1.8, 1e-15);
  EXPECT_NEAR(step_factor<4>(32.0, 0.2, 10.0), 0.45, 1e-15);
  EXPECT_EQ(step_factor<4>(1e-30, 0.2, 10.0), 10.0);  // clamped above
  EXPECT_EQ(step_factor<4>(1e10, 0.2, 10.0), 0.2);    // clamped below
  EXPECT_EQ(step_factor<4>(0.0, 0.2, 5.0), 5.0);      // exact step: grow maximally
  EXPECT_EQ(step_factor<4>(std::nan(""), 0.2, 5.0), 0.2);
  EXPECT_EQ(step_factor<4>(std::numeric_limits<double>::infinity(), 0.2, 5.0), 0.2);
  EXPECT_FLOAT_EQ(step_factor<4>(1.0f, 0.2f, 10.0f), 0.9f);
  // RODAS4's estimate is of order 3: fac = 0.9 err^(-1/4).
  EXPECT_NEAR(step_factor<3>(1.0 / 16, 0.2, 10.0), 1.8, 1e-15);
  EXPECT_NEAR(step_factor<3>(16.0, 0.2, 10.0), 0.45, 1e-15);
}

// The Butcher tableau's consistency conditions: rows of A sum to c, weights sum to 1, and the
// error weights (5th minus 4th order) sum to 0.
TEST(Dopri5, TableauConsistency) {
  using namespace dopri5;
  EXPECT_NEAR(a21, c2, 1e-16);
  EXPECT_NEAR(a31 + a32, c3, 1e-16);
  EXPECT_NEAR(a41 + a42 + a43, c4, 1e-15);
  EXPECT_NEAR(a51 + a52 + a53 + a54, c5, 1e-14);
  EXPECT_NEAR(a61 + a62 + a63 + a64 + a65, 1.0, 1e-14);
  EXPECT_NEAR(a71 + a73 + a74 + a75 + a76, 1.0, 1e-15);
  EXPECT_NEAR(e1 + e3 + e4 + e5 + e6 + e7, 0.0, 1e-16);
}

}  // namespace
}  // namespace ukes
