// Eigen interop shared by the tests that use Eigen as an independent reference: conversions
// between our fixed-size Vec/Mat and Eigen's dynamic MatrixXd/VectorXd, and the seeded Gaussian
// generators several tests draw their random matrices from. Header-only; include it instead of
// <Eigen/Dense> so the diagnostic pragma below precedes Eigen.
#pragma once

// GCC 12 reports a false -Warray-bounds inside Eigen's vectorized copies of 1-element dynamic
// vectors (GCC bug 106247 family); Eigen is only the test's reference, so silence it here.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Warray-bounds"
#endif
#include <Eigen/Dense>
#include <random>

#include "kernels/linalg/small_matrix.hpp"

namespace ukes::testing {

template <class T, int R, int C>
Eigen::MatrixXd to_eigen(const Mat<T, R, C>& A) {
  Eigen::MatrixXd E(R, C);
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < C; ++j) E(i, j) = double(A(i, j));
  return E;
}

template <class T, int N>
Eigen::VectorXd to_eigen(const Vec<T, N>& v) {
  Eigen::VectorXd E(N);
  for (int i = 0; i < N; ++i) E(i) = double(v[i]);
  return E;
}

// Back to Mat<T, R, C> / Vec<T, N> (zero-initialized, so size-0 shapes are defined), rounding
// each entry to T; E must be R x C / of size N.
template <class T, int R, int C>
Mat<T, R, C> from_eigen(const Eigen::MatrixXd& E) {
  Mat<T, R, C> A = Mat<T, R, C>::zero();
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < C; ++j) A(i, j) = T(E(i, j));
  return A;
}

template <class T, int N>
Vec<T, N> to_vec(const Eigen::VectorXd& E) {
  Vec<T, N> v = Vec<T, N>::zero();
  for (int i = 0; i < N; ++i) v[i] = T(E(i));
  return v;
}

// r x c matrix of independent standard normal entries, drawn row by row.
inline Eigen::MatrixXd gaussian(int r, int c, std::mt19937_64& rng) {
  std::normal_distribution<double> g(0.0, 1.0);
  Eigen::MatrixXd E(r, c);
  for (int i = 0; i < r; ++i)
    for (int j = 0; j < c; ++j) E(i, j) = g(rng);
  return E;
}

// Random SPD matrix B B^T + shift I with B = gaussian(n, n, rng): condition number of order
// (shift + n) / shift.
inline Eigen::MatrixXd random_spd(int n, double shift, std::mt19937_64& rng) {
  const Eigen::MatrixXd B = gaussian(n, n, rng);
  return B * B.transpose() + shift * Eigen::MatrixXd::Identity(n, n);
}

// The same with shift 1: B B^T + I.
inline Eigen::MatrixXd random_spd(int n, std::mt19937_64& rng) { return random_spd(n, 1.0, rng); }

}  // namespace ukes::testing
