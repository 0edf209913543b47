// The Udwadia–Kalaba equation of constrained motion.
//
// Given M qdd = Q for the unconstrained system and the constraints in second-order form
// A qdd = b, the constrained acceleration is
//     qdd = a + L^-T (A L^-T)^+ (b - A a),   a = M^-1 Q,   M = L L^T,
// with the Moore–Penrose inverse ^+ (any factor L of M works; we use Cholesky). For non-ideal
// constraints that do work C (which may depend on the ideal constraint force, e.g. friction):
//     qdd += (I - A_M^+ A) c,   c = M^-1 C,   A_M^+ = L^-T (A L^-T)^+.
// Writing B = A L^-T and y = B^+ (b - A a), the ideal constraint force is M (qdd_ideal - a) = L y,
// and the non-ideal one is M (I - A_M^+ A) c = C - L B^+ A c. No Lagrange multipliers, no
// eigen-decomposition; rows may be dependent, duplicated or zero.
#pragma once

#include "kernels/linalg/cholesky.hpp"
#include "kernels/linalg/pinv.hpp"

namespace ukes {

template <class T, int N>
struct UkSolution {
  Vec<T, N> qdd;
  Vec<T, N> a;             // unconstrained acceleration M^-1 Q
  Vec<T, N> Qc_ideal;      // M A_M^+ (b - A a)
  Vec<T, N> Qc_nonideal;   // M (I - A_M^+ A) c; zero for ideal constraints
  T inconsistency = T(0);  // |A qdd - b|_2: ~0 unless the rows cannot all be met
  int rank = 0;            // numerical rank of A (at the pseudoinverse's tolerance)
  T conditioning = T(1);   // kept singular values of A L^-T: smallest / largest (1 without rows)
  bool mass_ok = false;    // false: M was not positive definite; nothing else is valid
  // Lanes (kernels/core/lanes.hpp) the vector solve could not finish, their pseudoinverse
  // (PseudoInverse::unsolved) or their mass (factor_mass_in_lanes): their caller solves them one
  // by one. False for a plain scalar.
  MaskOf<T> unsolved = MaskOf<T>(false);
};

// The solution when M is not positive definite: mass_ok false and every vector NaN, since none is
// valid (defined, so that observers of a failed evaluation never read stale memory).
template <class T, int N>
UKES_HD UkSolution<T, N> uk_mass_failure() {
  UkSolution<T, N> s;
  for (int j = 0; j < N; ++j) s.qdd[j] = s.a[j] = s.Qc_ideal[j] = s.Qc_nonideal[j] = T(NAN);
  s.mass_ok = false;
  return s;
}

// Whether a prescribed force functor has a force to add now (kActive: whether it may at all).
template <class NonIdeal>
UKES_HD UKES_INLINE bool nonideal_active(const NonIdeal& nonideal) {
  if constexpr (requires { nonideal.active(); }) {
    return nonideal.active();
  } else {
    (void)nonideal;
    return NonIdeal::kActive;
  }
}

// Stands in for the pseudoinverse when there are no constraint rows.
struct NoPseudoInverse {};

// The UK solve once its two factorizations are known: L (M = L L^T; a Mat, or a CholeskyFactor
// that knows when L is diagonal), a = M^-1 Q already in s.a, and the pseudoinverse Bp of
// B = A L^-T (NoPseudoInverse when M = 0). uk_solve below ends here with its own pseudoinverse;
// the staged path ends here with a batched library SVD.
// `nonideal(Qc_ideal, C)` fills the prescribed force C; NonIdeal::kActive says whether there may
// be one and nonideal.active() whether there is (a bucket model knows only at run time).
template <class T, int N, int M, class Factor, class Pinv, class NonIdeal>
UKES_HD void uk_finish(const Factor& L, const Mat<T, M, N>& A, const Vec<T, M>& b, const Pinv& Bp,
                       const NonIdeal& nonideal, UkSolution<T, N>& s) {
  s.mass_ok = true;
  s.qdd = s.a;
  s.Qc_ideal = Vec<T, N>::zero();
  s.Qc_nonideal = Vec<T, N>::zero();
  if constexpr (M > 0) {
    s.rank = Bp.rank();
    s.conditioning = Bp.conditioning();
    if constexpr (kLanes<T>) s.unsolved = Bp.unsolved();

    const Vec<T, N> y = Bp.apply(b - A * s.a);
    s.Qc_ideal = lower_times(L, y);
    s.qdd = s.a + solve_lower_transpose(L, y);

    if constexpr (NonIdeal::kActive) {
      if (nonideal_active(nonideal)) {
        Vec<T, N> C;
        nonideal(s.Qc_ideal, C);
        const Vec<T, N> c = cholesky_solve(L, C);
        const Vec<T, N> z = Bp.apply(A * c);
        s.Qc_nonideal = C - lower_times(L, z);
        s.qdd = s.qdd + (c - solve_lower_transpose(L, z));
      }
    }
    s.inconsistency = norm2(A * s.qdd - b);
  } else if constexpr (NonIdeal::kActive) {
    // Without constraint rows a prescribed "constraint" force is simply an applied force.
    if (nonideal_active(nonideal)) {
      Vec<T, N> C;
      nonideal(s.Qc_ideal, C);
      s.Qc_nonideal = C;
      s.qdd = s.a + cholesky_solve(L, C);
    }
  }
}

// Which pseudoinverse a solve takes: of the whole matrix (FullBlock), or of the leading block a
// bucket model fills (ActiveBlock, kernels/linalg/pinv.hpp).
struct FullBlock {};

// B: a Mat, or a WrittenMatrix (kernels/linalg/pinv.hpp) such as right_solved_lower_transpose.
template <class T, class Source>
UKES_HD UKES_INLINE PseudoInverse<T, Source::rows, Source::cols> make_pinv(const Source& B, T rtol,
                                                                           FullBlock) {
  return PseudoInverse<T, Source::rows, Source::cols>(B, rtol);
}
template <class T, class Source>
UKES_HD UKES_INLINE PseudoInverse<T, Source::rows, Source::cols, true> make_pinv(
    const Source& B, T rtol, ActiveBlock block) {
  return PseudoInverse<T, Source::rows, Source::cols, true>(B, rtol, block);
}

// Whether M = L L^T is positive definite at working precision: every pivot L(j, j)^2 above
// N eps max_j M(j, j). A positive semi-definite M (G G^T with G of low rank, say) often gets
// through the factorization with pivots of rounding size, and then the solve divides by them.
template <class T, int N>
UKES_HD MaskOf<T> definite_lanes(const Mat<T, N, N>& M, const Mat<T, N, N>& L) {
  T largest = T(0), smallest_pivot = L(0, 0) * L(0, 0);
  UKES_LANE_UNROLL
  for (int j = 0; j < N; ++j) {
    largest = max_of(largest, M(j, j));
    smallest_pivot = min_of(smallest_pivot, L(j, j) * L(j, j));
  }
  return smallest_pivot > T(N) * Epsilon<T>::value * largest;
}
template <class T, int N>
UKES_HD bool definite_at_working_precision(const Mat<T, N, N>& M, const Mat<T, N, N>& L) {
  return all_lanes(definite_lanes(M, L));
}

// Lanes: the factor of the mass in every lane where it is definite at working precision, and the
// identity's in the others, which the mask returned holds. Each pass gives the identity to the
// lanes that failed the last one (a pivot, or the test above) and factors again: at most one pass
// a lane more. The lanes' arithmetic is lane by lane, so a lane's factor is the one cholesky()
// gives it whatever its lane-mates; the caller solves the lanes flagged one by one on the scalar
// path, which may augment their mass (factor_mass_or_augmented). Out of line: only a mass failing
// in some lane takes it.
template <class T, int N>
UKES_NOINLINE MaskOf<T> factor_mass_where_definite(const Mat<T, N, N>& mass,
                                                   CholeskyFactor<T, N>& F) {
  MaskOf<T> indefinite = MaskOf<T>(false);
  Mat<T, N, N> trial = mass;
  for (int pass = 0; pass <= LaneCount<T>::value; ++pass) {
    if (cholesky(trial, F)) {
      const MaskOf<T> failed = !definite_lanes(trial, F.L);
      if (!any_lane(failed)) return indefinite;
      indefinite = indefinite || failed;
    } else {
      indefinite = indefinite || stopping_pivot_lanes(F.L);
    }
    for (int i = 0; i < N; ++i)
      for (int j = 0; j < N; ++j) trial(i, j) = pick(indefinite, T(i == j ? 1 : 0), mass(i, j));
  }
  // Only were cholesky() to stop otherwise than stopping_pivot_lanes reads: all to the scalar path.
  const bool factored = cholesky(Mat<T, N, N>::identity(), F);
  (void)factored;
  return MaskOf<T>(true);
}
template <class T, int N>
UKES_INLINE MaskOf<T> factor_mass_in_lanes(const Mat<T, N, N>& mass, CholeskyFactor<T, N>& F) {
  if (cholesky(mass, F) && definite_at_working_precision(mass, F.L)) return MaskOf<T>(false);
  return factor_mass_where_definite(mass, F);
}

// Hands the prescribed force the ideal constraint force of the original mass when the solve runs
// on the augmented one (factor_mass_or_augmented): the two differ by s A^T b.
template <class T, int N, class NonIdeal>
struct ShiftedNonIdeal {
  static constexpr bool kActive = NonIdeal::kActive;
  const NonIdeal& inner;
  Vec<T, N> shift;
  UKES_HD bool active() const { return nonideal_active(inner); }
  UKES_HD void operator()(const Vec<T, N>& Qc_ideal, Vec<T, N>& C) const {
    inner(Qc_ideal - shift, C);
  }
};

// When M is only positive semi-definite (a massless coordinate; Udwadia & Phohomsiri, Proc. R.
// Soc. A 462, 2006) the constrained acceleration is still unique while [M; A] has full column rank.
// The ideal constraint force M qdd - Q lies in range(A^T) and A qdd = b, so adding
// s A^T A qdd = s A^T b to the equation of motion gives (M + s A^T A) qdd = Q + A^T (lambda + s b):
// the same UK problem for the mass M + s A^T A, positive definite exactly when [M; A] has full
// column rank (s > 0 only balances the units). Sets `shift` to s, or to 0 when M itself is
// definite at working precision (the augmented mass is then never formed, and that path keeps its
// rounding), and L to the factor of the mass the solve uses. Returns false when neither mass is
// positive definite.
template <class T, int N, int M>
UKES_HD bool factor_mass_or_augmented(const Mat<T, N, N>& mass, const Mat<T, M, N>& A,
                                      CholeskyFactor<T, N>& L, T& shift) {
  shift = T(0);
  if (cholesky(mass, L) && definite_at_working_precision(mass, L.L)) return true;
  if constexpr (M == 0) {
    (void)A;
    return false;
  } else {
    const Mat<T, N, N> AtA = transpose(A) * A;
    T mass_scale = T(0), rows_scale = T(0);
    for (int j = 0; j < N; ++j) {
      mass_scale = max_of(mass_scale, abs(mass(j, j)));
      rows_scale = max_of(rows_scale, AtA(j, j));
    }
    const T ratio = mass_scale > T(0) && rows_scale > T(0) ? mass_scale / rows_scale : T(1);
    shift = ratio > T(0) && isfinite(ratio) ? ratio : T(1);  // nonzero: says the mass is augmented
    Mat<T, N, N> augmented = mass;
    for (int i = 0; i < N; ++i)
      for (int j = 0; j < N; ++j) augmented(i, j) += shift * AtA(i, j);
    return cholesky(augmented, L);
  }
}

// The semi-definite case runs inline on the definite path's code rather than in a function of its
// own: a call passes M, Q, A and b through memory, and that took 424 B of stack frame and about 20
// registers from every right-hand side on the GPU (ptxas, scara FP64), definite or not.
template <class T, int N, int M, class NonIdeal, class Block = FullBlock>
UKES_HD UkSolution<T, N> uk_solve(const Mat<T, N, N>& mass, const Vec<T, N>& Q,
                                  const Mat<T, M, N>& A, const Vec<T, M>& b,
                                  const NonIdeal& nonideal,
                                  T rank_rtol = default_rank_rtol<T>(M, N), Block block = {}) {
  CholeskyFactor<T, N> L;
  T shift;
  // Lanes: an augmented mass in one lane would change the others' rounding, so the lanes take no
  // augmented mass and leave a mass not definite to the scalar path, lane by lane.
  [[maybe_unused]] MaskOf<T> indefinite = MaskOf<T>(false);
  if constexpr (kLanes<T>) {
    shift = T(0);
    indefinite = factor_mass_in_lanes(mass, L);
  } else if (!factor_mass_or_augmented(mass, A, L, shift)) {
    return uk_mass_failure<T, N>();
  }
  UkSolution<T, N> s;
  s.a = cholesky_solve(L, Q);  // with the augmented mass, its a: M^-1 Q does not exist
  if constexpr (M > 0) {
    const auto Bp = make_pinv(right_solved_lower_transpose(L, A), rank_rtol, block);
    if constexpr (NonIdeal::kActive) {
      if (any_lane(shift != T(0))) {
        const ShiftedNonIdeal<T, N, NonIdeal> shifted{nonideal, shift * transpose_times(A, b)};
        uk_finish(L, A, b, Bp, shifted, s);
      } else {
        uk_finish(L, A, b, Bp, nonideal, s);
      }
    } else {
      uk_finish(L, A, b, Bp, nonideal, s);
    }
    // The ideal force on the original mass: (M + s A^T A) qdd = Q + Qc_ideal + Qc_nonideal gives
    // M qdd - Q - Qc_nonideal = Qc_ideal - s A^T A qdd (without M, which need not stay live).
    if (any_lane(shift != T(0))) s.Qc_ideal = s.Qc_ideal - shift * transpose_times(A, A * s.qdd);
  } else {
    (void)rank_rtol, (void)block;
    uk_finish(L, A, b, NoPseudoInverse{}, nonideal, s);
  }
  if constexpr (kLanes<T>) s.unsolved = s.unsolved || indefinite;
  return s;
}

// The prescribed force of ideal constraints: none.
struct NoNonIdealForce {
  static constexpr bool kActive = false;
  UKES_HD static constexpr bool active() { return false; }
  template <class V>
  UKES_HD void operator()(const V&, V&) const {}
};

}  // namespace ukes
