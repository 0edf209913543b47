// Cholesky factorization M = L L^T of a symmetric positive definite matrix and the triangular
// solves built on it. The UK equation needs any factor of M; the Cholesky factor is the cheapest.
#pragma once

#include "kernels/linalg/small_matrix.hpp"

namespace ukes {

// Returns false (and leaves L unspecified) when M is not numerically positive definite or holds a
// non-finite entry. Only the lower triangle of M is read; the strict upper triangle of L is zeroed.
template <class T, int N>
UKES_HD bool cholesky(const Mat<T, N, N>& M, Mat<T, N, N>& L) {
  for (int j = 0; j < N; ++j) {
    T d = M(j, j);
    for (int k = 0; k < j; ++k) d -= L(j, k) * L(j, k);
    if (!(d > T(0)) || !isfinite(d)) return false;
    const T ljj = sqrt(d);
    const T inv_ljj = T(1) / ljj;
    L(j, j) = ljj;
    for (int i = j + 1; i < N; ++i) {
      T s = M(i, j);
      for (int k = 0; k < j; ++k) s -= L(i, k) * L(j, k);
      L(i, j) = s * inv_ljj;
    }
    for (int i = 0; i < j; ++i) L(i, j) = T(0);
  }
  return true;
}

// Solves L x = b by forward substitution.
template <class T, int N>
UKES_HD Vec<T, N> solve_lower(const Mat<T, N, N>& L, const Vec<T, N>& b) {
  Vec<T, N> x;
  for (int i = 0; i < N; ++i) {
    T s = b[i];
    for (int k = 0; k < i; ++k) s -= L(i, k) * x[k];
    x[i] = s / L(i, i);
  }
  return x;
}

// Solves L^T x = b by back substitution (L^T is upper triangular).
template <class T, int N>
UKES_HD Vec<T, N> solve_lower_transpose(const Mat<T, N, N>& L, const Vec<T, N>& b) {
  Vec<T, N> x;
  for (int i = N - 1; i >= 0; --i) {
    T s = b[i];
    for (int k = i + 1; k < N; ++k) s -= L(k, i) * x[k];
    x[i] = s / L(i, i);
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
  for (int i = 0; i < N; ++i) {
    T s = T(0);
    for (int k = 0; k <= i; ++k) s += L(i, k) * x[k];
    y[i] = s;
  }
  return y;
}

// Returns B = A L^-T, i.e. solves B L^T = A row by row (each row of B: L b^T = a^T).
template <class T, int R, int N>
UKES_HD Mat<T, R, N> right_solve_lower_transpose(const Mat<T, N, N>& L, const Mat<T, R, N>& A) {
  Vec<T, N> inv_diag;  // N divisions instead of R N
  for (int i = 0; i < N; ++i) inv_diag[i] = T(1) / L(i, i);
  Mat<T, R, N> B;
  for (int r = 0; r < R; ++r) {
    for (int i = 0; i < N; ++i) {
      T s = A(r, i);
      for (int k = 0; k < i; ++k) s -= L(i, k) * B(r, k);
      B(r, i) = s * inv_diag[i];
    }
  }
  return B;
}

}  // namespace ukes
