// The Taylor-series arithmetic of kernels/autodiff/taylor.hpp against closed-form series and
// identities between functions, and its Dual tangents against central differences. A series
// x(s) = sum c_k s^k; a function's series along it is what a controller reads derivatives from
// (k-th derivative = k! c_k), so every coefficient through K is checked.
#include "kernels/autodiff/taylor.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <type_traits>

namespace ukes {
namespace {

constexpr int kK = 4;
using Series = Taylor<double, kK>;
using DualSeries = Taylor<Dual<double>, kK>;

// x(s) = x0 + x1 s (+ x2 s^2): a line or a parabola through x0.
Series curve(double x0, double x1, double x2 = 0.0) {
  Series x(x0);
  x.set(1, x1);
  x.set(2, x2);
  return x;
}

double factorial(int k) { return k <= 1 ? 1.0 : k * factorial(k - 1); }

void expect_series(const Series& got, const std::function<double(int)>& want, double tol,
                   const char* what) {
  for (int k = 0; k <= kK; ++k)
    EXPECT_NEAR(got.coefficient(k), want(k), tol * std::max(1.0, std::abs(want(k))))
        << what << " c" << k;
}

void expect_same(const Series& a, const Series& b, double tol, const char* what) {
  expect_series(
      a, [&](int k) { return b.coefficient(k); }, tol, what);
}

TEST(Taylor, ElementaryFunctionsOfALineHaveTheirClosedFormSeries) {
  const double a = 0.7, b = -1.3;
  const Series x = curve(a, b);
  // d^k/ds^k f(a + b s) = b^k f^(k)(a).
  expect_series(
      exp(x), [&](int k) { return std::exp(a) * std::pow(b, k) / factorial(k); }, 1e-14, "exp");
  expect_series(
      sin(x), [&](int k) { return std::sin(a + k * M_PI / 2) * std::pow(b, k) / factorial(k); },
      1e-14, "sin");
  expect_series(
      cos(x), [&](int k) { return std::cos(a + k * M_PI / 2) * std::pow(b, k) / factorial(k); },
      1e-14, "cos");
  expect_series(
      sinh(x),
      [&](int k) { return (k % 2 ? std::cosh(a) : std::sinh(a)) * std::pow(b, k) / factorial(k); },
      1e-14, "sinh");
  expect_series(
      cosh(x),
      [&](int k) { return (k % 2 ? std::sinh(a) : std::cosh(a)) * std::pow(b, k) / factorial(k); },
      1e-14, "cosh");
  // log(a + b s) = log a - sum (-b/a)^k / k; sqrt and a^e by the binomial series.
  expect_series(
      log(x), [&](int k) { return k == 0 ? std::log(a) : -std::pow(-b / a, k) / k; }, 1e-14, "log");
  const auto binomial = [&](double e, int k) {
    double c = 1.0;
    for (int j = 0; j < k; ++j) c *= (e - j) / (j + 1);
    return c * std::pow(a, e - k) * std::pow(b, k);
  };
  expect_series(
      sqrt(x), [&](int k) { return binomial(0.5, k); }, 1e-14, "sqrt");
  expect_series(
      pow(x, Series(2.5)), [&](int k) { return binomial(2.5, k); }, 1e-13, "pow 2.5");
  expect_series(
      pow(x, Series(-1.5)), [&](int k) { return binomial(-1.5, k); }, 1e-13, "pow -1.5");
  expect_series(
      1.0 / x, [&](int k) { return binomial(-1.0, k); }, 1e-14, "1/x");
}

TEST(Taylor, EveryFunctionAgreesWithItsInverseOrAnIdentity) {
  const Series x = curve(0.4, 0.9, -0.35);
  const Series s = sin(x), c = cos(x);
  expect_same(s * s + c * c, Series(1.0), 1e-14, "sin^2 + cos^2");
  expect_same(tan(x), s / c, 1e-14, "tan");
  expect_same(cosh(x) * cosh(x) - sinh(x) * sinh(x), Series(1.0), 1e-13, "cosh^2 - sinh^2");
  expect_same(tanh(x), sinh(x) / cosh(x), 1e-14, "tanh");
  expect_same(log(exp(x)), x, 1e-14, "log exp");
  expect_same(sqrt(x) * sqrt(x), x, 1e-14, "sqrt^2");
  expect_same(asin(s), x, 1e-13, "asin sin");
  expect_same(acos(c), x, 1e-13, "acos cos");
  expect_same(atan(tan(x)), x, 1e-13, "atan tan");
  const Series r = curve(1.7, -0.4, 0.2);
  for (const double shift : {0.0, 2.0, -2.9}) {  // every quadrant of atan2
    const Series angle = x + Series(shift);
    expect_same(atan2(r * sin(angle), r * cos(angle)), angle, 1e-13, "atan2");
  }
  expect_same(hypot(r * cos(x), r * sin(x)), r, 1e-13, "hypot");
  expect_same(pow(x, Series(3.0)), x * x * x, 1e-14, "pow 3");
  expect_same(pow(x, r), exp(r * log(x)), 1e-13, "pow of a moving exponent");
  expect_same(abs(-x), x, 0.0, "abs");
  expect_same(sign(-x), Series(-1.0), 0.0, "sign");
  // A whole exponent at zero: x^2 of s is s^2.
  expect_same(pow(curve(0.0, 1.0), Series(2.0)), curve(0.0, 0.0, 1.0), 0.0, "pow at zero");
}

// Each coefficient's tangent is its derivative along the seeded start: against central differences
// of the plain series, for a function of every kind.
TEST(Taylor, DualTangentsAreDerivativesOfEveryCoefficient) {
  const auto f = [](const auto& x) {
    return atan2(sin(x) * exp(x * 0.3), sqrt(x * x + 1.0)) +
           pow(x, std::decay_t<decltype(x)>(2.5)) / (log(x) + 3.0);
  };
  const double x0 = 0.8, x1 = 0.6, h = 1e-5;
  DualSeries xd(Dual<double>(x0, 1.0));  // tangent along x0
  xd.set(1, Dual<double>(x1, 0.0));
  const DualSeries fd = f(xd);
  const Series plus = f(curve(x0 + h, x1)), minus = f(curve(x0 - h, x1));
  for (int k = 0; k <= kK; ++k) {
    const double central = (plus.coefficient(k) - minus.coefficient(k)) / (2 * h);
    EXPECT_NEAR(fd.coefficient(k).d, central, 1e-7 * std::max(1.0, std::abs(central))) << "c" << k;
    EXPECT_NEAR(fd.coefficient(k).v, f(curve(x0, x1)).coefficient(k), 1e-15) << "c" << k;
  }
}

// Pass k of a motion's series knows its inputs through order k only (Taylor::order): every
// result is then known, and computed, through k, and agrees there with the whole series.
TEST(Taylor, ATruncatedSeriesKeepsTheCoefficientsItKnows) {
  const auto f = [](const auto& x) {
    using X = std::decay_t<decltype(x)>;
    return sin(x) * exp(x) / (x * x + 1.0) + atan2(x, X(2.0)) + sqrt(x) * log(x) - pow(x, X(1.5)) +
           tanh(x) * 0.5;
  };
  Series whole = curve(0.4, 0.9, -0.35);
  whole.set(3, 0.2);
  for (int order = 0; order <= kK; ++order) {
    Series cut = whole;
    cut.order = order;
    const Series a = f(whole), b = f(cut);
    EXPECT_EQ(b.order, order);
    for (int k = 0; k <= order; ++k) EXPECT_NEAR(b.coefficient(k), a.coefficient(k), 1e-15) << k;
  }
  // A constant times a series: one product per coefficient, the series' top kept.
  const Series scaled = Series(3.0) * whole;
  EXPECT_EQ(scaled.top, 3);
  for (int k = 0; k <= kK; ++k) EXPECT_EQ(scaled.coefficient(k), 3.0 * whole.coefficient(k));
}

TEST(Taylor, FloatSeriesFollowTheDoubleOnes) {
  Taylor<float, kK> x(0.6f);
  x.set(1, 1.1f);
  const Series xd = curve(0.6, 1.1);
  const auto f = [](const auto& v) { return sin(v) * exp(v) / (v + 2.0f); };
  const auto g = f(x);
  const Series want = sin(xd) * exp(xd) / (xd + 2.0);
  for (int k = 0; k <= kK; ++k) EXPECT_NEAR(g.coefficient(k), want.coefficient(k), 2e-6) << k;
}

}  // namespace
}  // namespace ukes
