// Taylor-mode automatic differentiation: truncated power series, usable on host and device.
//
// Taylor<S, K> holds x(s) = c[0] + c[1] s + ... + c[K] s^K, the series of a quantity along a
// curve, truncated after s^K; every operation returns the series of its result to the same order.
// Evaluating a model's mass matrix and forces on the series of a motion gives their series along
// it, which is how a controller differentiates a servo row as often as the actuators' input
// needs (kernels/uk/servo_derivatives.hpp): the row's k-th derivative is k! c[k].
//
// The coefficients S are plain numbers, or Dual<T>: a value with one directional derivative, so
// that the same evaluation also yields how each coefficient changes when the curve's starting
// point moves along a chosen direction (how the input enters the highest derivative).
//
// The recurrences are the classical ones of Taylor-series arithmetic (Griewank & Walther,
// "Evaluating Derivatives", 2nd ed., SIAM 2008, ch. 13): products by convolution, quotients and
// square roots by back substitution, exp and the sin/cos and sinh/cosh pairs from their linear
// differential equations, and every other function f by integrating f'(x(s)) x'(s). The
// operations are those of the model expression language (docs/MODEL_FORMAT.md); tests/autodiff
// checks each against closed-form series.
#pragma once

#include <type_traits>

#include "kernels/autodiff/dual.hpp"
#include "kernels/autodiff/jet.hpp"

namespace ukes {

// Whether a coefficient is exactly zero, tangent included.
template <class T>
UKES_HD UKES_INLINE bool exactly_zero(T x) {
  return x == T(0);
}
template <class T>
UKES_HD UKES_INLINE bool exactly_zero(const Dual<T>& x) {
  return x.v == T(0) && x.d == T(0);
}

// ---------------------------------------------------------------- Taylor series
// Two bounds keep the work to what is known and nonzero: coefficients through `order` are the
// series' (a result is known only as far as every operand is: a motion's series grows one order
// per pass, kernels/uk/servo_derivatives.hpp), and those above `top` are zero (constants have top
// 0, so a parameter times a series costs one product per coefficient). Operations read c[k] only
// through top (coefficient(k) is zero above it); the array starts zeroed all the same, so that a
// series is never copied with unset numbers in it.
template <class S, int K>
struct Taylor {
  static_assert(K >= 0, "a series keeps at least its value");
  S c[K + 1] = {};
  int order = K;
  int top = 0;

  UKES_HD Taylor() { c[0] = S(0); }
  // A constant: its value, no higher coefficients.
  UKES_HD Taylor(const S& value) { c[0] = value; }  // NOLINT: constants promote implicitly
  template <class U, std::enable_if_t<std::is_arithmetic_v<U> && !std::is_same_v<U, S>, int> = 0>
  UKES_HD Taylor(U value) : Taylor(S(value)) {}  // NOLINT

  UKES_HD S coefficient(int k) const { return k <= top ? c[k] : S(0); }
  // Sets coefficient k (k <= K), those between the old top and k to zero.
  UKES_HD void set(int k, const S& value) {
    for (int j = top + 1; j < k; ++j) c[j] = S(0);
    c[k] = value;
    if (k > top) top = k;
  }
};

template <class S, int K>
UKES_HD UKES_INLINE auto value_of(const Taylor<S, K>& x) {
  return value_of(x.c[0]);
}

namespace taylor_detail {

template <class S, int K>
UKES_HD UKES_INLINE Taylor<S, K> empty(int order, int top) {
  Taylor<S, K> r;
  r.order = order;
  r.top = top < order ? top : order;
  return r;
}
UKES_HD UKES_INLINE int lesser(int a, int b) { return a < b ? a : b; }

}  // namespace taylor_detail

template <class S, int K>
UKES_HD UKES_INLINE Taylor<S, K> operator-(const Taylor<S, K>& a) {
  Taylor<S, K> r = taylor_detail::empty<S, K>(a.order, a.top);
  for (int k = 0; k <= r.top; ++k) r.c[k] = -a.c[k];
  return r;
}
template <class S, int K>
UKES_HD UKES_INLINE Taylor<S, K> operator+(const Taylor<S, K>& a, const Taylor<S, K>& b) {
  Taylor<S, K> r = taylor_detail::empty<S, K>(taylor_detail::lesser(a.order, b.order),
                                              a.top > b.top ? a.top : b.top);
  for (int k = 0; k <= r.top; ++k) r.c[k] = a.coefficient(k) + b.coefficient(k);
  return r;
}
template <class S, int K>
UKES_HD UKES_INLINE Taylor<S, K> operator-(const Taylor<S, K>& a, const Taylor<S, K>& b) {
  Taylor<S, K> r = taylor_detail::empty<S, K>(taylor_detail::lesser(a.order, b.order),
                                              a.top > b.top ? a.top : b.top);
  for (int k = 0; k <= r.top; ++k) r.c[k] = a.coefficient(k) - b.coefficient(k);
  return r;
}
template <class S, int K>
UKES_HD UKES_INLINE Taylor<S, K> operator*(const Taylor<S, K>& a, const Taylor<S, K>& b) {
  Taylor<S, K> r =
      taylor_detail::empty<S, K>(taylor_detail::lesser(a.order, b.order), a.top + b.top);
  for (int k = 0; k <= r.top; ++k) {
    const int first = k - b.top > 0 ? k - b.top : 0, last = k < a.top ? k : a.top;
    S sum = S(0);
    for (int j = first; j <= last; ++j) sum = sum + a.c[j] * b.c[k - j];
    r.c[k] = sum;
  }
  return r;
}
template <class S, int K>
UKES_HD UKES_INLINE Taylor<S, K> operator/(const Taylor<S, K>& a, const Taylor<S, K>& b) {
  const int order = taylor_detail::lesser(a.order, b.order);
  Taylor<S, K> r = taylor_detail::empty<S, K>(order, b.top == 0 ? a.top : order);
  for (int k = 0; k <= r.top; ++k) {
    S sum = a.coefficient(k);
    for (int j = k - b.top > 0 ? k - b.top : 0; j < k; ++j) sum = sum - r.c[j] * b.c[k - j];
    r.c[k] = sum / b.c[0];
  }
  return r;
}
template <class S, int K>
UKES_HD UKES_INLINE Taylor<S, K>& operator+=(Taylor<S, K>& a, const Taylor<S, K>& b) {
  return a = a + b;
}
template <class S, int K>
UKES_HD UKES_INLINE Taylor<S, K>& operator-=(Taylor<S, K>& a, const Taylor<S, K>& b) {
  return a = a - b;
}

// Plain numbers mix with series as constants.
template <class S, int K, class U, std::enable_if_t<std::is_arithmetic_v<U>, int> = 0>
UKES_HD UKES_INLINE Taylor<S, K> operator+(const Taylor<S, K>& a, U b) {
  return a + Taylor<S, K>(b);
}
template <class S, int K, class U, std::enable_if_t<std::is_arithmetic_v<U>, int> = 0>
UKES_HD UKES_INLINE Taylor<S, K> operator+(U a, const Taylor<S, K>& b) {
  return Taylor<S, K>(a) + b;
}
template <class S, int K, class U, std::enable_if_t<std::is_arithmetic_v<U>, int> = 0>
UKES_HD UKES_INLINE Taylor<S, K> operator-(const Taylor<S, K>& a, U b) {
  return a - Taylor<S, K>(b);
}
template <class S, int K, class U, std::enable_if_t<std::is_arithmetic_v<U>, int> = 0>
UKES_HD UKES_INLINE Taylor<S, K> operator-(U a, const Taylor<S, K>& b) {
  return Taylor<S, K>(a) - b;
}
template <class S, int K, class U, std::enable_if_t<std::is_arithmetic_v<U>, int> = 0>
UKES_HD UKES_INLINE Taylor<S, K> operator*(const Taylor<S, K>& a, U b) {
  return a * Taylor<S, K>(b);
}
template <class S, int K, class U, std::enable_if_t<std::is_arithmetic_v<U>, int> = 0>
UKES_HD UKES_INLINE Taylor<S, K> operator*(U a, const Taylor<S, K>& b) {
  return b * a;
}
template <class S, int K, class U, std::enable_if_t<std::is_arithmetic_v<U>, int> = 0>
UKES_HD UKES_INLINE Taylor<S, K> operator/(const Taylor<S, K>& a, U b) {
  return a / Taylor<S, K>(b);
}
template <class S, int K, class U, std::enable_if_t<std::is_arithmetic_v<U>, int> = 0>
UKES_HD UKES_INLINE Taylor<S, K> operator/(U a, const Taylor<S, K>& b) {
  return Taylor<S, K>(a) / b;
}

namespace taylor_detail {

// f(a) of a constant a: a constant, known as far as a is.
template <class S, int K>
UKES_HD UKES_INLINE Taylor<S, K> constant(const S& value, int order) {
  Taylor<S, K> r(value);
  r.order = order;
  return r;
}

// x'(s) as a series, known one order less than x.
template <class S, int K>
UKES_HD UKES_INLINE Taylor<S, K> derivative(const Taylor<S, K>& a) {
  Taylor<S, K> r = empty<S, K>(a.order > 0 ? a.order - 1 : 0, a.top > 0 ? a.top - 1 : 0);
  for (int k = 0; k <= r.top; ++k) r.c[k] = a.coefficient(k + 1) * S(k + 1);
  return r;
}

// The series with value f0 and derivative series g, through `order`: f_k = g_{k-1} / k.
template <class S, int K>
UKES_HD UKES_INLINE Taylor<S, K> integral(const S& f0, const Taylor<S, K>& g, int order) {
  Taylor<S, K> r = empty<S, K>(order, order);
  r.c[0] = f0;
  for (int k = 1; k <= r.top; ++k) r.c[k] = g.coefficient(k - 1) / S(k);
  return r;
}

// The pair (f, g) with f' = g x' and g' = sign_g f x': sin/cos (sign_g = -1) and sinh/cosh (+1),
// from their values at x(0), through x's order.
template <class S, int K>
struct SeriesPair {
  Taylor<S, K> f, g;
};
template <class S, int K>
UKES_HD UKES_INLINE SeriesPair<S, K> trig_pair(const Taylor<S, K>& a, const S& f0, const S& g0,
                                               int sign_g) {
  if (a.top == 0) return {constant<S, K>(f0, a.order), constant<S, K>(g0, a.order)};
  SeriesPair<S, K> r{empty<S, K>(a.order, a.order), empty<S, K>(a.order, a.order)};
  r.f.c[0] = f0;
  r.g.c[0] = g0;
  for (int k = 1; k <= a.order; ++k) {
    S fk = S(0), gk = S(0);
    for (int j = 1; j <= (k < a.top ? k : a.top); ++j) {
      const S ja = a.c[j] * S(j);
      fk = fk + ja * r.g.c[k - j];
      gk = gk + ja * r.f.c[k - j];
    }
    r.f.c[k] = fk / S(k);
    r.g.c[k] = (sign_g > 0 ? gk : -gk) / S(k);
  }
  return r;
}

}  // namespace taylor_detail

template <class S, int K>
UKES_HD UKES_INLINE Taylor<S, K> sin(const Taylor<S, K>& a) {
  return taylor_detail::trig_pair(a, sin(a.c[0]), cos(a.c[0]), -1).f;
}
template <class S, int K>
UKES_HD UKES_INLINE Taylor<S, K> cos(const Taylor<S, K>& a) {
  return taylor_detail::trig_pair(a, sin(a.c[0]), cos(a.c[0]), -1).g;
}
template <class S, int K>
UKES_HD UKES_INLINE Taylor<S, K> tan(const Taylor<S, K>& a) {
  return sin(a) / cos(a);
}
template <class S, int K>
UKES_HD UKES_INLINE Taylor<S, K> sinh(const Taylor<S, K>& a) {
  return taylor_detail::trig_pair(a, sinh(a.c[0]), cosh(a.c[0]), 1).f;
}
template <class S, int K>
UKES_HD UKES_INLINE Taylor<S, K> cosh(const Taylor<S, K>& a) {
  return taylor_detail::trig_pair(a, sinh(a.c[0]), cosh(a.c[0]), 1).g;
}
template <class S, int K>
UKES_HD UKES_INLINE Taylor<S, K> tanh(const Taylor<S, K>& a) {
  return sinh(a) / cosh(a);
}
template <class S, int K>
UKES_HD UKES_INLINE Taylor<S, K> exp(const Taylor<S, K>& a) {
  if (a.top == 0) return taylor_detail::constant<S, K>(exp(a.c[0]), a.order);
  Taylor<S, K> e = taylor_detail::empty<S, K>(a.order, a.order);  // e' = e x'
  e.c[0] = exp(a.c[0]);
  for (int k = 1; k <= e.top; ++k) {
    S sum = S(0);
    for (int j = 1; j <= (k < a.top ? k : a.top); ++j) sum = sum + a.c[j] * S(j) * e.c[k - j];
    e.c[k] = sum / S(k);
  }
  return e;
}
template <class S, int K>
UKES_HD UKES_INLINE Taylor<S, K> sqrt(const Taylor<S, K>& a) {
  if (a.top == 0) return taylor_detail::constant<S, K>(sqrt(a.c[0]), a.order);
  Taylor<S, K> r = taylor_detail::empty<S, K>(a.order, a.order);  // r^2 = a
  r.c[0] = sqrt(a.c[0]);
  for (int k = 1; k <= r.top; ++k) {
    S sum = a.coefficient(k);
    for (int j = 1; j < k; ++j) sum = sum - r.c[j] * r.c[k - j];
    r.c[k] = sum / (S(2) * r.c[0]);
  }
  return r;
}
template <class S, int K>
UKES_HD UKES_INLINE Taylor<S, K> log(const Taylor<S, K>& a) {
  if (a.top == 0) return taylor_detail::constant<S, K>(log(a.c[0]), a.order);
  return taylor_detail::integral(log(a.c[0]), taylor_detail::derivative(a) / a, a.order);
}
template <class S, int K>
UKES_HD UKES_INLINE Taylor<S, K> atan(const Taylor<S, K>& a) {
  if (a.top == 0) return taylor_detail::constant<S, K>(atan(a.c[0]), a.order);
  return taylor_detail::integral(atan(a.c[0]), taylor_detail::derivative(a) / (a * a + 1), a.order);
}
template <class S, int K>
UKES_HD UKES_INLINE Taylor<S, K> asin(const Taylor<S, K>& a) {
  if (a.top == 0) return taylor_detail::constant<S, K>(asin(a.c[0]), a.order);
  return taylor_detail::integral(asin(a.c[0]), taylor_detail::derivative(a) / sqrt(1 - a * a),
                                 a.order);
}
template <class S, int K>
UKES_HD UKES_INLINE Taylor<S, K> acos(const Taylor<S, K>& a) {
  if (a.top == 0) return taylor_detail::constant<S, K>(acos(a.c[0]), a.order);
  return taylor_detail::integral(acos(a.c[0]), -taylor_detail::derivative(a) / sqrt(1 - a * a),
                                 a.order);
}
// atan2(y, x)' = (x y' - y x') / (x^2 + y^2).
template <class S, int K>
UKES_HD UKES_INLINE Taylor<S, K> atan2(const Taylor<S, K>& y, const Taylor<S, K>& x) {
  const int order = taylor_detail::lesser(y.order, x.order);
  if (y.top == 0 && x.top == 0) return taylor_detail::constant<S, K>(atan2(y.c[0], x.c[0]), order);
  const Taylor<S, K> rate =
      (x * taylor_detail::derivative(y) - y * taylor_detail::derivative(x)) / (x * x + y * y);
  return taylor_detail::integral(atan2(y.c[0], x.c[0]), rate, order);
}
template <class S, int K>
UKES_HD UKES_INLINE Taylor<S, K> hypot(const Taylor<S, K>& a, const Taylor<S, K>& b) {
  return sqrt(a * a + b * b);
}

// a^b. A constant exponent (b's higher coefficients and its tangent zero) that is a small whole
// number takes repeated products, so x^2 has its series at x = 0 too; another constant exponent
// the power rule's recurrence (p' a = e p a'), for a(0) != 0; a moving exponent exp(b log a), for
// a > 0.
template <class S, int K>
UKES_HD UKES_INLINE Taylor<S, K> pow(const Taylor<S, K>& a, const Taylor<S, K>& b) {
  bool constant = exactly_zero(b.c[0] - S(value_of(b.c[0])));
  for (int k = 1; k <= b.top; ++k) constant = constant && exactly_zero(b.c[k]);
  if (!constant) return exp(b * log(a));
  const auto e = value_of(b.c[0]);
  if (e >= 0 && e <= 8 && e == decltype(e)(int(e))) {
    Taylor<S, K> r = taylor_detail::constant<S, K>(S(1), b.order);
    for (int k = 0; k < int(e); ++k) r = r * a;
    return r;
  }
  const int order = taylor_detail::lesser(a.order, b.order);
  if (a.top == 0) return taylor_detail::constant<S, K>(pow(a.c[0], b.c[0]), order);
  Taylor<S, K> p = taylor_detail::empty<S, K>(order, order);
  p.c[0] = pow(a.c[0], b.c[0]);
  for (int k = 1; k <= p.top; ++k) {
    S sum = S(0);  // k a0 p_k = sum_j (e j - (k - j)) a_j p_{k-j}
    for (int j = 1; j <= (k < a.top ? k : a.top); ++j)
      sum = sum + (b.c[0] * S(j) - S(k - j)) * a.c[j] * p.c[k - j];
    p.c[k] = sum / (S(k) * a.c[0]);
  }
  return p;
}

// At a kink the branch the value takes, as for jets (docs/MODEL_FORMAT.md, "Derivatives at
// kinks"): abs(x) is x or -x by the sign of x(0), and a constant at x(0) = 0.
template <class S, int K>
UKES_HD UKES_INLINE Taylor<S, K> abs(const Taylor<S, K>& a) {
  if (value_of(a.c[0]) > 0) return a;
  if (value_of(a.c[0]) < 0) return -a;
  return taylor_detail::constant<S, K>(S(0), a.order);
}
template <class S, int K>
UKES_HD UKES_INLINE Taylor<S, K> sign(const Taylor<S, K>& a) {
  const auto v = value_of(a.c[0]);
  return taylor_detail::constant<S, K>(S(v > 0 ? 1 : v < 0 ? -1 : 0), a.order);
}

}  // namespace ukes
