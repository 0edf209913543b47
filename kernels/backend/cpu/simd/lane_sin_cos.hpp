// sin x and cos x of W lanes at once, from one argument reduction, inline: the lanes' sin and cos
// (LaneMath, kernels/backend/cpu/simd/simd_lanes.hpp) where the multiply-add is fused.
//
// Why not xsimd's: its reduction is a function of its own (every sin and every cos a call), and a
// call in the middle of a right-hand side is a barrier to the compiler. Inline, the sin and cos
// of one angle in the mass matrix, the forces and the constraint rows are computed once: scara's
// lanes ran 1.19x as fast (benchmarks/README.md).
//
// The method is fdlibm's (Sun Microsystems, 1993): x = k pi/2 + r with |r| <= pi/4, then its
// minimax polynomials of sin and cos on [-pi/4, pi/4] and the quadrant k mod 4. The reduction
// takes pi/2 in three parts: with |k| < 2^20, x - k C1 is exact in one fused multiply-add (its
// result is below 1 in magnitude and on the grid of x's and C1's last bits), and the two further
// parts carry pi/2 to about 160 bits. Within 1 ulp of the C library's result over |x| <= 1e6, near
// the multiples of pi/2 too (tests/lanes/lanes_test.cpp); lanes outside that range, infinities
// and NaN take the C library's functions one by one.
#pragma once

#include <cmath>
#include <utility>
#include <xsimd/xsimd.hpp>

namespace ukes::lanes {

// |x| up to which the reduction above is exact (|k| < 2^20).
inline constexpr double kReducedRange = 1e6;

// The C library's sin (kCos false) or cos of the lanes of x outside kReducedRange; the others
// keep `reduced`. Out of line and cold, and declared const (no memory read or written), so that
// the branch to it costs the inline code no stores of the values live across it.
template <class B, bool kCos>
[[gnu::noinline, gnu::cold, gnu::const]] B outside_range(B x, B reduced) {
  constexpr int kWidth = static_cast<int>(B::size);
  alignas(B::arch_type::alignment()) double xs[kWidth], y[kWidth];
  x.store_aligned(xs);
  reduced.store_aligned(y);
  for (int k = 0; k < kWidth; ++k)
    if (!(std::abs(xs[k]) <= kReducedRange)) y[k] = kCos ? std::cos(xs[k]) : std::sin(xs[k]);
  return B::load_aligned(y);
}

// Requires a fused xsimd::fma on B (the exact first step of the reduction).
template <class B>
inline std::pair<B, B> sin_cos(const B& x) {
  // k: x 2/pi rounded to the nearest integer (adding 1.5 2^52 leaves no fraction bits).
  const B round(0x1.8p52);
  const B k = xsimd::fma(x, B(0x1.45f306dc9c883p-1), round) - round;
  B r = xsimd::fnma(k, B(0x1.921fb54442d18p0), x);    // C1: pi/2 rounded; exact
  r = xsimd::fnma(k, B(0x1.1a62633145c07p-54), r);    // C2 = pi/2 - C1, rounded
  r = xsimd::fnma(k, B(-0x1.f1976b7ed8fbcp-110), r);  // C3 = pi/2 - C1 - C2, rounded
  const B z = r * r;
  // fdlibm's __kernel_sin: r + r^3 (S1 + z S2 + ... + z^5 S6).
  B s = xsimd::fma(z, B(1.58969099521155010221e-10), B(-2.50507602534068634195e-08));
  s = xsimd::fma(z, s, B(2.75573137070700676789e-06));
  s = xsimd::fma(z, s, B(-1.98412698298579493134e-04));
  s = xsimd::fma(z, s, B(8.33333333332248946124e-03));
  s = xsimd::fma(z, s, B(-1.66666666666666324348e-01));
  s = xsimd::fma(r * z, s, r);
  // fdlibm's __kernel_cos: 1 - z/2 + z^2 (C1 + ... + z^5 C6), 1 - z/2 summed with its rounding.
  B c = xsimd::fma(z, B(-1.13596475577881948265e-11), B(2.08757232129817482790e-09));
  c = xsimd::fma(z, c, B(-2.75573143513906633035e-07));
  c = xsimd::fma(z, c, B(2.48015872894767294178e-05));
  c = xsimd::fma(z, c, B(-1.38888888888741095749e-03));
  c = xsimd::fma(z, c, B(4.16666666666666019037e-02));
  const B half_z = B(0.5) * z, one_minus = B(1) - half_z;
  c = one_minus + xsimd::fma(z * z, c, (B(1) - one_minus) - half_z);
  // Quadrant q = k mod 4: (sin, cos) = (s, c), (c, -s), (-s, -c), (-c, s).
  const B q = xsimd::fnma(B(4), xsimd::floor(k * B(0.25)), k);
  const auto odd = (q == B(1)) | (q == B(3));
  const B sin_r = xsimd::select(odd, c, s), cos_r = xsimd::select(odd, s, c);
  std::pair<B, B> out{xsimd::select(q >= B(2), -sin_r, sin_r),
                      xsimd::select((q == B(1)) | (q == B(2)), -cos_r, cos_r)};
  out.first = xsimd::select(x == B(0), x, out.first);  // sin(-0) = -0, as the C library's
  if (xsimd::any(!(xsimd::abs(x) <= B(kReducedRange)))) {
    out.first = outside_range<B, false>(x, out.first);
    out.second = outside_range<B, true>(x, out.second);
  }
  return out;
}

}  // namespace ukes::lanes
