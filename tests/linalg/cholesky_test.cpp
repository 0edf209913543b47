// Cholesky factorization and the triangular solves built on it (kernels/linalg/cholesky.hpp),
// checked against the definition L L^T = M and against Eigen's dense solvers.
#include "kernels/linalg/cholesky.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "support/eigen_interop.hpp"

namespace ukes {
namespace {

using namespace ukes::testing;

Eigen::VectorXd random_vector(int n, std::mt19937_64& rng) {
  std::normal_distribution<double> g(0.0, 1.0);
  Eigen::VectorXd v(n);
  for (int i = 0; i < n; ++i) v(i) = g(rng);
  return v;
}

// Factor a random SPD matrix and check L is lower triangular with a positive diagonal and
// L L^T = M to backward-error accuracy: |L L^T - M|_F <= c n eps |M|_F (Cholesky is backward
// stable with |dM| <= c n eps |L||L^T|, and |L|_F^2 = trace(M) <= sqrt(n) |M|_F).
template <class T, int N>
void check_factor(std::uint64_t seed, double rel_tol) {
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < 10; ++trial) {
    const Eigen::MatrixXd Md = random_spd(N, 1.0, rng);
    const Mat<T, N, N> M = from_eigen<T, N, N>(Md);
    Mat<T, N, N> L;
    ASSERT_TRUE(cholesky(M, L));
    for (int i = 0; i < N; ++i) {
      EXPECT_GT(L(i, i), T(0));
      for (int j = i + 1; j < N; ++j) EXPECT_EQ(L(i, j), T(0)) << i << "," << j;
    }
    const Eigen::MatrixXd Le = to_eigen(L);
    const Eigen::MatrixXd Me = to_eigen(M);  // the matrix actually factored (rounded to T)
    const double err = (Le * Le.transpose() - Me).norm() / Me.norm();
    EXPECT_LE(err, rel_tol) << "N=" << N << " trial " << trial;
    // The Cholesky factor with positive diagonal is unique: compare with Eigen's LLT.
    const Eigen::MatrixXd Lref = Eigen::LLT<Eigen::MatrixXd>(Me).matrixL();
    EXPECT_LE((Le - Lref).norm() / Lref.norm(), 1e3 * rel_tol);
  }
}

TEST(Cholesky, FactorReproducesMatrixDouble) {
  constexpr double eps = std::numeric_limits<double>::epsilon();
  check_factor<double, 1>(1, 4 * eps);
  check_factor<double, 2>(2, 8 * eps);
  check_factor<double, 5>(3, 20 * eps);
  check_factor<double, 9>(4, 36 * eps);
  check_factor<double, 32>(5, 128 * eps);
}

TEST(Cholesky, FactorReproducesMatrixFloat) {
  constexpr double eps = std::numeric_limits<float>::epsilon();
  check_factor<float, 1>(6, 4 * eps);
  check_factor<float, 3>(7, 12 * eps);
  check_factor<float, 9>(8, 36 * eps);
  check_factor<float, 32>(9, 128 * eps);
}

TEST(Cholesky, ReadsOnlyLowerTriangle) {
  std::mt19937_64 rng(11);
  const Eigen::MatrixXd Md = random_spd(4, 1.0, rng);
  Mat<double, 4, 4> M = from_eigen<double, 4, 4>(Md), Mg = M;
  for (int i = 0; i < 4; ++i)
    for (int j = i + 1; j < 4; ++j) Mg(i, j) = 1e30;  // garbage above the diagonal
  Mat<double, 4, 4> L, Lg;
  ASSERT_TRUE(cholesky(M, L));
  ASSERT_TRUE(cholesky(Mg, Lg));
  for (int k = 0; k < 16; ++k) EXPECT_EQ(L.a[k], Lg.a[k]);
}

TEST(Cholesky, RejectsMatricesThatAreNotPositiveDefinite) {
  Mat<double, 2, 2> L;
  // Indefinite: eigenvalues 3 and -1.
  Mat<double, 2, 2> indefinite;
  indefinite(0, 0) = 1;
  indefinite(0, 1) = 2;
  indefinite(1, 0) = 2;
  indefinite(1, 1) = 1;
  EXPECT_FALSE(cholesky(indefinite, L));
  // Negative definite.
  Mat<double, 2, 2> negative = Mat<double, 2, 2>::identity();
  negative(0, 0) = -1;
  negative(1, 1) = -1;
  EXPECT_FALSE(cholesky(negative, L));
  // Positive semidefinite, singular (rank 1): the second pivot is exactly 0.
  Mat<double, 2, 2> semidefinite;
  semidefinite(0, 0) = 1;
  semidefinite(0, 1) = 1;
  semidefinite(1, 0) = 1;
  semidefinite(1, 1) = 1;
  EXPECT_FALSE(cholesky(semidefinite, L));
  // Zero matrix; a zero pivot further down; a NaN and an infinite entry.
  Mat<double, 3, 3> L3;
  EXPECT_FALSE(cholesky(Mat<double, 3, 3>::zero(), L3));
  Mat<double, 3, 3> late = Mat<double, 3, 3>::identity();
  late(2, 2) = 0.0;
  EXPECT_FALSE(cholesky(late, L3));
  Mat<double, 3, 3> nan_entry = Mat<double, 3, 3>::identity();
  nan_entry(2, 1) = std::nan("");
  EXPECT_FALSE(cholesky(nan_entry, L3));
  Mat<double, 3, 3> inf_diag = Mat<double, 3, 3>::identity();
  inf_diag(1, 1) = std::numeric_limits<double>::infinity();
  EXPECT_FALSE(cholesky(inf_diag, L3));
  // Nearly singular but positive definite: accepted.
  Mat<double, 2, 2> nearly = semidefinite;
  nearly(1, 1) = 1.0 + 1e-12;
  EXPECT_TRUE(cholesky(nearly, L));
  EXPECT_NEAR(L(1, 1), 1e-6, 1e-9);
  // Float: an indefinite matrix with a negative last pivot.
  Mat<float, 3, 3> f = Mat<float, 3, 3>::identity();
  f(2, 0) = 2.0f;
  f(0, 2) = 2.0f;
  Mat<float, 3, 3> Lf;
  EXPECT_FALSE(cholesky(f, Lf));
}

// Every solve against Eigen's dense LU/triangular solvers on the same (rounded) data.
template <class T, int N>
void check_solves(std::uint64_t seed, double rel_tol) {
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < 5; ++trial) {
    const Mat<T, N, N> M = from_eigen<T, N, N>(random_spd(N, 1.0, rng));
    Mat<T, N, N> L;
    ASSERT_TRUE(cholesky(M, L));
    const Eigen::MatrixXd Le = to_eigen(L);
    const Eigen::MatrixXd Me = to_eigen(M);
    const Eigen::VectorXd bd = random_vector(N, rng);
    Vec<T, N> b;
    for (int i = 0; i < N; ++i) b[i] = T(bd(i));
    const Eigen::VectorXd be = to_eigen(b);

    const Eigen::VectorXd x1 = Le.triangularView<Eigen::Lower>().solve(be);
    EXPECT_LE((to_eigen(solve_lower(L, b)) - x1).norm() / x1.norm(), rel_tol);
    const Eigen::VectorXd x2 = Le.transpose().triangularView<Eigen::Upper>().solve(be);
    EXPECT_LE((to_eigen(solve_lower_transpose(L, b)) - x2).norm() / x2.norm(), rel_tol);
    // M x = b with the matrix M itself (not L L^T) as the reference: includes the factor's error.
    const Eigen::VectorXd x3 = Me.fullPivLu().solve(be);
    EXPECT_LE((to_eigen(cholesky_solve(L, b)) - x3).norm() / x3.norm(), rel_tol);
    const Eigen::VectorXd y = Le * be;
    EXPECT_LE((to_eigen(lower_times(L, b)) - y).norm() / y.norm(), rel_tol);

    // B = A L^-T for a rectangular A (3 rows): B L^T = A.
    Eigen::MatrixXd Ad(3, N);
    for (int i = 0; i < 3; ++i) Ad.row(i) = random_vector(N, rng).transpose();
    const Mat<T, 3, N> A = from_eigen<T, 3, N>(Ad);
    const Eigen::MatrixXd Bref =
        Le.triangularView<Eigen::Lower>().solve(to_eigen(A).transpose()).transpose();
    const Eigen::MatrixXd B = to_eigen(right_solve_lower_transpose(L, A));
    EXPECT_LE((B - Bref).norm() / Bref.norm(), rel_tol);
  }
}

TEST(Cholesky, TriangularSolvesDouble) {
  // Random SPD with shift 1 has condition number at most ~ (4 N + 1); forward errors of the
  // solves are bounded by cond * c N eps.
  check_solves<double, 1>(21, 1e-14);
  check_solves<double, 4>(22, 1e-13);
  check_solves<double, 12>(23, 1e-12);
  check_solves<double, 32>(24, 1e-11);
}

TEST(Cholesky, TriangularSolvesFloat) {
  check_solves<float, 1>(25, 1e-6);
  check_solves<float, 4>(26, 1e-5);
  check_solves<float, 12>(27, 1e-4);
  check_solves<float, 32>(28, 1e-3);
}

TEST(Cholesky, KnownFactor) {
  // M = [[4, 2, -2], [2, 10, 5], [-2, 5, 6]] = L L^T with L = [[2, 0, 0], [1, 3, 0], [-1, 2, 1]].
  Mat<double, 3, 3> M;
  const double m[9] = {4, 2, -2, 2, 10, 5, -2, 5, 6};
  for (int k = 0; k < 9; ++k) M.a[k] = m[k];
  Mat<double, 3, 3> L;
  ASSERT_TRUE(cholesky(M, L));
  const double l[9] = {2, 0, 0, 1, 3, 0, -1, 2, 1};
  for (int k = 0; k < 9; ++k) EXPECT_DOUBLE_EQ(L.a[k], l[k]) << k;
  // M x = b with x = (1, -1, 2): b = M x = (-2, 2, 5).
  Vec<double, 3> b;
  b[0] = -2;
  b[1] = 2;
  b[2] = 5;
  const Vec<double, 3> x = cholesky_solve(L, b);
  EXPECT_NEAR(x[0], 1.0, 1e-15);
  EXPECT_NEAR(x[1], -1.0, 1e-15);
  EXPECT_NEAR(x[2], 2.0, 1e-15);
}

// CholeskyFactor knows when L is diagonal and then solves entry by entry: its results must be the
// dense routines' bit for bit (there the skipped terms are exact zeros), for a diagonal M (every
// shortcut taken), a dense one and a block-diagonal one (none taken).
template <int N, int R>
void check_factor_shortcuts(const Eigen::MatrixXd& Md, bool diagonal, std::mt19937_64& rng) {
  const Mat<double, N, N> M = from_eigen<double, N, N>(Md);
  CholeskyFactor<double, N> F;
  Mat<double, N, N> L;
  ASSERT_TRUE(cholesky(M, F));
  ASSERT_TRUE(cholesky(M, L));
  EXPECT_EQ(F.diagonal, diagonal);
  for (int i = 0; i < N * N; ++i) EXPECT_EQ(F.L.a[i], L.a[i]);
  const Vec<double, N> b = to_vec<double, N>(random_vector(N, rng));
  const Mat<double, R, N> A = from_eigen<double, R, N>(gaussian(R, N, rng));
  const Vec<double, N> x1 = cholesky_solve(F, b), x2 = cholesky_solve(L, b);
  const Vec<double, N> y1 = solve_lower_transpose(F, b), y2 = solve_lower_transpose(L, b);
  const Vec<double, N> z1 = lower_times(F, b), z2 = lower_times(L, b);
  for (int i = 0; i < N; ++i) {
    EXPECT_EQ(x1[i], x2[i]);
    EXPECT_EQ(y1[i], y2[i]);
    EXPECT_EQ(z1[i], z2[i]);
  }
  const Mat<double, R, N> B1 = right_solve_lower_transpose(F, A);
  const Mat<double, R, N> B2 = right_solve_lower_transpose(L, A);
  for (int i = 0; i < R * N; ++i) EXPECT_EQ(B1.a[i], B2.a[i]);
}

TEST(Cholesky, DiagonalFactorShortcutsAgreeBitForBit) {
  std::mt19937_64 rng(911);
  Eigen::VectorXd d(6);
  d << 2.0, 0.3, 7.5, 1.0, 0.125, 4.0;
  check_factor_shortcuts<6, 4>(d.asDiagonal().toDenseMatrix(), true, rng);
  check_factor_shortcuts<6, 4>(random_spd(6, 1.0, rng), false, rng);
  Eigen::MatrixXd block = Eigen::MatrixXd::Identity(5, 5);
  block.topLeftCorner(2, 2) << 2.0, 0.5, 0.5, 1.0;
  check_factor_shortcuts<5, 7>(block, false, rng);
}

}  // namespace
}  // namespace ukes
