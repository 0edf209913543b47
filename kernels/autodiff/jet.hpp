// Forward-mode automatic differentiation for constraint rows, usable on host and device.
//
// Jet<T, N> carries, through every operation, what the second-order constraint form needs from
// ONE evaluation of a constraint function f (kernels/uk/constraint_form.hpp):
//  - c0, c1, c2: the Taylor polynomial of f along a curve x(s) = x0 + v s + w s^2, truncated
//    after s^2 (c0 = f, c1 = f', 2 c2 = f'' along the motion);
//  - g[N]: the gradient of c0 with respect to N seeded inputs (a row of the constraint Jacobian).
// One pass yields both, so each sin, cos, exp and sqrt is evaluated once per call, not once per
// derivative.
//
// `varies` is false when the gradient is known to be zero: constants, parameters, time, and in
// velocity rows every subterm of q alone (seeds are on qd). Such jets neither store nor read g,
// so operations on them cost a few flops instead of N: activity analysis at run time, which the
// compiler folds wherever the seeding is visible after inlining.
//
// Where the caller knows it before run time, the type says it: Jet<T, 0> is a jet of no seeded
// input (c0, c1, c2 alone), which code generated from a model (kernels/backend/cuda/jit/
// codegen.cpp) gives to every value of constants, parameters, time and the unseeded coordinates
// (InactiveOf, kernels/expr/program.hpp). An operation of Jet<T, N> with Jet<T, 0> gives Jet<T, N>.
// Measured: swarm's velocity rows, whose subterms are mostly of q alone, held every value in a
// frame slot of N + 3 lane vectors, 190 KB in AVX-512 lanes (benchmarks/README.md).
//
// The operations of the model expression language (docs/MODEL_FORMAT.md) are all here; adding
// one is a few lines of calculus (chain() and chain2() below), checked by tests/autodiff against
// finite differences.
#pragma once

#include <type_traits>
#include <utility>

#include "kernels/core/hd.hpp"

namespace ukes {

template <class T, int N>
struct Jet {
  T c0, c1, c2;
  // Set and read only when `varies`: constructing a constant writes no N zeros (measured: 12% of
  // the swarm model's right-hand side).
  T g[N > 0 ? N : 1];
  bool varies;

  UKES_HD Jet() : c0(T(0)), c1(T(0)), c2(T(0)), varies(false) {}
  UKES_HD Jet(T value)  // NOLINT: constants promote implicitly, as in ordinary code
      : c0(value), c1(T(0)), c2(T(0)), varies(false) {}
  UKES_HD Jet(T value, T rate, T half_curvature)
      : c0(value), c1(rate), c2(half_curvature), varies(false) {}

  // Input k of the gradient, moving along the curve with x'(0) = rate, x''(0) / 2 = half_curvature.
  UKES_HD static Jet variable(T value, int k, T rate = T(0), T half_curvature = T(0)) {
    Jet x;
    x.set_variable(value, k, rate, half_curvature);
    return x;
  }

  // *this = variable(value, k, ...), written in place (see seed, kernels/uk/constraint_form.hpp).
  UKES_HD void set_variable(T value, int k, T rate = T(0), T half_curvature = T(0)) {
    c0 = value;
    c1 = rate;
    c2 = half_curvature;
    for (int i = 0; i < N; ++i) g[i] = T(0);
    g[k] = T(1);
    varies = true;
  }

  // d c0 / d input k (zero for a jet that does not vary).
  UKES_HD T gradient(int k) const { return varies ? g[k] : T(0); }

  // A jet of no seeded input, as one that does not vary.
  template <int M, std::enable_if_t<M == 0 && (N > 0), int> = 0>
  UKES_HD Jet(const Jet<T, M>& a)  // NOLINT: promotes implicitly, as a constant does
      : c0(a.c0), c1(a.c1), c2(a.c2), varies(false) {}
};

// A jet of no seeded input: its gradient is zero by type, so it has none to store or read.
template <class T>
struct Jet<T, 0> {
  T c0, c1, c2;
  static constexpr bool varies = false;

  UKES_HD Jet() : c0(T(0)), c1(T(0)), c2(T(0)) {}
  UKES_HD Jet(T value)  // NOLINT: constants promote implicitly, as in ordinary code
      : c0(value), c1(T(0)), c2(T(0)) {}
  UKES_HD Jet(T value, T rate, T half_curvature) : c0(value), c1(rate), c2(half_curvature) {}

  UKES_HD T gradient(int) const { return T(0); }
};

// The jet an operation of a jet with N gradients and one with M gives: Jet<T, 0> mixes with any.
template <int N, int M>
inline constexpr bool kJetsMix = N == M || N == 0 || M == 0;
template <int N, int M>
inline constexpr int kJetResult = N > M ? N : M;

template <class X>
struct IsAd : std::false_type {};
template <class T, int N>
struct IsAd<Jet<T, N>> : std::true_type {};

// Arithmetic literals of any type mix with jets.
template <class U>
inline constexpr bool kIsArithmetic = std::is_arithmetic_v<U>;

// r.g = w a.g (nothing for a jet of no seeded input).
template <class T, int N>
UKES_HD UKES_INLINE void scale_gradient(Jet<T, N>& r, T w, const Jet<T, N>& a) {
  if constexpr (N > 0) {
    r.varies = a.varies;
    if (a.varies)
      for (int i = 0; i < N; ++i) r.g[i] = w * a.g[i];
  }
}

// r.g = wa a.g + wb b.g, doing only the work the operands' activity requires.
template <class T, int N, int NA, int NB>
UKES_HD UKES_INLINE void combine_gradients(Jet<T, N>& r, T wa, const Jet<T, NA>& a, T wb,
                                           const Jet<T, NB>& b) {
  if constexpr (NB == 0) {
    scale_gradient(r, wa, a);
  } else if constexpr (NA == 0) {
    scale_gradient(r, wb, b);
  } else {
    r.varies = a.varies || b.varies;
    if (a.varies && b.varies) {
      for (int i = 0; i < N; ++i) r.g[i] = wa * a.g[i] + wb * b.g[i];
    } else if (a.varies) {
      for (int i = 0; i < N; ++i) r.g[i] = wa * a.g[i];
    } else if (b.varies) {
      for (int i = 0; i < N; ++i) r.g[i] = wb * b.g[i];
    }
  }
}

// f(a) for a scalar function with f(a.c0) = f0, f' = f1, f'' = f2.
template <class T, int N>
UKES_HD UKES_INLINE Jet<T, N> chain(const Jet<T, N>& a, T f0, T f1, T f2) {
  Jet<T, N> r(f0, f1 * a.c1, f1 * a.c2 + T(0.5) * f2 * a.c1 * a.c1);
  scale_gradient(r, f1, a);
  return r;
}

// ---------------------------------------------------------------- jet with jet
template <class T, int N>
UKES_HD UKES_INLINE Jet<T, N> operator-(const Jet<T, N>& a) {
  Jet<T, N> r(-a.c0, -a.c1, -a.c2);
  scale_gradient(r, T(-1), a);
  return r;
}
template <class T, int NA, int NB, std::enable_if_t<kJetsMix<NA, NB>, int> = 0>
UKES_HD UKES_INLINE Jet<T, kJetResult<NA, NB>> operator+(const Jet<T, NA>& a, const Jet<T, NB>& b) {
  Jet<T, kJetResult<NA, NB>> r(a.c0 + b.c0, a.c1 + b.c1, a.c2 + b.c2);
  combine_gradients(r, T(1), a, T(1), b);
  return r;
}
template <class T, int NA, int NB, std::enable_if_t<kJetsMix<NA, NB>, int> = 0>
UKES_HD UKES_INLINE Jet<T, kJetResult<NA, NB>> operator-(const Jet<T, NA>& a, const Jet<T, NB>& b) {
  Jet<T, kJetResult<NA, NB>> r(a.c0 - b.c0, a.c1 - b.c1, a.c2 - b.c2);
  combine_gradients(r, T(1), a, T(-1), b);
  return r;
}
template <class T, int NA, int NB, std::enable_if_t<kJetsMix<NA, NB>, int> = 0>
UKES_HD UKES_INLINE Jet<T, kJetResult<NA, NB>> operator*(const Jet<T, NA>& a, const Jet<T, NB>& b) {
  Jet<T, kJetResult<NA, NB>> r(a.c0 * b.c0, a.c0 * b.c1 + a.c1 * b.c0,
                               a.c0 * b.c2 + a.c1 * b.c1 + a.c2 * b.c0);
  combine_gradients(r, b.c0, a, a.c0, b);
  return r;
}
template <class T, int NA, int NB, std::enable_if_t<kJetsMix<NA, NB>, int> = 0>
UKES_HD UKES_INLINE Jet<T, kJetResult<NA, NB>> operator/(const Jet<T, NA>& a, const Jet<T, NB>& b) {
  const T inv = T(1) / b.c0;
  const T q0 = a.c0 * inv;
  const T q1 = (a.c1 - q0 * b.c1) * inv;
  const T q2 = (a.c2 - q0 * b.c2 - q1 * b.c1) * inv;
  Jet<T, kJetResult<NA, NB>> r(q0, q1, q2);
  combine_gradients(r, inv, a, -q0 * inv, b);
  return r;
}

// sin x and cos x, which a jet's sin and cos both need: from one argument reduction on a lane
// type (LaneMath, kernels/core/lanes.hpp), the plain functions otherwise.
template <class T>
UKES_HD UKES_INLINE void sin_and_cos(const T& x, T& s, T& c) {
  if constexpr (kLanes<T>) {
    const auto sc = LaneMath<T>::sin_cos(x);
    s = sc.first;
    c = sc.second;
  } else {
    s = sin(x);
    c = cos(x);
  }
}

template <class T, int N>
UKES_HD UKES_INLINE Jet<T, N> sin(const Jet<T, N>& a) {
  T s, c;
  sin_and_cos(a.c0, s, c);
  return chain(a, s, c, -s);
}
template <class T, int N>
UKES_HD UKES_INLINE Jet<T, N> cos(const Jet<T, N>& a) {
  T s, c;
  sin_and_cos(a.c0, s, c);
  return chain(a, c, -s, -c);
}
template <class T, int N>
UKES_HD UKES_INLINE Jet<T, N> exp(const Jet<T, N>& a) {
  const T e = exp(a.c0);
  return chain(a, e, e, e);
}
template <class T, int N>
UKES_HD UKES_INLINE Jet<T, N> sqrt(const Jet<T, N>& a) {
  const T r = sqrt(a.c0);
  const T d1 = T(0.5) / r;  // f' = 1 / (2 r), f'' = -f' / (2 r^2) = -2 f'^3
  return chain(a, r, d1, T(-2) * d1 * d1 * d1);
}

template <class T, int N>
UKES_HD UKES_INLINE Jet<T, N> tan(const Jet<T, N>& a) {
  const T t = tan(a.c0), d1 = T(1) + t * t;
  return chain(a, t, d1, T(2) * t * d1);
}
template <class T, int N>
UKES_HD UKES_INLINE Jet<T, N> asin(const Jet<T, N>& a) {
  const T w = T(1) - a.c0 * a.c0, d1 = T(1) / sqrt(w);  // f'' = x / w^(3/2)
  return chain(a, asin(a.c0), d1, a.c0 * d1 / w);
}
template <class T, int N>
UKES_HD UKES_INLINE Jet<T, N> acos(const Jet<T, N>& a) {
  const T w = T(1) - a.c0 * a.c0, d1 = T(1) / sqrt(w);
  return chain(a, acos(a.c0), -d1, -a.c0 * d1 / w);
}
template <class T, int N>
UKES_HD UKES_INLINE Jet<T, N> atan(const Jet<T, N>& a) {
  const T d1 = T(1) / (T(1) + a.c0 * a.c0);
  return chain(a, atan(a.c0), d1, T(-2) * a.c0 * d1 * d1);
}
template <class T, int N>
UKES_HD UKES_INLINE Jet<T, N> sinh(const Jet<T, N>& a) {
  const T sh = sinh(a.c0);
  return chain(a, sh, cosh(a.c0), sh);
}
template <class T, int N>
UKES_HD UKES_INLINE Jet<T, N> cosh(const Jet<T, N>& a) {
  const T ch = cosh(a.c0);
  return chain(a, ch, sinh(a.c0), ch);
}
template <class T, int N>
UKES_HD UKES_INLINE Jet<T, N> tanh(const Jet<T, N>& a) {
  const T th = tanh(a.c0), d1 = T(1) - th * th;
  return chain(a, th, d1, T(-2) * th * d1);
}
template <class T, int N>
UKES_HD UKES_INLINE Jet<T, N> log(const Jet<T, N>& a) {
  const T d1 = T(1) / a.c0;
  return chain(a, log(a.c0), d1, -d1 * d1);
}

// At a kink the derivative of the branch taken, with abs'(0) = 0: sign(0) = 0 (docs/
// MODEL_FORMAT.md). A kink is where AD cannot know better; these make every run reproducible.
template <class T, int N>
UKES_HD UKES_INLINE Jet<T, N> abs(const Jet<T, N>& a) {
  if constexpr (kLanes<T>) {
    return pick(a.c0 > T(0), a, pick(a.c0 < T(0), -a, Jet<T, N>(abs(a.c0))));
  } else {
    if (a.c0 > T(0)) return a;
    if (a.c0 < T(0)) return -a;
    return Jet<T, N>(abs(a.c0));  // 0 (or NaN): no derivative
  }
}
template <class T, int N>
UKES_HD UKES_INLINE Jet<T, N> sign(const Jet<T, N>& a) {
  return Jet<T, N>(sign(a.c0));
}

// f(a, b) with f(a.c0, b.c0) = f0, first partials fa, fb and second partials faa, fab, fbb.
template <class T, int N>
UKES_HD UKES_INLINE Jet<T, N> chain2(const Jet<T, N>& a, const Jet<T, N>& b, T f0, T fa, T fb,
                                     T faa, T fab, T fbb) {
  Jet<T, N> r(f0, fa * a.c1 + fb * b.c1,
              fa * a.c2 + fb * b.c2 +
                  T(0.5) * (faa * a.c1 * a.c1 + T(2) * fab * a.c1 * b.c1 + fbb * b.c1 * b.c1));
  combine_gradients(r, fa, a, fb, b);
  return r;
}

template <class T, int N>
UKES_HD UKES_INLINE Jet<T, N> atan2(const Jet<T, N>& y, const Jet<T, N>& x) {
  const T r2 = x.c0 * x.c0 + y.c0 * y.c0, inv = T(1) / r2, inv2 = inv * inv;
  const T xy = x.c0 * y.c0;
  // d/dy = x / r2, d/dx = -y / r2.
  return chain2(y, x, atan2(y.c0, x.c0), x.c0 * inv, -y.c0 * inv, T(-2) * xy * inv2,
                (y.c0 * y.c0 - x.c0 * x.c0) * inv2, T(2) * xy * inv2);
}
template <class T, int N>
UKES_HD UKES_INLINE Jet<T, N> hypot(const Jet<T, N>& a, const Jet<T, N>& b) {
  const T h = hypot(a.c0, b.c0);
  if constexpr (!kLanes<T>) {
    if (!(h > T(0))) return Jet<T, N>(h);  // the kink at the origin: no derivative
  }
  const T inv = T(1) / h, inv3 = inv * inv * inv;
  const Jet<T, N> r = chain2(a, b, h, a.c0 * inv, b.c0 * inv, b.c0 * b.c0 * inv3,
                             -a.c0 * b.c0 * inv3, a.c0 * a.c0 * inv3);
  if constexpr (kLanes<T>) {
    return pick(h > T(0), r, Jet<T, N>(h));
  } else {
    return r;
  }
}
// a^b: with a constant exponent the power rule (so x^2 at x = 0 has its derivative 0); otherwise
// the derivatives of exp(b log a), defined for a > 0. The value is pow's either way, the number
// the same expression gives in plain arithmetic.
template <class T, int N>
UKES_HD UKES_INLINE Jet<T, N> pow_constant_exponent(const Jet<T, N>& a, T e, T f0) {
  if constexpr (kLanes<T>) {
    const T f1 = e * pow(a.c0, e - T(1));
    const T f2 = pick(e == T(1), T(0), e * (e - T(1)) * pow(a.c0, e - T(2)));
    return pick(e == T(0), Jet<T, N>(f0), chain(a, f0, f1, f2));
  } else {
    if (e == T(0)) return Jet<T, N>(f0);
    const T f1 = e * pow(a.c0, e - T(1));
    const T f2 = e == T(1) ? T(0) : e * (e - T(1)) * pow(a.c0, e - T(2));
    return chain(a, f0, f1, f2);
  }
}
template <class T, int N>
UKES_HD UKES_INLINE Jet<T, N> pow_varying_exponent(const Jet<T, N>& a, const Jet<T, N>& b, T f0) {
  const T ln = log(a.c0), below = pow(a.c0, b.c0 - T(1));  // a^(b-1)
  return chain2(a, b, f0, b.c0 * below, f0 * ln, b.c0 * (b.c0 - T(1)) * below / a.c0,
                below * (T(1) + b.c0 * ln), f0 * ln * ln);
}
template <class T, int N>
UKES_HD UKES_INLINE Jet<T, N> pow(const Jet<T, N>& a, const Jet<T, N>& b) {
  const T f0 = pow(a.c0, b.c0);
  if constexpr (kLanes<T>) {
    if (b.varies) return pow_varying_exponent(a, b, f0);
    // Each lane by its own exponent's constancy.
    const MaskOf<T> constant = (b.c1 == T(0)) && (b.c2 == T(0));
    return pick(constant, pow_constant_exponent(a, b.c0, f0), pow_varying_exponent(a, b, f0));
  } else {
    // One inlined copy of each form: the device interpreter inlines every operation's code.
    if (!b.varies && b.c1 == T(0) && b.c2 == T(0)) return pow_constant_exponent(a, b.c0, f0);
    return pow_varying_exponent(a, b, f0);
  }
}

// ---------------------------------------------------------------- jet with a plain number
// Direct forms: a plain number has no derivatives, and multiplying them by zero is work the
// compiler may not remove (0 * x is not 0 for every x in IEEE arithmetic).
template <class X>
using ScalarOf = std::enable_if_t<IsAd<X>::value, decltype(X::c0)>;

template <class X, class U, std::enable_if_t<IsAd<X>::value && kIsArithmetic<U>, int> = 0>
UKES_HD UKES_INLINE X operator+(const X& a, U b) {
  X r = a;
  r.c0 = a.c0 + static_cast<ScalarOf<X>>(b);
  return r;
}
template <class X, class U, std::enable_if_t<IsAd<X>::value && kIsArithmetic<U>, int> = 0>
UKES_HD UKES_INLINE X operator+(U a, const X& b) {
  X r = b;
  r.c0 = static_cast<ScalarOf<X>>(a) + b.c0;
  return r;
}
template <class X, class U, std::enable_if_t<IsAd<X>::value && kIsArithmetic<U>, int> = 0>
UKES_HD UKES_INLINE X operator-(const X& a, U b) {
  X r = a;
  r.c0 = a.c0 - static_cast<ScalarOf<X>>(b);
  return r;
}
template <class X, class U, std::enable_if_t<IsAd<X>::value && kIsArithmetic<U>, int> = 0>
UKES_HD UKES_INLINE X operator-(U a, const X& b) {
  X r = -b;
  r.c0 = static_cast<ScalarOf<X>>(a) - b.c0;
  return r;
}
template <class X, class U, std::enable_if_t<IsAd<X>::value && kIsArithmetic<U>, int> = 0>
UKES_HD UKES_INLINE X operator*(const X& a, U b) {
  const auto s = static_cast<ScalarOf<X>>(b);
  X r(a.c0 * s, a.c1 * s, a.c2 * s);
  scale_gradient(r, s, a);
  return r;
}
template <class X, class U, std::enable_if_t<IsAd<X>::value && kIsArithmetic<U>, int> = 0>
UKES_HD UKES_INLINE X operator*(U a, const X& b) {
  return b * a;
}
template <class X, class U, std::enable_if_t<IsAd<X>::value && kIsArithmetic<U>, int> = 0>
UKES_HD UKES_INLINE X operator/(const X& a, U b) {
  return a * (ScalarOf<X>(1) / static_cast<ScalarOf<X>>(b));
}
template <class X, class U, std::enable_if_t<IsAd<X>::value && kIsArithmetic<U>, int> = 0>
UKES_HD UKES_INLINE X operator/(U a, const X& b) {
  return X(static_cast<ScalarOf<X>>(a)) / b;
}

// The plain value of any scalar, jet or not.
template <class T>
UKES_HD UKES_INLINE T value_of(T x) {
  return x;
}
template <class T, int N>
UKES_HD UKES_INLINE T value_of(const Jet<T, N>& x) {
  return x.c0;
}

// dst = src, copying the gradient only where it is set: an interpreter moving jets between
// registers (kernels/expr/program.hpp) would otherwise copy N unused entries per instruction.
template <class T>
UKES_HD UKES_INLINE void assign(T& dst, const T& src) {
  dst = src;
}
template <class T, int N>
UKES_HD UKES_INLINE void assign(Jet<T, N>& dst, const Jet<T, N>& src) {
  dst.c0 = src.c0;
  dst.c1 = src.c1;
  dst.c2 = src.c2;
  if constexpr (N > 0) {
    dst.varies = src.varies;
    if (src.varies)
      for (int i = 0; i < N; ++i) dst.g[i] = src.g[i];
  }
}

// Whether S's value is a lane type (kernels/core/lanes.hpp): a lane scalar or a jet of one.
// Where it is not, a choice between two S is the plain ternary: through pick's references nvcc
// allocated more registers and spilled more (see max_of, kernels/core/hd.hpp).
template <class S>
inline constexpr bool kLaneValued = kLanes<decltype(value_of(std::declval<const S&>()))>;

// min and max pick an operand, value and derivatives alike: a when a <= b (min) or a >= b
// (max), else b (docs/MODEL_FORMAT.md, "Derivatives at kinks"). For plain numbers and jets.
// (The operand itself for a plain scalar; lane by lane for a lane type.)
template <class S>
UKES_HD UKES_INLINE decltype(auto) jet_min(const S& a, const S& b) {
  if constexpr (kLaneValued<S>) {
    return pick(value_of(a) <= value_of(b), a, b);
  } else {
    return value_of(a) <= value_of(b) ? a : b;
  }
}
template <class S>
UKES_HD UKES_INLINE decltype(auto) jet_max(const S& a, const S& b) {
  if constexpr (kLaneValued<S>) {
    return pick(value_of(a) >= value_of(b), a, b);
  } else {
    return value_of(a) >= value_of(b) ? a : b;
  }
}

// A lane type's choice between two jets (its MaskOps::pick, kernels/core/lanes.hpp): in each
// lane the chosen operand's value and derivatives.
template <class Mask, class T, int N>
UKES_HD Jet<T, N> pick_lanes(const Mask& m, const Jet<T, N>& a, const Jet<T, N>& b) {
  Jet<T, N> r(pick(m, a.c0, b.c0), pick(m, a.c1, b.c1), pick(m, a.c2, b.c2));
  if constexpr (N > 0) {
    r.varies = a.varies || b.varies;
    if (r.varies)
      for (int i = 0; i < N; ++i) r.g[i] = pick(m, a.gradient(i), b.gradient(i));
  }
  return r;
}

}  // namespace ukes
