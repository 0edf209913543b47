// Host/device portability layer: the one place that knows whether we are compiled by nvcc or g++.
#pragma once

#include <cmath>

// UKES_NOINLINE keeps a rarely taken branch's function out of line (its registers off the hot
// path's); UKES_DEVICE_NOINLINE does so in device code only (a function whose inlined copies
// would multiply ptxas's work, where the host compiler should still inline it). UKES_FLATTEN asks
// the host compiler to inline a function's whole call tree into it: where small helpers decide work
// by flags (kernels/autodiff/jet.hpp) the flags then fold at compile time. Device code is inlined
// that deeply anyway, UKES_DEVICE_NOINLINE functions aside.
#if defined(__CUDACC__)
#define UKES_HD __host__ __device__
#define UKES_INLINE __forceinline__
#define UKES_NOINLINE __noinline__
#define UKES_FLATTEN
#ifdef __CUDA_ARCH__
#define UKES_DEVICE_NOINLINE __noinline__
#else
#define UKES_DEVICE_NOINLINE
#endif
#else
#define UKES_HD
#define UKES_INLINE inline __attribute__((always_inline))
#define UKES_NOINLINE __attribute__((noinline))
#define UKES_FLATTEN __attribute__((flatten))
#define UKES_DEVICE_NOINLINE
#endif

// UKES_LANE_UNROLL, before a loop over a small matrix's entries, unrolls it (by up to 16
// iterations) in the CPU's lane libraries and the user models compiled for the CPU at run time,
// which CMakeLists.txt compiles with UKES_UNROLL_HOST_LOOPS. GCC breaks a local array into scalars,
// registers, only where every index is a constant (SRA), and before that its unrolling takes only
// innermost loops of constant trip count: a nested or triangular loop kept its matrix in memory, a
// load and a store per entry and step (benchmarks/README.md, "Small matrices in registers,
// taken"). Empty elsewhere: nvcc unrolls these loops itself, and the per-system CPU code compiles
// as it did.
#if defined(UKES_UNROLL_HOST_LOOPS) && !defined(__CUDA_ARCH__)
#define UKES_LANE_UNROLL _Pragma("GCC unroll 16")
#else
#define UKES_LANE_UNROLL
#endif

#include "kernels/core/lanes.hpp"

namespace ukes {

// Scalar math that resolves to the right overload for float, double and (through ADL) our
// automatic-differentiation types, on host and device alike.
using std::abs;
using std::acos;
using std::asin;
using std::atan;
using std::atan2;
using std::cos;
using std::cosh;
using std::exp;
using std::fmax;
using std::fmin;
using std::hypot;
using std::isfinite;
using std::log;
using std::pow;
using std::sin;
using std::sinh;
using std::sqrt;
using std::tan;
using std::tanh;

// -1, 0 or 1 by the sign of x (NaN stays NaN).
template <class T>
UKES_HD UKES_INLINE T sign(T x) {
  if constexpr (kLanes<T>) {
    return pick(x > T(0), T(1), pick(x < T(0), T(-1), x * T(0)));
  } else {
    return x > T(0) ? T(1) : x < T(0) ? T(-1) : x * T(0);
  }
}

template <class T>
UKES_HD UKES_INLINE constexpr T square(T x) {
  return x * x;
}

// A plain scalar takes the plain ternary, not pick's choice between references: with pick,
// nvcc gave FrictionRing's fused FP64 RK4 kernel 180 registers instead of 142
// (benchmarks/kernel_resources.tsv).
template <class T>
UKES_HD UKES_INLINE constexpr T max_of(T a, T b) {
  if constexpr (kLanes<T>) {
    return pick(a > b, a, b);
  } else {
    return a > b ? a : b;
  }
}

template <class T>
UKES_HD UKES_INLINE constexpr T min_of(T a, T b) {
  if constexpr (kLanes<T>) {
    return pick(a < b, a, b);
  } else {
    return a < b ? a : b;
  }
}

// Machine epsilon without <limits> (numeric_limits is host-only in older CUDA toolchains).
template <class T>
struct Epsilon;
template <>
struct Epsilon<double> {
  static constexpr double value = 2.220446049250313e-16;
};
template <>
struct Epsilon<float> {
  static constexpr float value = 1.1920929e-07f;
};

}  // namespace ukes
