// How the generic kernel code branches, so that it also runs on a scalar holding several systems
// at once: the CPU backend's SIMD lanes (kernels/backend/cpu/simd/simd_lanes.hpp), where a
// comparison gives one truth per lane. For a plain scalar (float, double, the autodiff types) a
// comparison gives a bool and every helper here is the plain branch, so the GPU and the scalar CPU
// path compile what they compiled before.
//
// Generic code branches on a comparison only through these:
//  - pick(mask, a, b): a where the mask holds, else b, lane by lane (a ternary for a bool);
//  - all_lanes(mask): a shortcut that may be taken only when every lane agrees, such as skipping
//    an update that is an exact zero in every lane;
//  - any_lane(mask).
// A lane type's mask converts to no bool, so a branch left on a bare comparison fails to compile
// rather than deciding for all lanes by one of them.
//
// Included by kernels/core/hd.hpp, after its macros and before the helpers that branch.
#pragma once

namespace ukes {

// Specialized for the lanes' masks next to their type.
template <class Mask>
struct MaskOps;

template <>
struct MaskOps<bool> {
  UKES_HD static constexpr bool all(bool b) { return b; }
  UKES_HD static constexpr bool any(bool b) { return b; }
  template <class T>
  UKES_HD static constexpr const T& pick(bool b, const T& x, const T& y) {
    return b ? x : y;
  }
};

// What a lane type computes better together than its separate functions: sin_cos(x), the pair
// {sin x, cos x} from one argument reduction (a jet's sin and cos need both,
// kernels/autodiff/jet.hpp). Specialized next to the lane type; a plain scalar calls sin and cos.
template <class T>
struct LaneMath;

// The number of systems a scalar type holds: 1 unless it is a lane type.
template <class T>
struct LaneCount {
  static constexpr int value = 1;
};
template <class T>
inline constexpr bool kLanes = LaneCount<T>::value > 1;

// What a comparison of two T gives: bool, or a lane type's mask.
template <class T>
using MaskOf = decltype(T(0) < T(0));

template <class Mask>
UKES_HD UKES_INLINE constexpr bool all_lanes(const Mask& m) {
  return MaskOps<Mask>::all(m);
}
template <class Mask>
UKES_HD UKES_INLINE constexpr bool any_lane(const Mask& m) {
  return MaskOps<Mask>::any(m);
}
// A reference to the operand chosen for a bool; a new value, lane by lane, for a mask.
template <class Mask, class T>
UKES_HD UKES_INLINE constexpr decltype(auto) pick(const Mask& m, const T& a, const T& b) {
  return MaskOps<Mask>::pick(m, a, b);
}

}  // namespace ukes
