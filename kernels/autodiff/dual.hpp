// Forward-mode automatic differentiation types, usable on host and device.
//
//  - Dual<T, N>: a value and its gradient with respect to N seeded inputs. One evaluation of a
//    constraint function on Dual<T, n> gives a whole row of the constraint Jacobian.
//  - Jet2<T>: a Taylor polynomial c0 + c1 s + c2 s^2 truncated after s^2. Evaluating phi(q + s qd,
//    t + s) gives c0 = phi, c1 = phi', 2 c2 = phi'' along the motion, which is exactly what the
//    second-order constraint form needs (phi'' minus its qdd part).
//
// Only the operations the catalogue's constraint functions use are provided; adding one is a
// few lines of calculus, checked by tests/autodiff against finite differences.
#pragma once

#include <type_traits>

#include "kernels/core/hd.hpp"

namespace ukes {

template <class T, int N>
struct Dual {
  T v;
  T d[N > 0 ? N : 1];

  UKES_HD Dual() : v(T(0)) {
    for (int i = 0; i < N; ++i) d[i] = T(0);
  }
  UKES_HD Dual(T value) : v(value) {  // NOLINT: constants promote implicitly, as in ordinary code
    for (int i = 0; i < N; ++i) d[i] = T(0);
  }
  UKES_HD static Dual variable(T value, int k) {
    Dual x(value);
    x.d[k] = T(1);
    return x;
  }
};

template <class T>
struct Jet2 {
  T c0, c1, c2;
  UKES_HD Jet2() : c0(T(0)), c1(T(0)), c2(T(0)) {}
  UKES_HD Jet2(T value) : c0(value), c1(T(0)), c2(T(0)) {}  // NOLINT: implicit constant
  UKES_HD Jet2(T a, T b, T c) : c0(a), c1(b), c2(c) {}
};

template <class X>
struct IsAd : std::false_type {};
template <class T, int N>
struct IsAd<Dual<T, N>> : std::true_type {};
template <class T>
struct IsAd<Jet2<T>> : std::true_type {};

// Arithmetic literals of any type mix with AD numbers by converting to the AD scalar.
template <class U>
inline constexpr bool kIsArithmetic = std::is_arithmetic_v<U>;

// ---------------------------------------------------------------- Dual
template <class T, int N>
UKES_HD Dual<T, N> operator-(const Dual<T, N>& a) {
  Dual<T, N> r(-a.v);
  for (int i = 0; i < N; ++i) r.d[i] = -a.d[i];
  return r;
}
template <class T, int N>
UKES_HD Dual<T, N> operator+(const Dual<T, N>& a, const Dual<T, N>& b) {
  Dual<T, N> r(a.v + b.v);
  for (int i = 0; i < N; ++i) r.d[i] = a.d[i] + b.d[i];
  return r;
}
template <class T, int N>
UKES_HD Dual<T, N> operator-(const Dual<T, N>& a, const Dual<T, N>& b) {
  Dual<T, N> r(a.v - b.v);
  for (int i = 0; i < N; ++i) r.d[i] = a.d[i] - b.d[i];
  return r;
}
template <class T, int N>
UKES_HD Dual<T, N> operator*(const Dual<T, N>& a, const Dual<T, N>& b) {
  Dual<T, N> r(a.v * b.v);
  for (int i = 0; i < N; ++i) r.d[i] = a.d[i] * b.v + a.v * b.d[i];
  return r;
}
template <class T, int N>
UKES_HD Dual<T, N> operator/(const Dual<T, N>& a, const Dual<T, N>& b) {
  const T inv = T(1) / b.v;
  const T q = a.v * inv;
  Dual<T, N> r(q);
  for (int i = 0; i < N; ++i) r.d[i] = (a.d[i] - q * b.d[i]) * inv;
  return r;
}
template <class T, int N, class F>
UKES_HD Dual<T, N> chain(const Dual<T, N>& a, T value, F derivative) {
  Dual<T, N> r(value);
  for (int i = 0; i < N; ++i) r.d[i] = derivative * a.d[i];
  return r;
}
template <class T, int N>
UKES_HD Dual<T, N> sin(const Dual<T, N>& a) {
  return chain(a, T(sin(a.v)), T(cos(a.v)));
}
template <class T, int N>
UKES_HD Dual<T, N> cos(const Dual<T, N>& a) {
  return chain(a, T(cos(a.v)), T(-sin(a.v)));
}
template <class T, int N>
UKES_HD Dual<T, N> exp(const Dual<T, N>& a) {
  const T e = exp(a.v);
  return chain(a, e, e);
}
template <class T, int N>
UKES_HD Dual<T, N> sqrt(const Dual<T, N>& a) {
  const T r = sqrt(a.v);
  return chain(a, r, T(0.5) / r);
}

// ---------------------------------------------------------------- Jet2
template <class T>
UKES_HD Jet2<T> operator-(const Jet2<T>& a) {
  return {-a.c0, -a.c1, -a.c2};
}
template <class T>
UKES_HD Jet2<T> operator+(const Jet2<T>& a, const Jet2<T>& b) {
  return {a.c0 + b.c0, a.c1 + b.c1, a.c2 + b.c2};
}
template <class T>
UKES_HD Jet2<T> operator-(const Jet2<T>& a, const Jet2<T>& b) {
  return {a.c0 - b.c0, a.c1 - b.c1, a.c2 - b.c2};
}
template <class T>
UKES_HD Jet2<T> operator*(const Jet2<T>& a, const Jet2<T>& b) {
  return {a.c0 * b.c0, a.c0 * b.c1 + a.c1 * b.c0, a.c0 * b.c2 + a.c1 * b.c1 + a.c2 * b.c0};
}
template <class T>
UKES_HD Jet2<T> operator/(const Jet2<T>& a, const Jet2<T>& b) {
  const T inv = T(1) / b.c0;
  const T q0 = a.c0 * inv;
  const T q1 = (a.c1 - q0 * b.c1) * inv;
  const T q2 = (a.c2 - q0 * b.c2 - q1 * b.c1) * inv;
  return {q0, q1, q2};
}
template <class T>
UKES_HD Jet2<T> sin(const Jet2<T>& a) {
  const T s = sin(a.c0), c = cos(a.c0);
  return {s, c * a.c1, c * a.c2 - T(0.5) * s * a.c1 * a.c1};
}
template <class T>
UKES_HD Jet2<T> cos(const Jet2<T>& a) {
  const T s = sin(a.c0), c = cos(a.c0);
  return {c, -s * a.c1, -s * a.c2 - T(0.5) * c * a.c1 * a.c1};
}
template <class T>
UKES_HD Jet2<T> exp(const Jet2<T>& a) {
  const T e = exp(a.c0);
  return {e, e * a.c1, e * (a.c2 + T(0.5) * a.c1 * a.c1)};
}
template <class T>
UKES_HD Jet2<T> sqrt(const Jet2<T>& a) {
  const T r = sqrt(a.c0);
  const T r1 = a.c1 / (T(2) * r);
  return {r, r1, (a.c2 - r1 * r1) / (T(2) * r)};
}

// ---------------------------------------------------------------- mixed with plain numbers
template <class X>
struct AdScalar;
template <class T, int N>
struct AdScalar<Dual<T, N>> {
  using type = T;
};
template <class T>
struct AdScalar<Jet2<T>> {
  using type = T;
};

template <class X, class U, std::enable_if_t<IsAd<X>::value && kIsArithmetic<U>, int> = 0>
UKES_HD X operator+(const X& a, U b) {
  return a + X(static_cast<typename AdScalar<X>::type>(b));
}
template <class X, class U, std::enable_if_t<IsAd<X>::value && kIsArithmetic<U>, int> = 0>
UKES_HD X operator+(U a, const X& b) {
  return X(static_cast<typename AdScalar<X>::type>(a)) + b;
}
template <class X, class U, std::enable_if_t<IsAd<X>::value && kIsArithmetic<U>, int> = 0>
UKES_HD X operator-(const X& a, U b) {
  return a - X(static_cast<typename AdScalar<X>::type>(b));
}
template <class X, class U, std::enable_if_t<IsAd<X>::value && kIsArithmetic<U>, int> = 0>
UKES_HD X operator-(U a, const X& b) {
  return X(static_cast<typename AdScalar<X>::type>(a)) - b;
}
template <class X, class U, std::enable_if_t<IsAd<X>::value && kIsArithmetic<U>, int> = 0>
UKES_HD X operator*(const X& a, U b) {
  return a * X(static_cast<typename AdScalar<X>::type>(b));
}
template <class X, class U, std::enable_if_t<IsAd<X>::value && kIsArithmetic<U>, int> = 0>
UKES_HD X operator*(U a, const X& b) {
  return X(static_cast<typename AdScalar<X>::type>(a)) * b;
}
template <class X, class U, std::enable_if_t<IsAd<X>::value && kIsArithmetic<U>, int> = 0>
UKES_HD X operator/(const X& a, U b) {
  return a / X(static_cast<typename AdScalar<X>::type>(b));
}
template <class X, class U, std::enable_if_t<IsAd<X>::value && kIsArithmetic<U>, int> = 0>
UKES_HD X operator/(U a, const X& b) {
  return X(static_cast<typename AdScalar<X>::type>(a)) / b;
}

// The plain value of any scalar, AD or not.
template <class T>
UKES_HD T value_of(T x) {
  return x;
}
template <class T, int N>
UKES_HD T value_of(const Dual<T, N>& x) {
  return x.v;
}
template <class T>
UKES_HD T value_of(const Jet2<T>& x) {
  return x.c0;
}

}  // namespace ukes
