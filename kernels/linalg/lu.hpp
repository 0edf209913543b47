// LU factorization with partial pivoting of a small square matrix, for the stiff integrator's
// linear systems (kernels/integrators/rosenbrock.hpp), which are neither symmetric nor definite.
// Golub & Van Loan, "Matrix Computations", 4th ed., algorithm 3.4.1 (row interchanges, the
// multipliers stored below the diagonal).
#pragma once

#include "kernels/linalg/small_matrix.hpp"

namespace ukes {

template <class T, int N>
struct LuFactor {
  Mat<T, N, N> lu;  // U on and above the diagonal, the unit-lower factor's multipliers below
  int pivot[N > 0 ? N : 1];  // row k was interchanged with row pivot[k] at step k
};

// Factors the leading size x size block of `a` (a bucket model's padding past it is left alone
// and never read). Returns false when a pivot is zero or not finite: the matrix is singular at
// working precision, and a caller shortens its step.
template <class T, int N>
UKES_HD bool lu_factor(const Mat<T, N, N>& a, LuFactor<T, N>& f, int size = N) {
  f.lu = a;
  for (int k = 0; k < size; ++k) {
    int p = k;
    for (int i = k + 1; i < size; ++i)
      if (abs(f.lu(i, k)) > abs(f.lu(p, k))) p = i;
    f.pivot[k] = p;
    if (p != k)
      for (int j = 0; j < size; ++j) {
        const T swap = f.lu(k, j);
        f.lu(k, j) = f.lu(p, j);
        f.lu(p, j) = swap;
      }
    const T pivot = f.lu(k, k);
    if (!(abs(pivot) > T(0)) || !isfinite(pivot)) return false;
    const T inverse = T(1) / pivot;
    for (int i = k + 1; i < size; ++i) {
      const T l = f.lu(i, k) * inverse;
      f.lu(i, k) = l;
      if (l == T(0)) continue;
      for (int j = k + 1; j < size; ++j) f.lu(i, j) -= l * f.lu(k, j);
    }
  }
  return true;
}

// x = A^-1 b over the leading size components (those past it are returned as given).
template <class T, int N>
UKES_HD Vec<T, N> lu_solve(const LuFactor<T, N>& f, Vec<T, N> x, int size = N) {
  if constexpr (N > 1) {  // (a 1 x 1 matrix has no interchanges; GCC would warn of x[p])
    for (int k = 0; k < size; ++k) {
      const int p = f.pivot[k];
      if (p != k) {
        const T swap = x[k];
        x[k] = x[p];
        x[p] = swap;
      }
    }
  }
  for (int i = 1; i < size; ++i)
    for (int j = 0; j < i; ++j) x[i] -= f.lu(i, j) * x[j];
  for (int i = size - 1; i >= 0; --i) {
    for (int j = i + 1; j < size; ++j) x[i] -= f.lu(i, j) * x[j];
    x[i] = x[i] / f.lu(i, i);
  }
  return x;
}

}  // namespace ukes
