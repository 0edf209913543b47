// Fixed-size dense vectors and matrices for the small systems of constrained dynamics.
//
// Sizes are compile-time so that a system's whole state lives in registers on the GPU and on the
// stack on the CPU: no heap, ever. Zero-sized shapes are legal (a model without constraint rows has
// m = 0), so storage always reserves at least one element. Matrices are row-major.
#pragma once

#include "kernels/core/hd.hpp"

namespace ukes {

inline constexpr int kMaxDim = 32;                // capacity limit of matrices (n, m <= 32)
inline constexpr int kMaxStateDim = 2 * kMaxDim;  // vectors also hold whole states (q, qd)

template <class T, int N>
struct Vec {
  static_assert(N >= 0 && N <= kMaxStateDim, "Vec size out of range");
  static constexpr int size = N;
  T v[N > 0 ? N : 1];

  UKES_HD UKES_INLINE T& operator[](int i) { return v[i]; }
  UKES_HD UKES_INLINE const T& operator[](int i) const { return v[i]; }

  UKES_HD static Vec zero() {
    Vec r;
    UKES_LANE_UNROLL
    for (int i = 0; i < (N > 0 ? N : 1); ++i) r.v[i] = T(0);
    return r;
  }
};

template <class T, int R, int C>
struct Mat {
  static_assert(R >= 0 && R <= kMaxDim && C >= 0 && C <= kMaxDim, "Mat shape out of range");
  static constexpr int rows = R;
  static constexpr int cols = C;
  T a[(R * C) > 0 ? R* C : 1];

  UKES_HD UKES_INLINE T& operator()(int i, int j) { return a[i * C + j]; }
  UKES_HD UKES_INLINE const T& operator()(int i, int j) const { return a[i * C + j]; }

  UKES_HD static Mat zero() {
    Mat r;
    UKES_LANE_UNROLL
    for (int i = 0; i < ((R * C) > 0 ? R * C : 1); ++i) r.a[i] = T(0);
    return r;
  }
  UKES_HD static Mat identity() {
    Mat r = zero();
    UKES_LANE_UNROLL
    for (int i = 0; i < (R < C ? R : C); ++i) r(i, i) = T(1);
    return r;
  }
};

template <class T, int R, int C>
UKES_HD Mat<T, C, R> transpose(const Mat<T, R, C>& A) {
  Mat<T, C, R> t;
  UKES_LANE_UNROLL
  for (int i = 0; i < R; ++i) {
    UKES_LANE_UNROLL
    for (int j = 0; j < C; ++j) t(j, i) = A(i, j);
  }
  return t;
}

template <class T, int R, int K, int C>
UKES_HD Mat<T, R, C> operator*(const Mat<T, R, K>& A, const Mat<T, K, C>& B) {
  Mat<T, R, C> P = Mat<T, R, C>::zero();
  UKES_LANE_UNROLL
  for (int i = 0; i < R; ++i) {
    UKES_LANE_UNROLL
    for (int k = 0; k < K; ++k) {
      UKES_LANE_UNROLL
      for (int j = 0; j < C; ++j) P(i, j) += A(i, k) * B(k, j);
    }
  }
  return P;
}

template <class T, int R, int C>
UKES_HD Vec<T, R> operator*(const Mat<T, R, C>& A, const Vec<T, C>& x) {
  Vec<T, R> y;
  UKES_LANE_UNROLL
  for (int i = 0; i < R; ++i) {
    T s = T(0);
    UKES_LANE_UNROLL
    for (int j = 0; j < C; ++j) s += A(i, j) * x[j];
    y[i] = s;
  }
  return y;
}

// A^T x without forming the transpose.
template <class T, int R, int C>
UKES_HD Vec<T, C> transpose_times(const Mat<T, R, C>& A, const Vec<T, R>& x) {
  Vec<T, C> y = Vec<T, C>::zero();
  UKES_LANE_UNROLL
  for (int i = 0; i < R; ++i) {
    UKES_LANE_UNROLL
    for (int j = 0; j < C; ++j) y[j] += A(i, j) * x[i];
  }
  return y;
}

template <class T, int N>
UKES_HD Vec<T, N> operator+(const Vec<T, N>& a, const Vec<T, N>& b) {
  Vec<T, N> r;
  UKES_LANE_UNROLL
  for (int i = 0; i < N; ++i) r[i] = a[i] + b[i];
  return r;
}

template <class T, int N>
UKES_HD Vec<T, N> operator-(const Vec<T, N>& a, const Vec<T, N>& b) {
  Vec<T, N> r;
  UKES_LANE_UNROLL
  for (int i = 0; i < N; ++i) r[i] = a[i] - b[i];
  return r;
}

template <class T, int N>
UKES_HD Vec<T, N> operator*(T s, const Vec<T, N>& a) {
  Vec<T, N> r;
  UKES_LANE_UNROLL
  for (int i = 0; i < N; ++i) r[i] = s * a[i];
  return r;
}

template <class T, int N>
UKES_HD T dot(const Vec<T, N>& a, const Vec<T, N>& b) {
  T s = T(0);
  UKES_LANE_UNROLL
  for (int i = 0; i < N; ++i) s += a[i] * b[i];
  return s;
}

template <class T, int N>
UKES_HD T norm2(const Vec<T, N>& a) {
  return sqrt(dot(a, a));
}

template <class T, int N>
UKES_HD T norm_inf(const Vec<T, N>& a) {
  T s = T(0);
  UKES_LANE_UNROLL
  for (int i = 0; i < N; ++i) s = max_of(s, abs(a[i]));
  return s;
}

}  // namespace ukes
