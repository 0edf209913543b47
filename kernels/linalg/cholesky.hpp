// Cholesky factorization M = L L^T of a symmetric positive definite matrix and the triangular
// solves built on it. The UK equation needs any factor of M; the Cholesky factor is the cheapest.
#pragma once

#include "kernels/linalg/small_matrix.hpp"

namespace ukes {

// Returns false when M is not numerically positive definite or holds a non-finite entry (in any
// lane, kernels/core/lanes.hpp), L then holding the pivot that stopped it (stopping_pivot_lanes).
// Only the lower triangle of M is read; the strict upper triangle of L is zeroed.
//
// Right-looking: once column j is final it is subtracted from the columns right of it. Each entry
// still receives its terms L(i, k) L(j, k) in ascending k, so the rounding is the left-looking
// (dot-product) form's, but the updates are independent of one another instead of one dependent
// chain per entry, and a zero L(k, j) skips its whole update, as in reference BLAS: mass
// matrices are often sparse, even diagonal.
template <class T, int N>
UKES_HD bool cholesky(const Mat<T, N, N>& M, Mat<T, N, N>& L) {
  L = M;
  UKES_LANE_UNROLL
  for (int j = 0; j < N; ++j) {
    const T d = L(j, j);
    if (!all_lanes((d > T(0)) && isfinite(d))) return false;
    const T ljj = sqrt(d);
    const T inv_ljj = T(1) / ljj;
    L(j, j) = ljj;
    UKES_LANE_UNROLL
    for (int i = j + 1; i < N; ++i) {
      L(i, j) *= inv_ljj;
      L(j, i) = T(0);
    }
    UKES_LANE_UNROLL
    for (int k = j + 1; k < N; ++k) {
      const T lkj = L(k, j);
      if (all_lanes(lkj == T(0))) continue;
      UKES_LANE_UNROLL
      for (int i = k; i < N; ++i) L(i, k) -= L(i, j) * lkj;
    }
  }
  return true;
}

// Lanes: after cholesky() returned false, the lanes whose pivot stopped it. It stops at the first
// pivot d = L(j, j) not positive and finite in some lane, and leaves d there, the pivots before it
// replaced by their square roots, positive and finite in every lane.
template <class T, int N>
UKES_HD MaskOf<T> stopping_pivot_lanes(const Mat<T, N, N>& L) {
  UKES_LANE_UNROLL
  for (int j = 0; j < N; ++j) {
    const MaskOf<T> stopped = !((L(j, j) > T(0)) && isfinite(L(j, j)));
    if (any_lane(stopped)) return stopped;
  }
  return MaskOf<T>(false);
}

// 1 / diag(L). The substitutions below multiply by these: the divisions, independent of one
// another, then overlap instead of lengthening the chain of dependent steps.
template <class T, int N>
UKES_HD Vec<T, N> inverse_diagonal(const Mat<T, N, N>& L) {
  Vec<T, N> d;
  UKES_LANE_UNROLL
  for (int i = 0; i < N; ++i) d[i] = T(1) / L(i, i);
  return d;
}

// Solves L x = b by forward substitution.
template <class T, int N>
UKES_HD Vec<T, N> solve_lower(const Mat<T, N, N>& L, const Vec<T, N>& b) {
  const Vec<T, N> inv = inverse_diagonal(L);
  Vec<T, N> x;
  UKES_LANE_UNROLL
  for (int i = 0; i < N; ++i) {
    T s = b[i];
    UKES_LANE_UNROLL
    for (int k = 0; k < i; ++k) s -= L(i, k) * x[k];
    x[i] = s * inv[i];
  }
  return x;
}

// Solves L^T x = b by back substitution (L^T is upper triangular).
template <class T, int N>
UKES_HD Vec<T, N> solve_lower_transpose(const Mat<T, N, N>& L, const Vec<T, N>& b) {
  const Vec<T, N> inv = inverse_diagonal(L);
  Vec<T, N> x;
  UKES_LANE_UNROLL
  for (int i = N - 1; i >= 0; --i) {
    T s = b[i];
    UKES_LANE_UNROLL
    for (int k = i + 1; k < N; ++k) s -= L(k, i) * x[k];
    x[i] = s * inv[i];
  }
  return x;
}

// Solves M x = b given M = L L^T.
template <class T, int N>
UKES_HD Vec<T, N> cholesky_solve(const Mat<T, N, N>& L, const Vec<T, N>& b) {
  return solve_lower_transpose(L, solve_lower(L, b));
}

// L x for lower-triangular L (the strict upper triangle is not read).
template <class T, int N>
UKES_HD Vec<T, N> lower_times(const Mat<T, N, N>& L, const Vec<T, N>& x) {
  Vec<T, N> y;
  UKES_LANE_UNROLL
  for (int i = 0; i < N; ++i) {
    T s = T(0);
    UKES_LANE_UNROLL
    for (int k = 0; k <= i; ++k) s += L(i, k) * x[k];
    y[i] = s;
  }
  return y;
}

// Writes B = A L^-T through at(r, i) -> T& (the caller's storage for B, or for B^T), i.e. solves
// L B^T = A^T by forward substitution on all R columns of A^T at once: after row i of B^T is final
// it is subtracted from the rows below, so the inner loops run over R independent columns
// (vectorizable, no reduction) with the same operation order as row-by-row substitution, hence the
// same rounding.
template <class T, int R, int N, class At>
UKES_HD void write_right_solve_lower_transpose(const Mat<T, N, N>& L, const Mat<T, R, N>& A,
                                               At&& at) {
  const Vec<T, N> inv = inverse_diagonal(L);
  UKES_LANE_UNROLL
  for (int i = 0; i < N; ++i) {
    UKES_LANE_UNROLL
    for (int r = 0; r < R; ++r) at(r, i) = A(r, i);
  }
  UKES_LANE_UNROLL
  for (int i = 0; i < N; ++i) {
    UKES_LANE_UNROLL
    for (int r = 0; r < R; ++r) at(r, i) *= inv[i];
    UKES_LANE_UNROLL
    for (int j = i + 1; j < N; ++j) {
      const T l = L(j, i);
      if (all_lanes(l == T(0)))
        continue;  // as reference BLAS trsm: M is often sparse, even diagonal
      UKES_LANE_UNROLL
      for (int r = 0; r < R; ++r) at(r, j) -= l * at(r, i);
    }
  }
}

template <class T, int R, int N>
UKES_HD Mat<T, R, N> right_solve_lower_transpose(const Mat<T, N, N>& L, const Mat<T, R, N>& A) {
  Mat<T, N, R> X;  // B^T: the substitution's inner loops run along its rows
  write_right_solve_lower_transpose(L, A, [&X](int r, int i) -> T& { return X(i, r); });
  return transpose(X);
}

// The factor with what the solves exploit: the mass matrices of Cartesian coordinates (particles,
// bars' centres and angles, robots in the plane) are diagonal, and then each triangular operation
// is one multiplication per entry instead of a dense triangle of them. For finite operands the
// results are the dense routines' bit for bit: there the skipped terms are exact zeros.
template <class T, int N>
struct CholeskyFactor {
  Mat<T, N, N> L;
  bool diagonal = false;
};

template <class T, int N>
UKES_HD bool cholesky(const Mat<T, N, N>& M, CholeskyFactor<T, N>& F) {
  if (!cholesky(M, F.L)) return false;
  F.diagonal = true;
  UKES_LANE_UNROLL
  for (int i = 1; i < N; ++i) {
    UKES_LANE_UNROLL
    for (int k = 0; k < i; ++k) F.diagonal = F.diagonal && all_lanes(F.L(i, k) == T(0));
  }
  return true;
}

template <class T, int N>
UKES_HD Vec<T, N> solve_lower_transpose(const CholeskyFactor<T, N>& F, const Vec<T, N>& b) {
  if (!F.diagonal) return solve_lower_transpose(F.L, b);
  const Vec<T, N> inv = inverse_diagonal(F.L);
  Vec<T, N> x;
  UKES_LANE_UNROLL
  for (int i = 0; i < N; ++i) x[i] = b[i] * inv[i];
  return x;
}

template <class T, int N>
UKES_HD Vec<T, N> cholesky_solve(const CholeskyFactor<T, N>& F, const Vec<T, N>& b) {
  if (!F.diagonal) return cholesky_solve(F.L, b);
  return solve_lower_transpose(F, solve_lower_transpose(F, b));  // a diagonal L is its transpose
}

template <class T, int N>
UKES_HD Vec<T, N> lower_times(const CholeskyFactor<T, N>& F, const Vec<T, N>& x) {
  if (!F.diagonal) return lower_times(F.L, x);
  Vec<T, N> y;
  UKES_LANE_UNROLL
  for (int i = 0; i < N; ++i) y[i] = F.L(i, i) * x[i];
  return y;
}

template <class T, int R, int N, class At>
UKES_HD void write_right_solve_lower_transpose(const CholeskyFactor<T, N>& F, const Mat<T, R, N>& A,
                                               At&& at) {
  if (!F.diagonal) return write_right_solve_lower_transpose(F.L, A, at);
  const Vec<T, N> inv = inverse_diagonal(F.L);
  UKES_LANE_UNROLL
  for (int r = 0; r < R; ++r) {
    UKES_LANE_UNROLL
    for (int i = 0; i < N; ++i) at(r, i) = A(r, i) * inv[i];
  }
}

template <class T, int R, int N>
UKES_HD Mat<T, R, N> right_solve_lower_transpose(const CholeskyFactor<T, N>& F,
                                                 const Mat<T, R, N>& A) {
  if (!F.diagonal) return right_solve_lower_transpose(F.L, A);
  Mat<T, R, N> B;
  write_right_solve_lower_transpose(F, A, [&B](int r, int i) -> T& { return B(r, i); });
  return B;
}

// B = A L^-T as a WrittenMatrix (kernels/linalg/pinv.hpp): a pseudoinverse solves it into its own
// storage, so that no B lives beside it (on the GPU, one matrix less in every kernel's frame).
template <class Factor, class T, int R, int N>
struct RightSolvedLowerTranspose {
  static constexpr int rows = R;
  static constexpr int cols = N;
  const Factor& L;
  const Mat<T, R, N>& A;
  template <class At>
  UKES_HD void write(At&& at) const {
    write_right_solve_lower_transpose(L, A, at);
  }
};

template <class Factor, class T, int R, int N>
UKES_HD RightSolvedLowerTranspose<Factor, T, R, N> right_solved_lower_transpose(
    const Factor& L, const Mat<T, R, N>& A) {
  return {L, A};
}

}  // namespace ukes
