// Forward-mode automatic differentiation with one tangent: Dual<T> carries a value and its
// derivative along one seeded direction, usable on host and device.
//
// Two users: the coefficients of Taylor series whose tangent says how a servo row's derivatives
// move with the input (kernels/autodiff/taylor.hpp), and a whole right-hand side evaluated on
// duals, model, constraint form and UK solve alike, for a column of its Jacobian (the stiff
// integrator's, kernels/uk/dynamics_jacobian.hpp). For the second, the linear algebra runs on
// duals too, so a dual also compares, takes magnitudes and mixes with plain numbers:
//  - <, <=, >, >= compare values: a branch (a pivot, a rank decision) is taken as at the value,
//    and the derivative is that of the branch taken, which is the derivative wherever the
//    branch does not change under a small move (a rank that stays constant, say);
//  - == and != compare value and tangent: the kernels test "== 0" to skip exact zeros (a diagonal
//    mass, an identity reflector), and a zero whose tangent is not zero must not be skipped.
#pragma once

#include <type_traits>

#include "kernels/autodiff/jet.hpp"
#include "kernels/core/hd.hpp"

namespace ukes {

template <class T>
struct Dual {
  T v, d;  // value; derivative along the seeded direction

  UKES_HD constexpr Dual() : v(T(0)), d(T(0)) {}
  template <class U, std::enable_if_t<std::is_arithmetic_v<U>, int> = 0>
  UKES_HD constexpr Dual(U value) : v(T(value)), d(T(0)) {}  // NOLINT: constants promote
  UKES_HD constexpr Dual(T value, T tangent) : v(value), d(tangent) {}
};

template <class T>
UKES_HD UKES_INLINE Dual<T> operator-(const Dual<T>& a) {
  return {-a.v, -a.d};
}
template <class T>
UKES_HD UKES_INLINE Dual<T> operator+(const Dual<T>& a, const Dual<T>& b) {
  return {a.v + b.v, a.d + b.d};
}
template <class T>
UKES_HD UKES_INLINE Dual<T> operator-(const Dual<T>& a, const Dual<T>& b) {
  return {a.v - b.v, a.d - b.d};
}
template <class T>
UKES_HD UKES_INLINE Dual<T> operator*(const Dual<T>& a, const Dual<T>& b) {
  return {a.v * b.v, a.v * b.d + a.d * b.v};
}
template <class T>
UKES_HD UKES_INLINE Dual<T> operator/(const Dual<T>& a, const Dual<T>& b) {
  const T q = a.v / b.v;
  return {q, (a.d - q * b.d) / b.v};
}
template <class T>
UKES_HD UKES_INLINE Dual<T>& operator+=(Dual<T>& a, const Dual<T>& b) {
  return a = a + b;
}
template <class T>
UKES_HD UKES_INLINE Dual<T>& operator-=(Dual<T>& a, const Dual<T>& b) {
  return a = a - b;
}

// f(a) with f(a.v) = f0 and f'(a.v) = f1.
template <class T>
UKES_HD UKES_INLINE Dual<T> dual_chain(const Dual<T>& a, T f0, T f1) {
  return {f0, f1 * a.d};
}
template <class T>
UKES_HD UKES_INLINE Dual<T> sin(const Dual<T>& a) {
  return dual_chain(a, sin(a.v), cos(a.v));
}
template <class T>
UKES_HD UKES_INLINE Dual<T> cos(const Dual<T>& a) {
  return dual_chain(a, cos(a.v), -sin(a.v));
}
template <class T>
UKES_HD UKES_INLINE Dual<T> tan(const Dual<T>& a) {
  const T t = tan(a.v);
  return dual_chain(a, t, T(1) + t * t);
}
template <class T>
UKES_HD UKES_INLINE Dual<T> tanh(const Dual<T>& a) {
  const T t = tanh(a.v);
  return dual_chain(a, t, T(1) - t * t);
}
template <class T>
UKES_HD UKES_INLINE Dual<T> sinh(const Dual<T>& a) {
  return dual_chain(a, sinh(a.v), cosh(a.v));
}
template <class T>
UKES_HD UKES_INLINE Dual<T> cosh(const Dual<T>& a) {
  return dual_chain(a, cosh(a.v), sinh(a.v));
}
template <class T>
UKES_HD UKES_INLINE Dual<T> exp(const Dual<T>& a) {
  const T e = exp(a.v);
  return dual_chain(a, e, e);
}
template <class T>
UKES_HD UKES_INLINE Dual<T> log(const Dual<T>& a) {
  return dual_chain(a, log(a.v), T(1) / a.v);
}
template <class T>
UKES_HD UKES_INLINE Dual<T> sqrt(const Dual<T>& a) {
  const T r = sqrt(a.v);
  return dual_chain(a, r, T(0.5) / r);
}
template <class T>
UKES_HD UKES_INLINE Dual<T> atan(const Dual<T>& a) {
  return dual_chain(a, atan(a.v), T(1) / (T(1) + a.v * a.v));
}
template <class T>
UKES_HD UKES_INLINE Dual<T> asin(const Dual<T>& a) {
  return dual_chain(a, asin(a.v), T(1) / sqrt(T(1) - a.v * a.v));
}
template <class T>
UKES_HD UKES_INLINE Dual<T> acos(const Dual<T>& a) {
  return dual_chain(a, acos(a.v), T(-1) / sqrt(T(1) - a.v * a.v));
}
template <class T>
UKES_HD UKES_INLINE Dual<T> atan2(const Dual<T>& y, const Dual<T>& x) {
  const T r2 = x.v * x.v + y.v * y.v;
  return {atan2(y.v, x.v), (x.v * y.d - y.v * x.d) / r2};
}
// At the origin, where hypot has no derivative, the tangent is taken as zero (as |x| at 0).
template <class T>
UKES_HD UKES_INLINE Dual<T> hypot(const Dual<T>& x, const Dual<T>& y) {
  const T r = hypot(x.v, y.v);
  return {r, r > T(0) ? (x.v * x.d + y.v * y.d) / r : T(0)};
}
template <class T>
UKES_HD UKES_INLINE Dual<T> pow(const Dual<T>& a, const Dual<T>& b) {
  const T f0 = pow(a.v, b.v);
  const T da = b.v == T(0) ? T(0) : b.v * pow(a.v, b.v - T(1));
  const T db = b.d == T(0) ? T(0) : f0 * log(a.v);  // a <= 0 with a varying exponent: NaN
  return {f0, da * a.d + db * b.d};
}
template <class T>
UKES_HD UKES_INLINE T value_of(const Dual<T>& x) {
  return x.v;
}

template <class T>
UKES_HD UKES_INLINE Dual<T>& operator*=(Dual<T>& a, const Dual<T>& b) {
  return a = a * b;
}
template <class T>
UKES_HD UKES_INLINE Dual<T>& operator/=(Dual<T>& a, const Dual<T>& b) {
  return a = a / b;
}

// Plain numbers mix in as constants.
template <class U>
inline constexpr bool kPlainNumber = std::is_arithmetic_v<U>;
#define UKES_DUAL_MIXED(op)                                               \
  template <class T, class U, std::enable_if_t<kPlainNumber<U>, int> = 0> \
  UKES_HD UKES_INLINE auto operator op(const Dual<T>& a, U b) {           \
    return a op Dual<T>(b);                                               \
  }                                                                       \
  template <class T, class U, std::enable_if_t<kPlainNumber<U>, int> = 0> \
  UKES_HD UKES_INLINE auto operator op(U a, const Dual<T>& b) {           \
    return Dual<T>(a) op b;                                               \
  }
UKES_DUAL_MIXED(+)
UKES_DUAL_MIXED(-)
UKES_DUAL_MIXED(*)
UKES_DUAL_MIXED(/)
UKES_DUAL_MIXED(==)
UKES_DUAL_MIXED(!=)
UKES_DUAL_MIXED(<)
UKES_DUAL_MIXED(<=)
UKES_DUAL_MIXED(>)
UKES_DUAL_MIXED(>=)
#undef UKES_DUAL_MIXED

template <class T>
UKES_HD UKES_INLINE bool operator==(const Dual<T>& a, const Dual<T>& b) {
  return a.v == b.v && a.d == b.d;
}
template <class T>
UKES_HD UKES_INLINE bool operator!=(const Dual<T>& a, const Dual<T>& b) {
  return !(a == b);
}
template <class T>
UKES_HD UKES_INLINE bool operator<(const Dual<T>& a, const Dual<T>& b) {
  return a.v < b.v;
}
template <class T>
UKES_HD UKES_INLINE bool operator<=(const Dual<T>& a, const Dual<T>& b) {
  return a.v <= b.v;
}
template <class T>
UKES_HD UKES_INLINE bool operator>(const Dual<T>& a, const Dual<T>& b) {
  return a.v > b.v;
}
template <class T>
UKES_HD UKES_INLINE bool operator>=(const Dual<T>& a, const Dual<T>& b) {
  return a.v >= b.v;
}

template <class T>
UKES_HD UKES_INLINE Dual<T> abs(const Dual<T>& a) {
  return a.v < T(0) ? -a : a;
}
template <class T>
UKES_HD UKES_INLINE bool isfinite(const Dual<T>& a) {
  return isfinite(a.v) && isfinite(a.d);
}

template <class T>
struct Epsilon<Dual<T>> : Epsilon<T> {};

// To a jet over duals (a constraint row evaluated for a column of the Jacobian), a dual is a
// plain number: a parameter or time, constant along the jet's seeds.
template <class T>
inline constexpr bool kIsArithmetic<Dual<T>> = true;

}  // namespace ukes
