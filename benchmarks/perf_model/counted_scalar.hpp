// A double that counts the floating-point operations done on it, for the performance model
// (benchmarks/perf_model/README.md): the shared __host__ __device__ code (models, AD, UK solve,
// integrators) is generic over its scalar, so instantiating it with Counted runs exactly the
// operations a GPU thread runs for one system, on the CPU, and tallies them by kind.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/autodiff/jet.hpp"
#include "kernels/core/hd.hpp"

namespace ukes::perf {

// Operations by kind. `add` holds additions, subtractions and negations; `transcendental` the
// sin, cos, tan, their inverses, hyperbolic functions, exp, log and pow; `compare` comparisons
// and finiteness tests (they cost an instruction and steer branches, but no FP64 pipe work).
struct OpCounts {
  std::int64_t add = 0, mul = 0, div = 0, sqrt = 0, transcendental = 0, compare = 0;

  std::int64_t arithmetic() const { return add + mul + div + sqrt + transcendental; }
};

// The tally the operators below add to (one per thread: counting is single-threaded here).
inline OpCounts& op_counts() {
  thread_local OpCounts counts;
  return counts;
}

struct Counted {
  double v = 0.0;
  Counted() = default;
  constexpr Counted(double x) : v(x) {}  // NOLINT: literals promote, as for double

  Counted& operator+=(Counted o) { return *this = *this + o; }
  Counted& operator-=(Counted o) { return *this = *this - o; }
  Counted& operator*=(Counted o) { return *this = *this * o; }
  Counted& operator/=(Counted o) { return *this = *this / o; }

  friend Counted operator+(Counted a, Counted b) { return ++op_counts().add, a.v + b.v; }
  friend Counted operator-(Counted a, Counted b) { return ++op_counts().add, a.v - b.v; }
  friend Counted operator*(Counted a, Counted b) { return ++op_counts().mul, a.v * b.v; }
  friend Counted operator/(Counted a, Counted b) { return ++op_counts().div, a.v / b.v; }
  friend Counted operator-(Counted a) { return ++op_counts().add, -a.v; }
  friend Counted operator+(Counted a) { return a; }

  friend bool operator<(Counted a, Counted b) { return ++op_counts().compare, a.v < b.v; }
  friend bool operator>(Counted a, Counted b) { return ++op_counts().compare, a.v > b.v; }
  friend bool operator<=(Counted a, Counted b) { return ++op_counts().compare, a.v <= b.v; }
  friend bool operator>=(Counted a, Counted b) { return ++op_counts().compare, a.v >= b.v; }
  friend bool operator==(Counted a, Counted b) { return ++op_counts().compare, a.v == b.v; }
  friend bool operator!=(Counted a, Counted b) { return ++op_counts().compare, a.v != b.v; }
};

// Found by argument-dependent lookup from the shared code's unqualified calls.
inline Counted sqrt(Counted x) { return ++op_counts().sqrt, std::sqrt(x.v); }
inline Counted abs(Counted x) { return ++op_counts().add, std::abs(x.v); }
inline Counted fabs(Counted x) { return abs(x); }
inline Counted fmax(Counted a, Counted b) { return ++op_counts().compare, std::fmax(a.v, b.v); }
inline Counted fmin(Counted a, Counted b) { return ++op_counts().compare, std::fmin(a.v, b.v); }
inline bool isfinite(Counted x) { return ++op_counts().compare, std::isfinite(x.v); }
inline bool isnan(Counted x) { return ++op_counts().compare, std::isnan(x.v); }
inline Counted hypot(Counted a, Counted b) {
  op_counts().mul += 2;
  ++op_counts().add;
  ++op_counts().sqrt;
  return std::hypot(a.v, b.v);
}

#define UKES_COUNTED_UNARY(f) \
  inline Counted f(Counted x) { return ++op_counts().transcendental, std::f(x.v); }
UKES_COUNTED_UNARY(sin)
UKES_COUNTED_UNARY(cos)
UKES_COUNTED_UNARY(tan)
UKES_COUNTED_UNARY(asin)
UKES_COUNTED_UNARY(acos)
UKES_COUNTED_UNARY(atan)
UKES_COUNTED_UNARY(sinh)
UKES_COUNTED_UNARY(cosh)
UKES_COUNTED_UNARY(tanh)
UKES_COUNTED_UNARY(exp)
UKES_COUNTED_UNARY(log)
#undef UKES_COUNTED_UNARY
inline Counted atan2(Counted y, Counted x) {
  return ++op_counts().transcendental, std::atan2(y.v, x.v);
}
inline Counted pow(Counted x, Counted y) {
  return ++op_counts().transcendental, std::pow(x.v, y.v);
}

}  // namespace ukes::perf

namespace ukes {

template <>
struct Epsilon<perf::Counted> {
  static constexpr double value = Epsilon<double>::value;
};

// Parameters and coefficients of type Counted mix with jets as doubles do.
template <>
inline constexpr bool kIsArithmetic<perf::Counted> = true;

}  // namespace ukes
