// The forward-mode AD type of kernels/autodiff/jet.hpp against closed-form derivatives and finite
// differences, in double and float. Jet<T, N> carries two things, tested apart and together:
//  - the value c0 and its gradient with respect to N seeded inputs;
//  - Taylor coefficients (c0, c1, c2) of g(s) = f(x(s)) for x(s) = x0 + v s + w s^2,
//    i.e. c0 = g(0), c1 = g'(0), c2 = g''(0) / 2, with g'(0) = f'(x0) v and
//    g''(0) = f''(x0) v^2 + 2 f'(x0) w;
// and whether the gradient can be nonzero at all (`varies`), which decides the work done.
#include "kernels/autodiff/jet.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace ukes {
namespace {

// Relative-or-absolute closeness: |a - b| <= tol * max(1, |b|).
#define EXPECT_CLOSE(a, b, tol)                                                        \
  EXPECT_LE(std::abs(double(a) - double(b)), (tol)*std::max(1.0, std::abs(double(b)))) \
      << #a << " = " << double(a) << " vs " << #b << " = " << double(b)

// ---------------------------------------------------------------- gradient: elementary operations

template <class T>
void dual_elementary(double tol) {
  using D = Jet<T, 2>;
  const T x0 = T(0.7), y0 = T(-1.3);
  const D x = D::variable(x0, 0), y = D::variable(y0, 1);
  EXPECT_EQ(x.c0, x0);
  EXPECT_EQ(x.gradient(0), T(1));
  EXPECT_EQ(x.gradient(1), T(0));

  D r = x + y;
  EXPECT_CLOSE(r.c0, x0 + y0, tol);
  EXPECT_CLOSE(r.gradient(0), 1, tol);
  EXPECT_CLOSE(r.gradient(1), 1, tol);
  r = x - y;
  EXPECT_CLOSE(r.c0, x0 - y0, tol);
  EXPECT_CLOSE(r.gradient(0), 1, tol);
  EXPECT_CLOSE(r.gradient(1), -1, tol);
  r = -x;
  EXPECT_CLOSE(r.c0, -x0, tol);
  EXPECT_CLOSE(r.gradient(0), -1, tol);
  EXPECT_CLOSE(r.gradient(1), 0, tol);
  r = x * y;
  EXPECT_CLOSE(r.c0, x0 * y0, tol);
  EXPECT_CLOSE(r.gradient(0), y0, tol);
  EXPECT_CLOSE(r.gradient(1), x0, tol);
  r = x / y;  // d/dx = 1/y, d/dy = -x/y^2
  EXPECT_CLOSE(r.c0, x0 / y0, tol);
  EXPECT_CLOSE(r.gradient(0), 1 / double(y0), tol);
  EXPECT_CLOSE(r.gradient(1), -double(x0) / (double(y0) * double(y0)), tol);
  r = sin(x);
  EXPECT_CLOSE(r.c0, std::sin(double(x0)), tol);
  EXPECT_CLOSE(r.gradient(0), std::cos(double(x0)), tol);
  EXPECT_CLOSE(r.gradient(1), 0, tol);
  r = cos(y);
  EXPECT_CLOSE(r.c0, std::cos(double(y0)), tol);
  EXPECT_CLOSE(r.gradient(1), -std::sin(double(y0)), tol);
  r = exp(y);
  EXPECT_CLOSE(r.c0, std::exp(double(y0)), tol);
  EXPECT_CLOSE(r.gradient(1), std::exp(double(y0)), tol);
  r = sqrt(x);
  EXPECT_CLOSE(r.c0, std::sqrt(double(x0)), tol);
  EXPECT_CLOSE(r.gradient(0), 0.5 / std::sqrt(double(x0)), tol);

  // Mixed with plain numbers of several arithmetic types, on either side.
  r = x + 2;
  EXPECT_CLOSE(r.c0, double(x0) + 2, tol);
  EXPECT_CLOSE(r.gradient(0), 1, tol);
  r = 2.5 - x;
  EXPECT_CLOSE(r.c0, 2.5 - double(x0), tol);
  EXPECT_CLOSE(r.gradient(0), -1, tol);
  r = x - 1.5f;
  EXPECT_CLOSE(r.c0, double(x0) - 1.5, tol);
  EXPECT_CLOSE(r.gradient(0), 1, tol);
  r = 3 * y;
  EXPECT_CLOSE(r.c0, 3 * double(y0), tol);
  EXPECT_CLOSE(r.gradient(1), 3, tol);
  r = y * 0.5;
  EXPECT_CLOSE(r.gradient(1), 0.5, tol);
  r = x / 4;
  EXPECT_CLOSE(r.c0, double(x0) / 4, tol);
  EXPECT_CLOSE(r.gradient(0), 0.25, tol);
  r = 2.0 / x;  // d/dx = -2 / x^2
  EXPECT_CLOSE(r.c0, 2 / double(x0), tol);
  EXPECT_CLOSE(r.gradient(0), -2 / (double(x0) * double(x0)), tol);
  r = 1 + x;
  EXPECT_CLOSE(r.c0, 1 + double(x0), tol);

  // Constants carry no derivative, and say so.
  const D c(T(3));
  EXPECT_FALSE(c.varies);
  EXPECT_EQ(c.gradient(0), T(0));
  EXPECT_EQ(c.gradient(1), T(0));
  EXPECT_TRUE(x.varies);
  EXPECT_EQ(value_of(x), x0);
  EXPECT_EQ(value_of(T(2)), T(2));
}

TEST(JetGradient, ElementaryDouble) {
  dual_elementary<double>(4 * std::numeric_limits<double>::epsilon());
}
TEST(JetGradient, ElementaryFloat) {
  dual_elementary<float>(4 * std::numeric_limits<float>::epsilon());
}

// ---------------------------------------------------------------- gradient: a composite function

// f(x, y, z) = sin(x y) / sqrt(1 + z^2) + exp(-x) cos(y) - 3 x / y + 2 z^2
double f_plain(double x, double y, double z) {
  return std::sin(x * y) / std::sqrt(1 + z * z) + std::exp(-x) * std::cos(y) - 3 * x / y +
         2 * z * z;
}
template <class S>
S f_ad(const S& x, const S& y, const S& z) {
  return sin(x * y) / sqrt(1 + z * z) + exp(-x) * cos(y) - 3 * x / y + 2 * z * z;
}
// Closed-form gradient.
void f_grad(double x, double y, double z, double g[3]) {
  const double r = std::sqrt(1 + z * z);
  g[0] = y * std::cos(x * y) / r - std::exp(-x) * std::cos(y) - 3 / y;
  g[1] = x * std::cos(x * y) / r - std::exp(-x) * std::sin(y) + 3 * x / (y * y);
  g[2] = -std::sin(x * y) * z / (r * r * r) + 4 * z;
}

TEST(JetGradient, CompositeGradientMatchesClosedFormAndFiniteDifferences) {
  const double pts[][3] = {{0.3, 1.7, -0.4}, {-1.2, 0.5, 2.0}, {2.5, -0.8, 0.0}, {0.01, 3.0, 1.0}};
  for (const auto& p : pts) {
    using D = Jet<double, 3>;
    const D r = f_ad(D::variable(p[0], 0), D::variable(p[1], 1), D::variable(p[2], 2));
    double g[3];
    f_grad(p[0], p[1], p[2], g);
    EXPECT_CLOSE(r.c0, f_plain(p[0], p[1], p[2]), 1e-15);
    for (int k = 0; k < 3; ++k) {
      EXPECT_CLOSE(r.gradient(k), g[k], 1e-14);
      // Central difference, h = 1e-5: truncation ~ h^2 f''' ~ 1e-10, rounding ~ eps / h ~ 1e-11.
      double a[3] = {p[0], p[1], p[2]}, b[3] = {p[0], p[1], p[2]};
      const double h = 1e-5;
      a[k] += h;
      b[k] -= h;
      const double fd = (f_plain(a[0], a[1], a[2]) - f_plain(b[0], b[1], b[2])) / (2 * h);
      EXPECT_CLOSE(r.gradient(k), fd, 1e-8);
    }
    // Float: same gradient to float accuracy (condition of the expression is modest here).
    using F = Jet<float, 3>;
    const F rf =
        f_ad(F::variable(float(p[0]), 0), F::variable(float(p[1]), 1), F::variable(float(p[2]), 2));
    for (int k = 0; k < 3; ++k) EXPECT_CLOSE(rf.gradient(k), g[k], 2e-5);
  }
}

// ---------------------------------------------------------------- Taylor coefficients

// Taylor coefficients of g(s) = f(x0 + v s + w s^2) from f, f', f''.
struct Taylor {
  double c0, c1, c2;
};
Taylor along(double f, double f1, double f2, double v, double w) {
  return {f, f1 * v, 0.5 * (f2 * v * v + 2 * f1 * w)};
}

template <class T>
void expect_jet(const Jet<T, 0>& j, const Taylor& t, double tol, const char* what) {
  SCOPED_TRACE(what);
  EXPECT_CLOSE(j.c0, t.c0, tol);
  EXPECT_CLOSE(j.c1, t.c1, tol);
  EXPECT_CLOSE(j.c2, t.c2, tol);
}

template <class T>
void jet_elementary(double tol) {
  using J = Jet<T, 0>;
  const double x0 = 0.8, v = -1.7, w = 0.45;
  const J x{T(x0), T(v), T(w)};
  const double y0 = -0.6, vy = 0.9, wy = -0.3;
  const J y{T(y0), T(vy), T(wy)};

  expect_jet(sin(x), along(std::sin(x0), std::cos(x0), -std::sin(x0), v, w), tol, "sin");
  expect_jet(cos(x), along(std::cos(x0), -std::sin(x0), -std::cos(x0), v, w), tol, "cos");
  expect_jet(exp(x), along(std::exp(x0), std::exp(x0), std::exp(x0), v, w), tol, "exp");
  const double r = std::sqrt(x0);
  expect_jet(sqrt(x), along(r, 0.5 / r, -0.25 / (r * r * r), v, w), tol, "sqrt");
  expect_jet(-x, along(-x0, -1, 0, v, w), tol, "neg");
  expect_jet(x * T(3), along(3 * x0, 3, 0, v, w), tol, "times literal");
  expect_jet(2 - x, along(2 - x0, -1, 0, v, w), tol, "literal minus");
  expect_jet(x + 1.5, along(x0 + 1.5, 1, 0, v, w), tol, "plus literal");
  expect_jet(x - 1, along(x0 - 1, 1, 0, v, w), tol, "minus literal");
  expect_jet(x / 2, along(x0 / 2, 0.5, 0, v, w), tol, "over literal");
  // 1 / x: f' = -1/x^2, f'' = 2/x^3.
  expect_jet(1.0 / x, along(1 / x0, -1 / (x0 * x0), 2 / (x0 * x0 * x0), v, w), tol, "inverse");
  // x * x: f' = 2x, f'' = 2.
  expect_jet(x * x, along(x0 * x0, 2 * x0, 2, v, w), tol, "square");

  // Products and quotients of two jets: (a b)'' = a'' b + 2 a' b' + a b''.
  const double a0 = x0, a1 = v, a2 = 2 * w, b0 = y0, b1 = vy, b2 = 2 * wy;  // g, g', g''
  const J p = x * y;
  EXPECT_CLOSE(p.c0, a0 * b0, tol);
  EXPECT_CLOSE(p.c1, a1 * b0 + a0 * b1, tol);
  EXPECT_CLOSE(p.c2, 0.5 * (a2 * b0 + 2 * a1 * b1 + a0 * b2), tol);
  const J s = x + y, d = x - y;
  EXPECT_CLOSE(s.c2, w + wy, tol);
  EXPECT_CLOSE(d.c1, v - vy, tol);
  // q = a / b: q' = (a' - q b') / b, q'' = (a'' - 2 q' b' - q b'') / b.
  const J q = x / y;
  const double q0 = a0 / b0, q1 = (a1 - q0 * b1) / b0, q2 = (a2 - 2 * q1 * b1 - q0 * b2) / b0;
  EXPECT_CLOSE(q.c0, q0, tol);
  EXPECT_CLOSE(q.c1, q1, tol);
  EXPECT_CLOSE(q.c2, 0.5 * q2, tol);

  EXPECT_EQ(value_of(x), T(x0));
  const J c(T(5));
  EXPECT_EQ(c.c1, T(0));
  EXPECT_EQ(c.c2, T(0));
}

TEST(JetTaylor, ElementaryDouble) {
  jet_elementary<double>(8 * std::numeric_limits<double>::epsilon());
}
TEST(JetTaylor, ElementaryFloat) {
  jet_elementary<float>(16 * std::numeric_limits<float>::epsilon());
}

// The composite f along a curve in R^3, against central finite differences of g(s):
// g'(0) ~ (g(h) - g(-h)) / 2h, g''(0) ~ (g(h) - 2 g(0) + g(-h)) / h^2 with h = 1e-4
// (truncation ~ h^2 ~ 1e-8, rounding ~ eps / h^2 ~ 2e-8 for g''), and against the chain rule
// through the closed-form gradient for c1.
TEST(JetTaylor, CompositeAlongCurveMatchesFiniteDifferences) {
  const double x0[3] = {0.3, 1.7, -0.4}, v[3] = {1.1, -0.6, 0.8}, w[3] = {-0.2, 0.3, 0.5};
  using J = Jet<double, 0>;
  const J r = f_ad(J(x0[0], v[0], w[0]), J(x0[1], v[1], w[1]), J(x0[2], v[2], w[2]));
  auto g = [&](double s) {
    double p[3];
    for (int k = 0; k < 3; ++k) p[k] = x0[k] + v[k] * s + w[k] * s * s;
    return f_plain(p[0], p[1], p[2]);
  };
  const double h = 1e-4;
  EXPECT_CLOSE(r.c0, g(0), 1e-15);
  EXPECT_CLOSE(r.c1, (g(h) - g(-h)) / (2 * h), 1e-7);
  EXPECT_CLOSE(2 * r.c2, (g(h) - 2 * g(0) + g(-h)) / (h * h), 1e-6);
  double grad[3];
  f_grad(x0[0], x0[1], x0[2], grad);
  EXPECT_CLOSE(r.c1, grad[0] * v[0] + grad[1] * v[1] + grad[2] * v[2], 1e-14);

  // The same in float, against the double result.
  using JF = Jet<float, 0>;
  const JF rf =
      f_ad(JF(float(x0[0]), float(v[0]), float(w[0])), JF(float(x0[1]), float(v[1]), float(w[1])),
           JF(float(x0[2]), float(v[2]), float(w[2])));
  EXPECT_CLOSE(rf.c0, r.c0, 1e-5);
  EXPECT_CLOSE(rf.c1, r.c1, 1e-5);
  EXPECT_CLOSE(rf.c2, r.c2, 1e-5);
}

// The two parts agree the way constraint_form uses them: the second coefficient of a function
// along (q + s qd, t + s) equals qd^T H qd / 2 + ..., checked here on f(x, y) = x^2 y
// (Hessian [[2y, 2x], [2x, 0]]), and c1 is the gradient times the direction.
TEST(JetTaylor, QuadraticFormOfHessian) {
  const double x = 1.3, y = -0.7, vx = 0.4, vy = 2.1;
  using J = Jet<double, 0>;
  const J r = J(x, vx, 0.0) * J(x, vx, 0.0) * J(y, vy, 0.0);
  const double hess_q = 2 * y * vx * vx + 2 * 2 * x * vx * vy;  // v^T H v
  EXPECT_CLOSE(2 * r.c2, hess_q, 1e-15);
  using D = Jet<double, 2>;
  const D g = D::variable(x, 0) * D::variable(x, 0) * D::variable(y, 1);
  EXPECT_CLOSE(r.c1, g.gradient(0) * vx + g.gradient(1) * vy, 1e-15);
}

// One evaluation with seeds that both vary and move gives the gradient and the Taylor
// coefficients each as if computed alone: what constraint_form's single pass relies on.
TEST(Jet, GradientAndTaylorCoefficientsInOnePass) {
  const double x0[3] = {0.3, 1.7, -0.4}, v[3] = {1.1, -0.6, 0.8}, w[3] = {-0.2, 0.3, 0.5};
  using J = Jet<double, 3>;
  const J r = f_ad(J::variable(x0[0], 0, v[0], w[0]), J::variable(x0[1], 1, v[1], w[1]),
                   J::variable(x0[2], 2, v[2], w[2]));
  using T0 = Jet<double, 0>;
  const T0 taylor = f_ad(T0(x0[0], v[0], w[0]), T0(x0[1], v[1], w[1]), T0(x0[2], v[2], w[2]));
  using G = Jet<double, 3>;
  const G grad = f_ad(G::variable(x0[0], 0), G::variable(x0[1], 1), G::variable(x0[2], 2));
  EXPECT_EQ(r.c0, taylor.c0);
  EXPECT_EQ(r.c1, taylor.c1);
  EXPECT_EQ(r.c2, taylor.c2);
  double g[3];
  f_grad(x0[0], x0[1], x0[2], g);
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(r.gradient(k), grad.gradient(k));
    EXPECT_CLOSE(r.gradient(k), g[k], 1e-14);
  }
}

// Activity: a jet varies exactly when some seeded input reaches it, whatever the operation, and a
// jet that does not vary reports a zero gradient. Velocity rows seed qd only, so their subterms
// of q alone (moving along the motion, with c1 != 0) must not vary, and the row must.
TEST(Jet, VariesExactlyWhenASeedReachesIt) {
  using J = Jet<double, 2>;
  const J x = J::variable(0.7, 0), y = J::variable(-1.3, 1);
  const J q(0.4, 1.5, 0.0);  // moves, but is no input of the gradient
  const J c(2.0);
  auto check = [](const J& r, bool varies, const char* what) {
    SCOPED_TRACE(what);
    EXPECT_EQ(r.varies, varies);
    if (!varies) {
      EXPECT_EQ(r.gradient(0), 0.0);
      EXPECT_EQ(r.gradient(1), 0.0);
    }
  };
  check(q + c, false, "q + c");
  check(q * q - c / q, false, "q q - c / q");
  check(sin(q) + cos(q) + exp(q) + sqrt(q), false, "elementary functions of q");
  check(2.0 * q - 1 + q / 3.0 - 4.0 / q, false, "q with literals");
  check(-q, false, "-q");
  check(x + q, true, "x + q");
  check(q - y, true, "q - y");
  check(q * x, true, "q x");
  check(q / y, true, "q / y");
  check(x / q, true, "x / q");
  check(sqrt(q * q) * y, true, "sqrt(q q) y");
  check(3.0 - x, true, "3 - x");

  // The gradient of a mixed expression sees the non-varying part as a constant: d/dx of
  // sin(q) x^2 + q / y is (2 sin(q) x, -q / y^2), whatever q's motion.
  const J r = sin(q) * x * x + q / y;
  EXPECT_CLOSE(r.gradient(0), 2 * std::sin(0.4) * 0.7, 1e-15);
  EXPECT_CLOSE(r.gradient(1), -0.4 / (1.3 * 1.3), 1e-15);
  // Its motion coefficient comes from q alone (x and y do not move): cos(q) q' x^2 + q' / y.
  EXPECT_CLOSE(r.c1, std::cos(0.4) * 1.5 * 0.49 + 1.5 / -1.3, 1e-15);
}

// ---------------------------------------------------------------- the expression language's
// functions

// A function of one variable, written once for plain numbers and jets.
struct Unary {
  const char* name;
  double (*plain)(double);
  Jet<double, 0> (*taylor)(const Jet<double, 0>&);
  Jet<double, 1> (*dual)(const Jet<double, 1>&);
  double x0;  // a point of its domain, away from kinks
};
#define UKES_UNARY(f, x0)                                                                        \
  Unary {                                                                                        \
#f, [](double x) { return double(f(x)); },                                                   \
                                            [](const Jet <double, 0>&                            \
                                                   x) { return f(x); },                          \
                                                                     [](const Jet <double, 1>&   \
                                                                            x) { return f(x); }, \
                                                                                              x0 \
  }

// g(s) = f(x0 + v s + w s^2): c1 = g'(0), c2 = g''(0) / 2 by central differences (h = 1e-4:
// truncation ~ h^2, rounding of the second difference ~ eps / h^2 ~ 2e-8), and the gradient by
// a central difference of f.
template <class F>
void expect_matches_differences(F f, double x0, double v, double w, double c0, double c1, double c2,
                                double gradient) {
  const double h = 1e-4;
  const auto g = [&](double s) { return f(x0 + v * s + w * s * s); };
  EXPECT_CLOSE(c0, g(0), 1e-15);
  EXPECT_CLOSE(c1, (g(h) - g(-h)) / (2 * h), 1e-7);
  EXPECT_CLOSE(2 * c2, (g(h) - 2 * g(0) + g(-h)) / (h * h), 2e-6);
  EXPECT_CLOSE(gradient, (f(x0 + h) - f(x0 - h)) / (2 * h), 1e-7);
}

TEST(JetFunctions, EveryUnaryFunctionMatchesFiniteDifferences) {
  const Unary functions[] = {UKES_UNARY(sin, 0.7),  UKES_UNARY(cos, -1.1),  UKES_UNARY(tan, 0.4),
                             UKES_UNARY(asin, 0.3), UKES_UNARY(acos, -0.6), UKES_UNARY(atan, 1.7),
                             UKES_UNARY(sinh, 0.8), UKES_UNARY(cosh, -0.9), UKES_UNARY(tanh, 0.5),
                             UKES_UNARY(exp, -0.3), UKES_UNARY(log, 2.2),   UKES_UNARY(sqrt, 1.9),
                             UKES_UNARY(abs, -1.4), UKES_UNARY(abs, 0.6),   UKES_UNARY(sign, -0.4)};
  const double v = 0.9, w = -0.35;
  for (const Unary& f : functions) {
    SCOPED_TRACE(std::string(f.name) + " at " + std::to_string(f.x0));
    const Jet<double, 0> t = f.taylor(Jet<double, 0>(f.x0, v, w));
    const Jet<double, 1> d = f.dual(Jet<double, 1>::variable(f.x0, 0));
    expect_matches_differences(f.plain, f.x0, v, w, t.c0, t.c1, t.c2, d.gradient(0));
    EXPECT_EQ(d.c0, f.plain(f.x0));
  }
}

// A function of two variables, written once for plain numbers and jets.
struct Binary {
  const char* name;
  double (*plain)(double, double);
  Jet<double, 0> (*taylor)(const Jet<double, 0>&, const Jet<double, 0>&);
  Jet<double, 2> (*dual)(const Jet<double, 2>&, const Jet<double, 2>&);
  double a0, b0;
};
#define UKES_BINARY(f, a0, b0)                                                                \
  Binary {                                                                                    \
#f, [](double a, double b) { return double(f(a, b)); },                                     \
        [](const Jet<double, 0>& a, const Jet<double, 0>& b) { return Jet<double, 0>(f(a, b)); }, \
        [](const Jet<double, 2>& a, const Jet<double, 2>& b) { return Jet<double, 2>(f(a, b)); }, \
        a0, b0 \
  }

// Both arguments move along the curve; the gradient is checked by partial differences.
TEST(JetFunctions, EveryBinaryFunctionMatchesFiniteDifferences) {
  const Binary functions[] = {UKES_BINARY(atan2, 0.7, -1.2),   UKES_BINARY(atan2, -0.4, 0.9),
                              UKES_BINARY(pow, 1.6, 0.7),      UKES_BINARY(pow, 0.8, -2.3),
                              UKES_BINARY(hypot, 0.5, -1.3),   UKES_BINARY(jet_min, 0.4, 0.9),
                              UKES_BINARY(jet_min, 1.1, -0.2), UKES_BINARY(jet_max, 0.4, 0.9),
                              UKES_BINARY(jet_max, 1.1, -0.2)};
  const double va = 0.6, wa = -0.25, vb = -0.8, wb = 0.4, h = 1e-4;
  for (const Binary& f : functions) {
    SCOPED_TRACE(std::string(f.name) + " at (" + std::to_string(f.a0) + ", " +
                 std::to_string(f.b0) + ")");
    const Jet<double, 0> t = f.taylor(Jet<double, 0>(f.a0, va, wa), Jet<double, 0>(f.b0, vb, wb));
    using D = Jet<double, 2>;
    const D d = f.dual(D::variable(f.a0, 0), D::variable(f.b0, 1));
    const auto g = [&](double s) {
      return f.plain(f.a0 + va * s + wa * s * s, f.b0 + vb * s + wb * s * s);
    };
    EXPECT_EQ(t.c0, f.plain(f.a0, f.b0));
    EXPECT_EQ(d.c0, f.plain(f.a0, f.b0));
    EXPECT_CLOSE(t.c1, (g(h) - g(-h)) / (2 * h), 1e-7);
    EXPECT_CLOSE(2 * t.c2, (g(h) - 2 * g(0) + g(-h)) / (h * h), 2e-6);
    EXPECT_CLOSE(d.gradient(0), (f.plain(f.a0 + h, f.b0) - f.plain(f.a0 - h, f.b0)) / (2 * h),
                 1e-7);
    EXPECT_CLOSE(d.gradient(1), (f.plain(f.a0, f.b0 + h) - f.plain(f.a0, f.b0 - h)) / (2 * h),
                 1e-7);
  }
}

// One argument constant: the other's derivatives alone, and the gradient only where a seed is.
TEST(JetFunctions, BinaryFunctionsWithOneConstantArgument) {
  using D = Jet<double, 2>;
  const D x = D::variable(0.8, 0), c(1.7);
  for (const D& r : {atan2(x, c), atan2(c, x), pow(x, c), pow(c, x), hypot(x, c), hypot(c, x)}) {
    EXPECT_TRUE(r.varies);
    EXPECT_EQ(r.gradient(1), 0.0);
  }
  EXPECT_CLOSE(pow(c, x).gradient(0), std::pow(1.7, 0.8) * std::log(1.7), 1e-15);
  EXPECT_CLOSE(pow(x, c).gradient(0), 1.7 * std::pow(0.8, 0.7), 1e-15);
  EXPECT_CLOSE(atan2(c, x).gradient(0), -1.7 / (1.7 * 1.7 + 0.64), 1e-15);
  EXPECT_FALSE(pow(c, c).varies);
}

// A constant exponent takes the power rule, which holds at 0 and for negative bases where
// exp(b log a) does not: d/dx x^2 = 2x, d/dx x^3 = 3 x^2.
TEST(JetFunctions, PowerWithAConstantExponent) {
  using J = Jet<double, 1>;
  const J zero = pow(J::variable(0.0, 0, 1.5, 0.0), J(2.0));
  EXPECT_EQ(zero.c0, 0.0);
  EXPECT_EQ(zero.c1, 0.0);
  EXPECT_EQ(zero.c2, 1.5 * 1.5);  // (v s)^2 = v^2 s^2
  EXPECT_EQ(zero.gradient(0), 0.0);
  const J cube = pow(J::variable(-2.0, 0), J(3.0));
  EXPECT_EQ(cube.c0, -8.0);
  EXPECT_CLOSE(cube.gradient(0), 12.0, 1e-15);
  const J one = pow(J::variable(0.0, 0, 1.0, 0.0), J(1.0));
  EXPECT_EQ(one.gradient(0), 1.0);
  EXPECT_EQ(one.c2, 0.0);  // no 0 * inf from x^(b - 2)
  const J constant = pow(J::variable(0.0, 0), J(0.0));
  EXPECT_EQ(constant.c0, 1.0);
  EXPECT_FALSE(constant.varies);
}

// Kinks (docs/MODEL_FORMAT.md): abs'(0) = 0, sign' = 0, min and max take the first operand on a
// tie, hypot has no derivative at the origin.
TEST(JetFunctions, KinksTakeTheDocumentedDerivatives) {
  using J = Jet<double, 2>;
  const J x = J::variable(0.0, 0, 2.0, 1.0), y = J::variable(0.0, 1, -1.0, 0.5);
  const J a = abs(x);
  EXPECT_EQ(a.c0, 0.0);
  EXPECT_EQ(a.c1, 0.0);
  EXPECT_EQ(a.c2, 0.0);
  EXPECT_EQ(a.gradient(0), 0.0);
  EXPECT_EQ(abs(J::variable(-3.0, 0, 2.0, 1.0)).gradient(0), -1.0);
  EXPECT_EQ(abs(J::variable(-3.0, 0, 2.0, 1.0)).c1, -2.0);
  for (double at : {-2.0, 0.0, 3.0}) {
    const J s = sign(J::variable(at, 0, 1.0, 1.0));
    EXPECT_EQ(s.c0, at < 0 ? -1.0 : at > 0 ? 1.0 : 0.0);
    EXPECT_EQ(s.c1, 0.0);
    EXPECT_EQ(s.c2, 0.0);
    EXPECT_FALSE(s.varies);
  }
  EXPECT_EQ(jet_min(x, y).gradient(0), 1.0);  // tie: the first operand
  EXPECT_EQ(jet_min(x, y).c1, 2.0);
  EXPECT_EQ(jet_max(x, y).gradient(0), 1.0);
  EXPECT_EQ(jet_max(x, y).gradient(1), 0.0);
  EXPECT_EQ(jet_min(2.0, 2.0), 2.0);
  EXPECT_EQ(jet_max(-1.0, 3.0), 3.0);
  const J h = hypot(x, y);
  EXPECT_EQ(h.c0, 0.0);
  EXPECT_EQ(h.c1, 0.0);
  EXPECT_EQ(h.gradient(0), 0.0);
  EXPECT_EQ(h.gradient(1), 0.0);
}

// Float jets of the new functions agree with double ones to float accuracy.
TEST(JetFunctions, FloatAgreesWithDouble) {
  using F = Jet<float, 1>;
  using D = Jet<double, 1>;
  const F xf = F::variable(0.45f, 0, 0.7f, -0.2f);
  const D xd = D::variable(0.45, 0, 0.7, -0.2);
  const F rf = tan(xf) + asin(xf) * acos(xf) + atan(xf) + sinh(xf) * cosh(xf) + tanh(xf) +
               log(F(2.0f) + xf) + pow(F(1.5f) + xf, xf) + atan2(xf, F(0.3f)) + hypot(xf, F(1.0f));
  const D rd = tan(xd) + asin(xd) * acos(xd) + atan(xd) + sinh(xd) * cosh(xd) + tanh(xd) +
               log(D(2.0) + xd) + pow(D(1.5) + xd, xd) + atan2(xd, D(0.3)) + hypot(xd, D(1.0));
  EXPECT_CLOSE(rf.c0, rd.c0, 1e-5);
  EXPECT_CLOSE(rf.c1, rd.c1, 1e-5);
  EXPECT_CLOSE(rf.c2, rd.c2, 1e-5);
  EXPECT_CLOSE(rf.gradient(0), rd.gradient(0), 1e-5);
}

// ---------------------------------------------------------------- the language's functions at
// several points each, against derivatives written out by hand (in other forms than jet.hpp's)
// and finite differences, in double and float. Each argument is itself a product of two seeded
// inputs moving along a curve, so the chain rule, the gradient's two entries and the Taylor
// coefficients are checked in one jet.

// Finite-difference steps: h1 for first derivatives (truncation ~ h1^2 f''', rounding ~ eps / h1),
// h2 for the second difference (truncation ~ h2^2 f'''', rounding ~ eps / h2^2).
constexpr double kH1 = 1e-6, kH2 = 1e-4;

// A value the C++ compiler cannot see: references and jets then both call the library at run
// time (a call folded at compile time is correctly rounded; the library's need not be).
double unfolded(double value) {
  volatile double hidden = value;
  return hidden;
}

// The argument u = x y of every function below: x = x0 + v s + w s^2 (input 0) and
// y = 1 + vy s + wy s^2 (input 1), so u(0) = x0 exactly, u' = v + x0 vy, u''/2 = w + v vy + x0 wy
// and grad u = (1, x0).
constexpr double kV = 0.9, kW = -0.35, kVy = 0.3, kWy = -0.2;

template <class T>
Jet<T, 2> product_argument(double x0) {
  using J = Jet<T, 2>;
  return J::variable(T(x0), 0, T(kV), T(kW)) * J::variable(T(1), 1, T(kVy), T(kWy));
}
double product_at(double x0, double s) {
  return (x0 + kV * s + kW * s * s) * (1 + kVy * s + kWy * s * s);
}

struct OneVariable {
  const char* name;
  double (*f)(double);
  float (*f_float)(float);
  double (*f1)(double);  // by hand
  double (*f2)(double);
  Jet<double, 2> (*jet)(const Jet<double, 2>&);
  Jet<float, 2> (*jet_float)(const Jet<float, 2>&);
  std::vector<double> points;
};

#define UKES_STD_AND_JETS(fn) \
  [](double x) { return std::fn(x); }, [](float x) { return std::fn(x); }

#define UKES_JETS(fn) \
  [](const Jet<double, 2>& a) { return fn(a); }, [](const Jet<float, 2>& a) { return fn(a); }

double signum(double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0; }

std::vector<OneVariable> one_variable_functions() {
  return {
      {"tan",
       UKES_STD_AND_JETS(tan),
       [](double x) { return 1 / (std::cos(x) * std::cos(x)); },
       [](double x) { return 2 * std::sin(x) / std::pow(std::cos(x), 3); },
       UKES_JETS(tan),
       {-1.2, -0.3, 0.4, 1.3}},
      {"asin",
       UKES_STD_AND_JETS(asin),
       [](double x) { return std::pow(1 - x * x, -0.5); },
       [](double x) { return x * std::pow(1 - x * x, -1.5); },
       UKES_JETS(asin),
       {-0.9, -0.2, 0.5, 0.95}},
      {"acos",
       UKES_STD_AND_JETS(acos),
       [](double x) { return -std::pow(1 - x * x, -0.5); },
       [](double x) { return -x * std::pow(1 - x * x, -1.5); },
       UKES_JETS(acos),
       {-0.95, -0.1, 0.6, 0.9}},
      {"atan",
       UKES_STD_AND_JETS(atan),
       [](double x) { return 1 / (1 + x * x); },
       [](double x) { return -2 * x / ((1 + x * x) * (1 + x * x)); },
       UKES_JETS(atan),
       {-3.0, -0.5, 0.2, 1.7}},
      {"sinh",
       UKES_STD_AND_JETS(sinh),
       [](double x) { return 0.5 * (std::exp(x) + std::exp(-x)); },
       [](double x) { return 0.5 * (std::exp(x) - std::exp(-x)); },
       UKES_JETS(sinh),
       {-2.0, -0.4, 0.8, 3.0}},
      {"cosh",
       UKES_STD_AND_JETS(cosh),
       [](double x) { return 0.5 * (std::exp(x) - std::exp(-x)); },
       [](double x) { return 0.5 * (std::exp(x) + std::exp(-x)); },
       UKES_JETS(cosh),
       {-2.5, -0.9, 0.3, 1.5}},
      {"tanh",
       UKES_STD_AND_JETS(tanh),
       [](double x) { return std::pow(std::cosh(x), -2); },
       [](double x) { return -2 * std::sinh(x) / std::pow(std::cosh(x), 3); },
       UKES_JETS(tanh),
       {-2.0, -0.3, 0.5, 1.2}},
      {"log",
       UKES_STD_AND_JETS(log),
       [](double x) { return 1 / x; },
       [](double x) { return -1 / (x * x); },
       UKES_JETS(log),
       {0.1, 0.7, 2.2, 40.0}},
      {"abs",
       UKES_STD_AND_JETS(abs),
       [](double x) { return signum(x); },
       [](double) { return 0.0; },
       UKES_JETS(abs),
       {-1.4, -0.2, 0.6, 3.0}},
      {"sign",
       [](double x) { return signum(x); },
       [](float x) { return x > 0   ? 1.0f
                            : x < 0 ? -1.0f
                                    : 0.0f; },
       [](double) { return 0.0; },
       [](double) { return 0.0; },
       UKES_JETS(sign),
       {-0.4, -3.0, 0.25, 2.0}},
  };
}

TEST(JetNewFunctions, OneVariableAgainstHandDerivativesAndDifferences) {
  for (const OneVariable& fn : one_variable_functions()) {
    for (const double point : fn.points) {
      const double x0 = unfolded(point);
      SCOPED_TRACE(std::string(fn.name) + " at " + std::to_string(x0));
      const Jet<double, 2> r = fn.jet(product_argument<double>(x0));
      const double u1 = kV + x0 * kVy, u2 = kW + kV * kVy + x0 * kWy;
      const double f1 = fn.f1(x0), f2 = fn.f2(x0);
      // The value is the library's, to the bit.
      EXPECT_EQ(r.c0, fn.f(x0));
      // Chain rule with the hand-written derivatives.
      EXPECT_CLOSE(r.c1, f1 * u1, 1e-13);
      EXPECT_CLOSE(r.c2, f1 * u2 + 0.5 * f2 * u1 * u1, 1e-13);
      EXPECT_CLOSE(r.gradient(0), f1, 1e-13);
      EXPECT_CLOSE(r.gradient(1), f1 * x0, 1e-13);
      // Finite differences of g(s) = f(u(s)) and of f(x y) in x and y.
      const auto g = [&](double s) { return fn.f(product_at(x0, s)); };
      EXPECT_CLOSE(r.c1, (g(kH1) - g(-kH1)) / (2 * kH1), 1e-7);
      EXPECT_CLOSE(2 * r.c2, (g(kH2) - 2 * g(0) + g(-kH2)) / (kH2 * kH2), 1e-5);
      EXPECT_CLOSE(r.gradient(0), (fn.f(x0 + kH1) - fn.f(x0 - kH1)) / (2 * kH1), 1e-7);
      EXPECT_CLOSE(r.gradient(1), (fn.f(x0 * (1 + kH1)) - fn.f(x0 * (1 - kH1))) / (2 * kH1), 1e-7);
      // Float: the library's float value, and the derivatives to float accuracy.
      const Jet<float, 2> rf = fn.jet_float(product_argument<float>(x0));
      const float xf = float(x0);
      EXPECT_EQ(rf.c0, fn.f_float(xf));
      const double xd = double(xf), u1f = kV + xd * kVy, u2f = kW + kV * kVy + xd * kWy;
      EXPECT_CLOSE(rf.c1, fn.f1(xd) * u1f, 2e-5);
      EXPECT_CLOSE(rf.c2, fn.f1(xd) * u2f + 0.5 * fn.f2(xd) * u1f * u1f, 2e-5);
      EXPECT_CLOSE(rf.gradient(0), fn.f1(xd), 2e-5);
      EXPECT_CLOSE(rf.gradient(1), fn.f1(xd) * xd, 2e-5);
    }
  }
}

// sign is flat, and says so: its result does not vary, whatever its argument does.
TEST(JetNewFunctions, SignAwayFromZeroIsAConstant) {
  for (double x0 : {-2.5, -1e-300, 1e-300, 0.75}) {
    const Jet<double, 2> s = sign(product_argument<double>(x0));
    EXPECT_EQ(s.c0, x0 < 0 ? -1.0 : 1.0);
    EXPECT_FALSE(s.varies);
    EXPECT_EQ(s.c1, 0.0);
    EXPECT_EQ(s.c2, 0.0);
  }
  // abs just off 0 takes the side's derivative.
  EXPECT_EQ(abs(Jet<double, 1>::variable(-1e-300, 0, 2.0, 1.0)).gradient(0), -1.0);
  EXPECT_EQ(abs(Jet<double, 1>::variable(1e-300, 0, 2.0, 1.0)).c1, 2.0);
}

// f(a, b) with its hand-written partials fa, fb, faa, fab, fbb.
struct TwoVariables {
  const char* name;
  double (*f)(double, double);
  float (*f_float)(float, float);
  void (*partials)(double a, double b, double p[5]);
  Jet<double, 2> (*jet)(const Jet<double, 2>&, const Jet<double, 2>&);
  Jet<float, 2> (*jet_float)(const Jet<float, 2>&, const Jet<float, 2>&);
  std::vector<std::pair<double, double>> points;
};

#define UKES_STD_AND_JETS2(fn)                                                   \
  [](double a, double b) { return std::fn(a, b); },                              \
      [](float a, float b) { return std::fn(a, b); }, UKES_PARTIALS_##fn,        \
      [](const Jet<double, 2>& a, const Jet<double, 2>& b) { return fn(a, b); }, \
      [](const Jet<float, 2>& a, const Jet<float, 2>& b) { return fn(a, b); }

// atan2(a, b) = the angle of (b, a): d/da = b / r^2, d/db = -a / r^2.
#define UKES_PARTIALS_atan2                                    \
  [](double a, double b, double p[5]) {                        \
    const double r2 = a * a + b * b;                           \
    p[0] = b / r2;                                             \
    p[1] = -a / r2;                                            \
    p[2] = -2 * a * b / (r2 * r2);                             \
    p[3] = 1 / r2 - 2 * b * b / (r2 * r2); /* d/db (b / r2) */ \
    p[4] = 2 * a * b / (r2 * r2);                              \
  }
#define UKES_PARTIALS_hypot                    \
  [](double a, double b, double p[5]) {        \
    const double h = std::sqrt(a * a + b * b); \
    p[0] = a / h;                              \
    p[1] = b / h;                              \
    p[2] = (h * h - a * a) / (h * h * h);      \
    p[3] = -a * b / (h * h * h);               \
    p[4] = (h * h - b * b) / (h * h * h);      \
  }
// a^b = exp(b log a).
#define UKES_PARTIALS_pow                                        \
  [](double a, double b, double p[5]) {                          \
    const double f = std::exp(b * std::log(a)), l = std::log(a); \
    p[0] = f * b / a;                                            \
    p[1] = f * l;                                                \
    p[2] = f * b * (b - 1) / (a * a);                            \
    p[3] = f / a + f * b * l / a;                                \
    p[4] = f * l * l;                                            \
  }

std::vector<TwoVariables> two_variable_functions() {
  return {
      {"atan2",
       UKES_STD_AND_JETS2(atan2),
       {{0.5, 1.0}, {0.5, -1.0}, {-0.5, -1.0}, {-0.5, 1.0}, {2.0, 0.1}, {-0.3, -4.0}}},
      {"hypot", UKES_STD_AND_JETS2(hypot), {{0.5, -1.3}, {-2.0, 0.1}, {3.0, 4.0}, {-0.2, -0.7}}},
      {"pow", UKES_STD_AND_JETS2(pow), {{1.6, 0.7}, {0.8, -2.3}, {2.5, 3.0}, {0.3, 0.5}}},
  };
}

// a = (a0, va, wa) on input 0, b = (b0, vb, wb) on input 1.
constexpr double kVa = 0.6, kWa = -0.25, kVb = -0.8, kWb = 0.4;

TEST(JetNewFunctions, TwoVariablesAgainstHandDerivativesAndDifferences) {
  for (const TwoVariables& fn : two_variable_functions()) {
    for (const auto& point : fn.points) {
      const double a0 = unfolded(point.first), b0 = unfolded(point.second);
      SCOPED_TRACE(std::string(fn.name) + " at " + std::to_string(a0) + ", " + std::to_string(b0));
      using J = Jet<double, 2>;
      const J r = fn.jet(J::variable(a0, 0, kVa, kWa), J::variable(b0, 1, kVb, kWb));
      double p[5];
      fn.partials(a0, b0, p);
      EXPECT_EQ(r.c0, fn.f(a0, b0));
      EXPECT_CLOSE(r.gradient(0), p[0], 1e-13);
      EXPECT_CLOSE(r.gradient(1), p[1], 1e-13);
      EXPECT_CLOSE(r.c1, p[0] * kVa + p[1] * kVb, 1e-13);
      EXPECT_CLOSE(r.c2,
                   p[0] * kWa + p[1] * kWb +
                       0.5 * (p[2] * kVa * kVa + 2 * p[3] * kVa * kVb + p[4] * kVb * kVb),
                   1e-13);
      const auto g = [&](double s) {
        return fn.f(a0 + kVa * s + kWa * s * s, b0 + kVb * s + kWb * s * s);
      };
      EXPECT_CLOSE(r.c1, (g(kH1) - g(-kH1)) / (2 * kH1), 1e-7);
      EXPECT_CLOSE(2 * r.c2, (g(kH2) - 2 * g(0) + g(-kH2)) / (kH2 * kH2), 1e-5);
      EXPECT_CLOSE(r.gradient(0), (fn.f(a0 + kH1, b0) - fn.f(a0 - kH1, b0)) / (2 * kH1), 1e-7);
      EXPECT_CLOSE(r.gradient(1), (fn.f(a0, b0 + kH1) - fn.f(a0, b0 - kH1)) / (2 * kH1), 1e-7);
      // Float.
      using F = Jet<float, 2>;
      const float af = float(a0), bf = float(b0);
      const F rf = fn.jet_float(F::variable(af, 0, float(kVa), float(kWa)),
                                F::variable(bf, 1, float(kVb), float(kWb)));
      EXPECT_EQ(rf.c0, fn.f_float(af, bf));
      fn.partials(double(af), double(bf), p);
      EXPECT_CLOSE(rf.gradient(0), p[0], 2e-5);
      EXPECT_CLOSE(rf.gradient(1), p[1], 2e-5);
      EXPECT_CLOSE(rf.c1, p[0] * kVa + p[1] * kVb, 2e-5);
    }
  }
}

// pow with a constant exponent: the power rule, also for negative bases and exponents, against
// hand derivatives e a^(e-1), e (e-1) a^(e-2) and differences along the curve.
TEST(JetNewFunctions, PowerWithConstantExponents) {
  const struct {
    double a0, e;
  } cases[] = {{1.3, 2.5}, {0.7, -1.5},  {2.0, 0.5},   {-1.7, 3.0}, {-1.3, 2.0},
               {0.9, 1.0}, {-2.2, -1.0}, {3.1, -0.25}, {-0.6, 4.0}};
  using J = Jet<double, 2>;
  for (auto c : cases) {
    c.a0 = unfolded(c.a0);
    c.e = unfolded(c.e);
    SCOPED_TRACE(std::to_string(c.a0) + " ^ " + std::to_string(c.e));
    const J r = pow(J::variable(c.a0, 0, kVa, kWa), J(c.e));
    const double f1 = c.e * std::pow(c.a0, c.e) / c.a0;
    const double f2 = c.e * (c.e - 1) * std::pow(c.a0, c.e) / (c.a0 * c.a0);
    EXPECT_EQ(r.c0, std::pow(c.a0, c.e));
    EXPECT_TRUE(r.varies);
    EXPECT_CLOSE(r.gradient(0), f1, 1e-13);
    EXPECT_EQ(r.gradient(1), 0.0);
    EXPECT_CLOSE(r.c1, f1 * kVa, 1e-13);
    EXPECT_CLOSE(r.c2, f1 * kWa + 0.5 * f2 * kVa * kVa, 1e-13);
    const auto g = [&](double s) { return std::pow(c.a0 + kVa * s + kWa * s * s, c.e); };
    EXPECT_CLOSE(r.c1, (g(kH1) - g(-kH1)) / (2 * kH1), 1e-7);
    EXPECT_CLOSE(2 * r.c2, (g(kH2) - 2 * g(0) + g(-kH2)) / (kH2 * kH2), 1e-5);
    // A constant base to a constant power is a constant.
    EXPECT_FALSE(pow(J(c.a0), J(c.e)).varies);
    // Float.
    using F = Jet<float, 2>;
    const float af = float(c.a0), ef = float(c.e);
    const F rf = pow(F::variable(af, 0, float(kVa), float(kWa)), F(ef));
    EXPECT_EQ(rf.c0, std::pow(af, ef));
    const double ad = double(af);
    EXPECT_CLOSE(rf.c1, c.e * std::pow(ad, c.e) / ad * kVa, 2e-5);
  }
}

// An exponent that moves without being seeded (a velocity row's subterm of q): the general rule,
// with the exponent's motion in c1 and c2 but not in the gradient.
TEST(JetNewFunctions, PowerWithAMovingExponent) {
  using J = Jet<double, 2>;
  for (const auto& point : {std::pair{1.6, 0.7}, std::pair{0.4, -1.2}, std::pair{2.5, 2.0}}) {
    const double a0 = unfolded(point.first), b0 = unfolded(point.second);
    SCOPED_TRACE(std::to_string(a0) + " ^ " + std::to_string(b0));
    const J r = pow(J::variable(a0, 0, kVa, kWa), J(b0, kVb, kWb));
    const double f = std::pow(a0, b0), l = std::log(a0);
    const double fa = b0 * f / a0, fb = f * l, faa = b0 * (b0 - 1) * f / (a0 * a0),
                 fab = f / a0 * (1 + b0 * l), fbb = f * l * l;
    EXPECT_EQ(r.c0, f);
    EXPECT_CLOSE(r.gradient(0), fa, 1e-13);
    EXPECT_EQ(r.gradient(1), 0.0);
    EXPECT_CLOSE(r.c1, fa * kVa + fb * kVb, 1e-13);
    EXPECT_CLOSE(
        r.c2, fa * kWa + fb * kWb + 0.5 * (faa * kVa * kVa + 2 * fab * kVa * kVb + fbb * kVb * kVb),
        1e-13);
    // A constant base to a seeded power: d/db a^b = a^b log a.
    const J q = pow(J(a0), J::variable(b0, 1, kVb, kWb));
    EXPECT_CLOSE(q.gradient(1), fb, 1e-13);
    EXPECT_EQ(q.gradient(0), 0.0);
    EXPECT_CLOSE(q.c1, fb * kVb, 1e-13);
    EXPECT_CLOSE(q.c2, fb * kWb + 0.5 * fbb * kVb * kVb, 1e-13);
  }
}

}  // namespace
}  // namespace ukes
