// The CPU's lane type: an xsimd batch of W doubles, one system per lane, on which the generic
// kernel code (model, constraint form, UK solve) runs for W systems at once
// (kernels/backend/cpu/simd/lane_batch_impl.hpp). What the generic code needs of a scalar beyond
// arithmetic and xsimd's functions (found by argument-dependent lookup): masks that branch through
// kernels/core/lanes.hpp, sin and cos from one reduction (LaneMath), and epsilon.
//
// Accuracy: sin and cos of our own where the multiply-add is fused (AVX2 with FMA, AVX-512;
// kernels/backend/cpu/simd/lane_sin_cos.hpp) within 1 ulp of the C library's the scalar path
// calls; xsimd's sin, cos, sincos (SSE2), tan, asin, atan2, exp and log within 2 ulp; sqrt equal
// to it (tests/lanes/lanes_test.cpp).
#pragma once

#include <type_traits>
#include <utility>
#include <xsimd/xsimd.hpp>

#include "kernels/autodiff/jet.hpp"
#include "kernels/backend/cpu/simd/lane_sin_cos.hpp"
#include "kernels/core/hd.hpp"

namespace ukes {

template <class T, class A>
struct LaneCount<xsimd::batch<T, A>> {
  static constexpr int value = static_cast<int>(xsimd::batch<T, A>::size);
};

template <class T, class A>
struct MaskOps<xsimd::batch_bool<T, A>> {
  using Mask = xsimd::batch_bool<T, A>;
  static bool all(const Mask& m) { return xsimd::all(m); }
  static bool any(const Mask& m) { return xsimd::any(m); }
  // Lane by lane: a lane scalar, or a jet of them (pick_lanes, kernels/autodiff/jet.hpp).
  template <class X>
  static X pick(const Mask& m, const X& a, const X& b) {
    if constexpr (std::is_same_v<X, xsimd::batch<T, A>>) {
      return xsimd::select(m, a, b);
    } else {
      return pick_lanes(m, a, b);
    }
  }
};

// Whether xsimd::fma is one fused operation on architecture A (on SSE2 it rounds twice).
template <class A>
inline constexpr bool kFusedMultiplyAdd =
    std::is_same_v<A, xsimd::fma3<xsimd::avx2>> || std::is_same_v<A, xsimd::avx512f>;

// One argument reduction for both: ours inline where the multiply-add is fused (lane_sin_cos.hpp),
// else xsimd's sincos (sin's and cos's algorithms on one reduction).
template <class A>
struct LaneMath<xsimd::batch<double, A>> {
  static std::pair<xsimd::batch<double, A>, xsimd::batch<double, A>> sin_cos(
      const xsimd::batch<double, A>& x) {
    if constexpr (kFusedMultiplyAdd<A>) {
      return lanes::sin_cos(x);
    } else {
      return xsimd::sincos(x);
    }
  }
};

template <class A>
struct Epsilon<xsimd::batch<double, A>> {
  static constexpr double value = Epsilon<double>::value;
};

// Lane k of x, and x with lane k set (the lanes' gathers and scatters are through memory: W is a
// handful, and the state machines read and write plain doubles).
template <class A>
inline double lane(const xsimd::batch<double, A>& x, int k) {
  alignas(A::alignment()) double v[xsimd::batch<double, A>::size];
  x.store_aligned(v);
  return v[k];
}

}  // namespace ukes
