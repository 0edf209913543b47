// The Moore–Penrose pseudoinverse of kernels/linalg/pinv.hpp (one-sided Jacobi SVD).
//
// Tolerance semantics under test: with rtol = max(m, n) eps by default (or the caller's rtol), a
// singular value s is kept when s > rtol * s_max; the rank is the number kept, and the
// pseudoinverse inverts exactly the kept part. A zero matrix has rank 0 and pseudoinverse 0.
//
// Checked on every shape class (square, wide m < n, tall m > n, sizes 1 to 32) for full-rank and
// rank-deficient matrices (dependent, duplicated and zero rows, rank 1, zero matrix):
//  - the four Penrose conditions A X A = A, X A X = X, (A X)^T = A X, (X A)^T = X A;
//  - the rank against the constructed rank;
//  - agreement with an independent pseudoinverse V S^+ U^T from Eigen's JacobiSVD with the same
//    relative threshold;
//  - the M-weighted inverse G = L^-T (A L^-T)^+ of Udwadia & Kalaba, "On constrained motion"
//    (eq. 13a-d): A G A = A, G A G = G, (A G)^T = A G, (M G A)^T = M G A.
#include "kernels/linalg/pinv.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>

#include "kernels/linalg/cholesky.hpp"
#include "support/eigen_interop.hpp"

namespace ukes {
namespace {

using namespace ukes::testing;

// Small integers: products of these are exact in float and double, so a constructed rank is the
// exact rank of the stored matrix.
Eigen::MatrixXd integers(int r, int c, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> u(-3, 3);
  Eigen::MatrixXd E(r, c);
  for (int i = 0; i < r; ++i)
    for (int j = 0; j < c; ++j) E(i, j) = u(rng);
  return E;
}

Eigen::MatrixXd random_orthonormal_columns(int n, int k, std::mt19937_64& rng) {
  const Eigen::MatrixXd G = gaussian(n, n, rng);
  const Eigen::MatrixXd Q = Eigen::HouseholderQR<Eigen::MatrixXd>(G).householderQ();
  return Q.leftCols(k);
}

// U diag(s) V^T with random orthonormal U, V and singular values in [1, 10]: rank k, condition
// number of the kept part at most 10. Rounding leaves the other singular values at ~eps.
Eigen::MatrixXd with_rank(int r, int c, int k, std::mt19937_64& rng) {
  if (k == 0) return Eigen::MatrixXd::Zero(r, c);
  std::uniform_real_distribution<double> u(1.0, 10.0);
  Eigen::VectorXd s(k);
  for (int i = 0; i < k; ++i) s(i) = u(rng);
  s(0) = 10.0;
  s(k - 1) = 1.0;
  return random_orthonormal_columns(r, k, rng) * s.asDiagonal() *
         random_orthonormal_columns(c, k, rng).transpose();
}

// Independent reference: V S^+ U^T from Eigen's two-sided Jacobi SVD, keeping s > rtol * s_max.
struct EigenPinv {
  Eigen::MatrixXd X;
  int rank = 0;
  double kappa = 1.0;  // s_max / smallest kept s
};

EigenPinv eigen_pinv(const Eigen::MatrixXd& A, double rtol) {
  Eigen::JacobiSVD<Eigen::MatrixXd> svd(A, Eigen::ComputeFullU | Eigen::ComputeFullV);
  const Eigen::VectorXd& s = svd.singularValues();
  EigenPinv r;
  r.X = Eigen::MatrixXd::Zero(A.cols(), A.rows());
  const double smax = s.size() > 0 ? s(0) : 0.0;
  for (int k = 0; k < s.size(); ++k) {
    if (s(k) > rtol * smax && s(k) > 0.0) {
      r.X += svd.matrixV().col(k) * (1.0 / s(k)) * svd.matrixU().col(k).transpose();
      ++r.rank;
      r.kappa = smax / s(k);
    }
  }
  return r;
}

template <class T, int N>
double to_eigen_norm(const Vec<T, N>& v) {
  double s = 0.0;
  for (int i = 0; i < N; ++i) s += double(v[i]) * double(v[i]);
  return std::sqrt(s);
}

struct PenroseResiduals {
  double axa, xax, ax_sym, xa_sym;
};

PenroseResiduals penrose(const Eigen::MatrixXd& A, const Eigen::MatrixXd& X) {
  PenroseResiduals p;
  const double na = std::max(A.norm(), 1e-300), nx = std::max(X.norm(), 1e-300);
  p.axa = (A * X * A - A).norm() / na;
  p.xax = (X * A * X - X).norm() / nx;
  const Eigen::MatrixXd AX = A * X, XA = X * A;
  p.ax_sym =
      (AX - AX.transpose()).norm();  // A X and X A are orthogonal projectors: norm sqrt(rank)
  p.xa_sym = (XA - XA.transpose()).norm();
  return p;
}

template <class T>
constexpr double eps_of() {
  return std::numeric_limits<T>::epsilon();
}

// Runs every check on one matrix stored as Mat<T, R, C>.
//
// Bounds (measured figures in the comments are the worst over this file's matrices):
//  - Penrose residuals, relative (|AXA - A| / |A|, |XAX - X| / |X|, and the absolute asymmetry of
//    the projectors AX and XA, whose norm is sqrt(rank)): 8 max(m, n) eps * max(1, kappa / 10),
//    kappa = s_max / smallest kept s. Worst measured: 0.32 of the bound (double), 0.05 (float).
//  - Agreement with Eigen's pseudoinverse, |X - X_ref|_F / |X_ref|_F: double 1e-12 * max(1,
//    kappa / 100) (worst measured 2.4e-14 at kappa 146); float 8 max(m, n) eps_f * max(1,
//    kappa / 10) (worst measured 5.2e-6 at kappa 125).
template <class T, int R, int C>
void check_matrix(const Eigen::MatrixXd& Ad, int expected_rank, const std::string& what) {
  SCOPED_TRACE(what + " " + std::to_string(R) + "x" + std::to_string(C) + " rank " +
               std::to_string(expected_rank));
  const Mat<T, R, C> A = from_eigen<T, R, C>(Ad);
  const Eigen::MatrixXd Ae = to_eigen(A);  // exactly the matrix we invert
  const PseudoInverse<T, R, C> P(A);
  const Mat<T, C, R> Xm = P.matrix();
  const Eigen::MatrixXd X = to_eigen(Xm);

  EXPECT_EQ(P.rank(), expected_rank);
  const EigenPinv ref =
      eigen_pinv(Ae, default_rank_rtol<double>(R, C) * (eps_of<T>() / eps_of<double>()));
  EXPECT_EQ(ref.rank, expected_rank) << "the reference disagrees with the construction";

  if (expected_rank == 0) {
    for (int k = 0; k < R * C; ++k) EXPECT_EQ(Xm.a[k], T(0));
    return;
  }
  constexpr double kDim = R > C ? R : C;
  const double tol = 8.0 * kDim * eps_of<T>() * std::max(1.0, ref.kappa / 10.0);
  const double agree = sizeof(T) == 8 ? 1e-12 * std::max(1.0, ref.kappa / 100.0) : tol;
  const PenroseResiduals p = penrose(Ae, X);
  EXPECT_LE(p.axa, tol) << "A X A = A";
  EXPECT_LE(p.xax, tol) << "X A X = X";
  EXPECT_LE(p.ax_sym, tol) << "(A X)^T = A X";
  EXPECT_LE(p.xa_sym, tol) << "(X A)^T = X A";
  const double diff = (X - ref.X).norm() / ref.X.norm();
  EXPECT_LE(diff, agree) << "agreement with Eigen JacobiSVD";

  // apply() is the same operator as matrix(), and pinv() the same as PseudoInverse.
  std::mt19937_64 rng(99);
  std::normal_distribution<double> g(0.0, 1.0);
  Vec<T, R> r;
  for (int i = 0; i < R; ++i) r[i] = T(g(rng));
  const Vec<T, C> y = P.apply(r);
  const Vec<T, C> y2 = Xm * r;
  // Same operator, different summation order: differences are rounding relative to |X| |r|.
  const double scale = X.norm() * to_eigen_norm(r);
  for (int j = 0; j < C; ++j)
    EXPECT_NEAR(double(y[j]), double(y2[j]), 4 * kDim * eps_of<T>() * scale) << j;
  // The Jacobi sweeps converged (rank-deficient inputs included: noise columns must not keep
  // the iteration rotating until the sweep cap).
  EXPECT_LT(P.sweeps(), 16);
  const Mat<T, C, R> X2 = pinv(A);
  for (int k = 0; k < R * C; ++k) EXPECT_EQ(X2.a[k], Xm.a[k]);
}

// One shape, many structures: random Gaussian (full rank, generic conditioning), controlled
// singular values in [1, 10] at full rank, rank min-1 and rank 1, the zero matrix, and exact
// integer structures: rank-1 outer product, duplicated row, zero row, dependent row (row 0 +
// 2 row 1) and a duplicated column.
template <class T, int R, int C>
void check_shape(std::uint64_t seed) {
  constexpr int kMin = R < C ? R : C;
  std::mt19937_64 rng(seed);

  check_matrix<T, R, C>(gaussian(R, C, rng), kMin, "gaussian");
  check_matrix<T, R, C>(with_rank(R, C, kMin, rng), kMin, "full rank");
  if (kMin > 1) {
    check_matrix<T, R, C>(with_rank(R, C, kMin - 1, rng), kMin - 1, "rank min-1");
    check_matrix<T, R, C>(with_rank(R, C, 1, rng), 1, "rank 1");
  }
  check_matrix<T, R, C>(Eigen::MatrixXd::Zero(R, C), 0, "zero matrix");
  {
    Eigen::MatrixXd u = integers(R, 1, rng), v = integers(1, C, rng);
    u(0, 0) = 1;
    v(0, 0) = 2;
    check_matrix<T, R, C>(u * v, 1, "integer rank 1");
  }
  if (R >= 2) {
    const char* names[] = {"duplicated row", "zero row", "dependent row"};
    for (int variant = 0; variant < 3; ++variant) {
      if (variant == 2 && R < 3) continue;
      Eigen::MatrixXd A = integers(R, C, rng);
      if (variant == 0) A.row(R - 1) = A.row(0);
      if (variant == 1) A.row(R - 1).setZero();
      if (variant == 2) A.row(R - 1) = A.row(0) + 2.0 * A.row(1);
      // The other rows are random integers: full rank min(R - 1, C) for these seeds (the
      // reference's rank is asserted equal to it inside check_matrix).
      check_matrix<T, R, C>(A, std::min(R - 1, C), names[variant]);
    }
  }
  if (C >= 2 && kMin >= 2) {
    Eigen::MatrixXd A = integers(R, C, rng);
    A.col(C - 1) = A.col(0);
    check_matrix<T, R, C>(A, std::min(R, C - 1), "duplicated column");
  }
}

TEST(PseudoInverse, PenroseConditionsDouble) {
  check_shape<double, 1, 1>(101);
  check_shape<double, 3, 3>(102);
  check_shape<double, 2, 5>(103);
  check_shape<double, 5, 2>(104);
  check_shape<double, 4, 9>(105);
  check_shape<double, 8, 9>(106);
  check_shape<double, 9, 8>(107);
  check_shape<double, 16, 16>(108);
  check_shape<double, 32, 32>(109);
  check_shape<double, 31, 32>(110);
  check_shape<double, 32, 7>(111);
  check_shape<double, 1, 6>(112);
  check_shape<double, 6, 1>(113);
}

TEST(PseudoInverse, PenroseConditionsFloat) {
  check_shape<float, 1, 1>(201);
  check_shape<float, 3, 3>(202);
  check_shape<float, 2, 5>(203);
  check_shape<float, 5, 2>(204);
  check_shape<float, 4, 9>(205);
  check_shape<float, 8, 9>(206);
  check_shape<float, 9, 8>(207);
  check_shape<float, 16, 16>(208);
  check_shape<float, 32, 32>(209);
  check_shape<float, 31, 32>(210);
  check_shape<float, 32, 7>(211);
}

// Many random draws of the most common UK shapes (m rows <= n coordinates), ranks 0..m.
TEST(PseudoInverse, ManyRandomRanksDouble) {
  std::mt19937_64 rng(301);
  for (int trial = 0; trial < 20; ++trial) {
    for (int k = 0; k <= 4; ++k) {
      check_matrix<double, 4, 6>(with_rank(4, 6, k, rng), k, "4x6");
      check_matrix<double, 6, 4>(with_rank(6, 4, k, rng), k, "6x4");
    }
  }
}

// A singular value s is kept exactly when s > rtol * s_max. Diagonal matrices have exact singular
// values (the Jacobi sweep finds their columns already orthogonal), so the boundary is sharp.
TEST(PseudoInverse, RankToleranceSemantics) {
  constexpr double eps = std::numeric_limits<double>::epsilon();
  EXPECT_EQ(default_rank_rtol<double>(3, 7), 7 * eps);
  EXPECT_EQ(default_rank_rtol<double>(7, 3), 7 * eps);
  EXPECT_EQ(default_rank_rtol<float>(2, 2), 2 * std::numeric_limits<float>::epsilon());

  Mat<double, 3, 3> D = Mat<double, 3, 3>::zero();
  D(0, 0) = 1.0;
  D(1, 1) = 4 * eps;  // > 3 eps * 1: kept by the default tolerance
  D(2, 2) = 2 * eps;  // < 3 eps: dropped
  const PseudoInverse<double, 3, 3> P(D);
  EXPECT_EQ(P.rank(), 2);
  const Mat<double, 3, 3> X = P.matrix();
  EXPECT_EQ(X(0, 0), 1.0);
  EXPECT_DOUBLE_EQ(X(1, 1), 1.0 / (4 * eps));
  EXPECT_EQ(X(2, 2), 0.0);

  // Scale invariance: the cutoff is relative to s_max.
  Mat<double, 3, 3> Ds = D;
  for (int k = 0; k < 9; ++k) Ds.a[k] *= 1e12;
  EXPECT_EQ((PseudoInverse<double, 3, 3>(Ds).rank()), 2);

  // A caller's rtol: s = 1e-3 with s_max = 1 is dropped at rtol = 1e-3 (not strictly greater)
  // and kept just below it.
  Mat<double, 2, 2> E = Mat<double, 2, 2>::zero();
  E(0, 0) = 1.0;
  E(1, 1) = 1e-3;
  EXPECT_EQ((PseudoInverse<double, 2, 2>(E, 1e-3).rank()), 1);
  EXPECT_EQ((PseudoInverse<double, 2, 2>(E, 0.999e-3).rank()), 2);
  EXPECT_EQ((pinv(E, 1e-3)(1, 1)), 0.0);
  EXPECT_DOUBLE_EQ(pinv(E, 0.999e-3)(1, 1), 1e3);

  // Rectangular diagonal (wide: B^T is orthogonalized) with the default rtol = 5 eps.
  Mat<double, 2, 5> W = Mat<double, 2, 5>::zero();
  W(0, 0) = 2.0;
  W(1, 1) = 2.0 * 6 * eps;  // 6 eps relative: kept
  EXPECT_EQ((PseudoInverse<double, 2, 5>(W).rank()), 2);
  W(1, 1) = 2.0 * 4 * eps;  // 4 eps relative: dropped
  EXPECT_EQ((PseudoInverse<double, 2, 5>(W).rank()), 1);

  // Float default: max(m, n) eps_f.
  constexpr float epsf = std::numeric_limits<float>::epsilon();
  Mat<float, 2, 2> F = Mat<float, 2, 2>::zero();
  F(0, 0) = 1.0f;
  F(1, 1) = 3 * epsf;
  EXPECT_EQ((PseudoInverse<float, 2, 2>(F).rank()), 2);
  F(1, 1) = 1.5f * epsf;
  EXPECT_EQ((PseudoInverse<float, 2, 2>(F).rank()), 1);

  // Singular values just either side of the default cutoff, in a rotated (non-diagonal) matrix:
  // 1 and 1e-10 are kept, the rounding-level ones are not, and a custom rtol drops 1e-10.
  std::mt19937_64 rng(401);
  const Eigen::MatrixXd U = random_orthonormal_columns(5, 3, rng);
  const Eigen::MatrixXd V = random_orthonormal_columns(5, 3, rng);
  Eigen::VectorXd s(3);
  s << 1.0, 1e-3, 1e-10;
  const Mat<double, 5, 5> A = from_eigen<double, 5, 5>(U * s.asDiagonal() * V.transpose());
  EXPECT_EQ((PseudoInverse<double, 5, 5>(A).rank()), 3);
  EXPECT_EQ((PseudoInverse<double, 5, 5>(A, 1e-8).rank()), 2);
  EXPECT_EQ((PseudoInverse<double, 5, 5>(A, 1e-2).rank()), 1);
}

// The Jacobi factorization itself: W = X V, V orthogonal, W's columns orthogonal, sigma = the
// singular values (unordered) of Eigen's SVD.
TEST(PseudoInverse, JacobiSvdFactorization) {
  std::mt19937_64 rng(501);
  const Eigen::MatrixXd Xd = gaussian(9, 6, rng);
  const Mat<double, 9, 6> X = from_eigen<double, 9, 6>(Xd);
  const JacobiSvd<double, 9, 6> svd(X);
  const Eigen::MatrixXd W = to_eigen(svd.W), V = to_eigen(svd.V);
  EXPECT_LE((Xd * V - W).norm() / Xd.norm(), 1e-14);
  EXPECT_LE((V.transpose() * V - Eigen::MatrixXd::Identity(6, 6)).norm(), 1e-14);
  const Eigen::MatrixXd G = W.transpose() * W;
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 6; ++j)
      if (i != j) {
        EXPECT_LE(std::abs(G(i, j)), 1e-13 * G.norm()) << i << "," << j;
      }
  std::vector<double> mine(6), ref(6);
  const Eigen::VectorXd sv = Eigen::JacobiSVD<Eigen::MatrixXd>(Xd).singularValues();
  for (int k = 0; k < 6; ++k) {
    mine[k] = svd.sigma[k];
    ref[k] = sv(k);
  }
  std::sort(mine.rbegin(), mine.rend());
  for (int k = 0; k < 6; ++k) EXPECT_NEAR(mine[k], ref[k], 1e-13 * ref[0]);
  EXPECT_DOUBLE_EQ(svd.sigma_max(), mine[0]);
  EXPECT_LT(svd.sweeps, (JacobiSvd<double, 9, 6>::kMaxSweeps));
}

// Which factorization is taken, and what conditioning() then promises. Matrices with singular
// values 1 .. rho (random orthonormal U, V) for rho from 0.5 down to 1e-9, every shape class:
//  - QR only when the exact s_min / s_max (Eigen's SVD) is above exact_conditioning_floor, and
//    then conditioning() lies in [exact / min(R, C), exact] and above the floor;
//  - below the floor always the SVD, with the exact conditioning;
//  - the rank is the SVD rule's whichever was taken, and B^+ agrees with Eigen's.
template <class T, int R, int C>
void check_factorization_choice(std::uint64_t seed, int& qr_count, int& svd_count) {
  constexpr int kMin = R < C ? R : C;
  std::mt19937_64 rng(seed);
  const double floor = double(exact_conditioning_floor<T>());
  for (double rho : {0.5, 0.1, 1e-2, 3e-3, 1e-3, 3e-4, 1e-4, 1e-6, 1e-9}) {
    Eigen::VectorXd s = Eigen::VectorXd::LinSpaced(kMin, 1.0, rho);
    const Eigen::MatrixXd Ad = random_orthonormal_columns(R, kMin, rng) * s.asDiagonal() *
                               random_orthonormal_columns(C, kMin, rng).transpose();
    const Mat<T, R, C> A = from_eigen<T, R, C>(Ad);
    const Eigen::MatrixXd Ae = to_eigen(A);
    const Eigen::VectorXd sv = Eigen::JacobiSVD<Eigen::MatrixXd>(Ae).singularValues();
    const double exact = sv(kMin - 1) / sv(0);
    const double rtol = default_rank_rtol<double>(R, C) * (eps_of<T>() / eps_of<double>());
    const EigenPinv ref = eigen_pinv(Ae, rtol);
    const PseudoInverse<T, R, C> P(A);
    SCOPED_TRACE(std::to_string(R) + "x" + std::to_string(C) + " rho " + std::to_string(rho));
    EXPECT_EQ(P.rank(), ref.rank);
    if (P.factored_by_qr()) {
      ++qr_count;
      EXPECT_GT(exact, floor);
      EXPECT_GT(double(P.conditioning()), floor);
      EXPECT_LE(double(P.conditioning()), exact * (1.0 + 64 * eps_of<T>()));
      EXPECT_GE(double(P.conditioning()), exact / kMin * (1.0 - 64 * eps_of<T>()));
    } else {
      ++svd_count;
      if (ref.rank == kMin) {
        // Singular values carry an absolute error of order eps s_max.
        EXPECT_NEAR(double(P.conditioning()), exact, 1e-3 * exact + 8 * kMin * eps_of<T>());
      }
    }
    const double agree = 64 * kMin * eps_of<T>() * ref.kappa;
    EXPECT_LE((to_eigen(P.matrix()) - ref.X).norm() / ref.X.norm(), agree);
  }
}

TEST(PseudoInverse, QrOnlyWhereItProvesFullRankAboveTheExactConditioningFloor) {
  int qr = 0, svd = 0;
  check_factorization_choice<double, 1, 3>(701, qr, svd);
  check_factorization_choice<double, 4, 4>(702, qr, svd);
  check_factorization_choice<double, 8, 9>(703, qr, svd);
  check_factorization_choice<double, 9, 8>(704, qr, svd);
  check_factorization_choice<double, 10, 10>(705, qr, svd);
  check_factorization_choice<double, 3, 7>(706, qr, svd);
  check_factorization_choice<float, 4, 4>(707, qr, svd);
  check_factorization_choice<float, 8, 9>(708, qr, svd);
  check_factorization_choice<float, 7, 3>(709, qr, svd);
  std::printf("QR taken for %d matrices, the SVD for %d\n", qr, svd);
  // Both routes are exercised: well-conditioned matrices go to QR, the others to the SVD.
  EXPECT_GE(qr, 20);
  EXPECT_GE(svd, 20);
}

// Columns of X (B, or B^T when B is wide) that are zero below the diagonal take the identity as
// their reflector, as LAPACK does. Diagonal, triangular and partly triangular matrices of every
// shape class, the UK matrices of constraint rows on distinct coordinates with a diagonal M, give
// the rank, conditioning bound and B^+ of any other matrix; a badly conditioned diagonal one still
// goes to the SVD.
template <int R, int C>
void check_structured(const Eigen::MatrixXd& Ad, bool expect_qr, const char* what) {
  SCOPED_TRACE(what);
  constexpr int kMin = R < C ? R : C;
  const Mat<double, R, C> A = from_eigen<double, R, C>(Ad);
  const Eigen::VectorXd sv = Eigen::JacobiSVD<Eigen::MatrixXd>(Ad).singularValues();
  const double exact = sv(kMin - 1) / sv(0);
  const EigenPinv ref = eigen_pinv(Ad, default_rank_rtol<double>(R, C));
  const PseudoInverse<double, R, C> P(A);
  EXPECT_EQ(P.factored_by_qr(), expect_qr);
  EXPECT_EQ(P.rank(), ref.rank);
  if (expect_qr) {
    EXPECT_LE(P.conditioning(), exact * (1.0 + 64 * eps_of<double>()));
    EXPECT_GE(P.conditioning(), exact / kMin * (1.0 - 64 * eps_of<double>()));
  }
  const double agree = 64 * kMin * eps_of<double>() * ref.kappa;
  EXPECT_LE((to_eigen(P.matrix()) - ref.X).norm() / ref.X.norm(), agree);
}

TEST(PseudoInverse, TriangularColumnsSkipTheirReflector) {
  std::mt19937_64 rng(711);
  Eigen::VectorXd d(5);
  d << 2.0, -3.0, 0.5, 1.0, -1.5;
  check_structured<5, 5>(d.asDiagonal().toDenseMatrix(), true, "diagonal 5x5, mixed signs");
  check_structured<10, 10>(Eigen::MatrixXd::Identity(10, 10) / std::sqrt(2.0), true,
                           "I / sqrt(2): the swarm's B");
  Eigen::MatrixXd tall = Eigen::MatrixXd::Zero(6, 4);
  tall.topRows(4) = Eigen::MatrixXd(gaussian(4, 4, rng).triangularView<Eigen::Upper>());
  tall.diagonal() += Eigen::VectorXd::Constant(4, 4.0);
  check_structured<6, 4>(tall, true, "tall, upper triangular");
  Eigen::MatrixXd x = Eigen::MatrixXd::Zero(5, 3);  // X = B^T of a wide B
  x.topRows(3) = Eigen::MatrixXd(gaussian(3, 3, rng).triangularView<Eigen::Upper>());
  x.diagonal() += Eigen::VectorXd::Constant(3, 4.0);
  check_structured<3, 5>(x.transpose(), true, "wide, B^T upper triangular");
  Eigen::MatrixXd mixed = gaussian(4, 4, rng);
  mixed.col(0).tail(3).setZero();
  mixed.col(1).tail(2).setZero();
  mixed(0, 0) = 3.0;
  mixed(1, 1) = -3.0;
  check_structured<4, 4>(mixed, true, "first two columns triangular, the others dense");
  Eigen::MatrixXd partly = with_rank(5, 5, 5, rng);
  partly.col(2).tail(2).setZero();
  check_structured<5, 5>(partly, true, "one middle column triangular");
  Eigen::VectorXd tiny(3);
  tiny << 1.0, 1e-10, 1.0;
  check_structured<3, 3>(tiny.asDiagonal().toDenseMatrix(), false,
                         "diagonal below the exact-conditioning floor");
}

// Rank-deficient, zero and non-finite matrices never take QR; a well-conditioned full-rank one
// does. A single row (one column of X = B^T) has its SVD in closed form and skips QR.
TEST(PseudoInverse, QrIsRefusedForRankLossZeroAndNonFinite) {
  std::mt19937_64 rng(710);
  Eigen::MatrixXd A = integers(4, 6, rng);
  A.row(3) = A.row(1);
  EXPECT_FALSE((PseudoInverse<double, 4, 6>(from_eigen<double, 4, 6>(A)).factored_by_qr()));
  EXPECT_FALSE((PseudoInverse<double, 3, 3>(Mat<double, 3, 3>::zero()).factored_by_qr()));
  Mat<double, 2, 3> N = from_eigen<double, 2, 3>(gaussian(2, 3, rng));
  N(1, 2) = NAN;
  const PseudoInverse<double, 2, 3> Pn(N);
  EXPECT_FALSE(Pn.factored_by_qr());
  Mat<double, 3, 5> G = from_eigen<double, 3, 5>(with_rank(3, 5, 3, rng));
  EXPECT_TRUE((PseudoInverse<double, 3, 5>(G).factored_by_qr()));
  Mat<double, 1, 4> row = from_eigen<double, 1, 4>(gaussian(1, 4, rng));
  const PseudoInverse<double, 1, 4> Pr(row);
  EXPECT_FALSE(Pr.factored_by_qr());
  EXPECT_EQ(Pr.rank(), 1);
  EXPECT_EQ(Pr.sweeps(), 0);  // no pair to rotate
  EXPECT_EQ(Pr.conditioning(), 1.0);
  // A caller's rtol above the bound sends a full-rank matrix to the SVD, which then drops the
  // small singular values as asked.
  const PseudoInverse<double, 3, 5> Pc(G, 0.5);
  EXPECT_FALSE(Pc.factored_by_qr());
  EXPECT_LT(Pc.rank(), 3);
  EXPECT_EQ(Pc.rank(), eigen_pinv(to_eigen(G), 0.5).rank);
}

// The M-weighted inverse G = A_M^+ = L^-T (A L^-T)^+ (Udwadia & Kalaba, "On constrained motion",
// eq. 13a-d): A G A = A, G A G = G, (A G)^T = A G, (M G A)^T = M G A.
template <class T, int Mr, int N>
void check_m_weighted(const Eigen::MatrixXd& Ad, const Eigen::MatrixXd& Md, int expected_rank,
                      double tol, const std::string& what) {
  SCOPED_TRACE(what);
  const Mat<T, Mr, N> A = from_eigen<T, Mr, N>(Ad);
  const Mat<T, N, N> M = from_eigen<T, N, N>(Md);
  Mat<T, N, N> L;
  ASSERT_TRUE(cholesky(M, L));
  const PseudoInverse<T, Mr, N> Bp(right_solve_lower_transpose(L, A));
  EXPECT_EQ(Bp.rank(), expected_rank);
  const Mat<T, N, Mr> Bplus = Bp.matrix();
  Eigen::MatrixXd G(N, Mr);
  for (int i = 0; i < Mr; ++i) {
    Vec<T, N> col;
    for (int j = 0; j < N; ++j) col[j] = Bplus(j, i);
    const Vec<T, N> g = solve_lower_transpose(L, col);
    for (int j = 0; j < N; ++j) G(j, i) = double(g[j]);
  }
  const Eigen::MatrixXd Ae = to_eigen(A), Me = to_eigen(M);
  if (expected_rank == 0) {
    EXPECT_EQ(G.norm(), 0.0);
    return;
  }
  const double na = Ae.norm(), ng = G.norm();
  EXPECT_LE((Ae * G * Ae - Ae).norm() / na, tol) << "A G A = A";
  EXPECT_LE((G * Ae * G - G).norm() / ng, tol) << "G A G = G";
  const Eigen::MatrixXd AG = Ae * G;
  EXPECT_LE((AG - AG.transpose()).norm() / AG.norm(), tol) << "(A G)^T = A G";
  const Eigen::MatrixXd MGA = Me * G * Ae;
  EXPECT_LE((MGA - MGA.transpose()).norm() / MGA.norm(), tol) << "(M G A)^T = M G A";

  // Independent construction: with M = S S (S the symmetric square root, from Eigen's eigen
  // decomposition), A_M^+ = S^-1 (A S^-1)^+ is the same operator (it is unique).
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(Me);
  const Eigen::MatrixXd Sinv = es.operatorInverseSqrt();
  const EigenPinv ref =
      eigen_pinv(Ae * Sinv, default_rank_rtol<double>(Mr, N) * (eps_of<T>() / eps_of<double>()));
  const Eigen::MatrixXd Gref = Sinv * ref.X;
  EXPECT_LE((G - Gref).norm() / Gref.norm(), tol * ref.kappa) << "factor independence";
}

template <class T>
void m_weighted_suite(std::uint64_t seed, double tol) {
  std::mt19937_64 rng(seed);
  auto spd = [&](int n) {
    const Eigen::MatrixXd B = gaussian(n, n, rng);
    return Eigen::MatrixXd(B * B.transpose() + Eigen::MatrixXd::Identity(n, n));
  };
  check_m_weighted<T, 1, 1>(gaussian(1, 1, rng), spd(1), 1, tol, "1x1");
  check_m_weighted<T, 3, 5>(gaussian(3, 5, rng), spd(5), 3, tol, "3x5 full row rank");
  check_m_weighted<T, 2, 6>(with_rank(2, 6, 2, rng), spd(6), 2, tol, "2x6");
  check_m_weighted<T, 5, 5>(with_rank(5, 5, 3, rng), spd(5), 3, tol, "5x5 rank 3");
  check_m_weighted<T, 7, 4>(with_rank(7, 4, 3, rng), spd(4), 3, tol, "7x4 rank 3");
  check_m_weighted<T, 8, 9>(with_rank(8, 9, 8, rng), spd(9), 8, tol, "8x9");
  check_m_weighted<T, 4, 9>(with_rank(4, 9, 1, rng), spd(9), 1, tol, "4x9 rank 1");
  {
    Eigen::MatrixXd A = integers(4, 6, rng);
    A.row(3) = A.row(1);  // duplicated row
    check_m_weighted<T, 4, 6>(A, spd(6), 3, tol, "4x6 duplicated row");
  }
  {
    Eigen::MatrixXd A = integers(3, 5, rng);
    A.row(0).setZero();  // zero row
    check_m_weighted<T, 3, 5>(A, spd(5), 2, tol, "3x5 zero row");
  }
  check_m_weighted<T, 3, 4>(Eigen::MatrixXd::Zero(3, 4), spd(4), 0, tol, "zero A");
}

// Bounds 100 eps relative (the "factor independence" one times the kappa of A S^-1, <= 30 here).
// Worst measured: 2.6e-15 (double), 1.7e-6 (float).
TEST(PseudoInverse, MWeightedInverseDouble) {
  m_weighted_suite<double>(601, 100 * eps_of<double>());
}

TEST(PseudoInverse, MWeightedInverseFloat) { m_weighted_suite<float>(602, 100 * eps_of<float>()); }

// A pseudoinverse of B = A L^-T written into its own storage (right_solved_lower_transpose) is the
// one of the materialized B, bit for bit: the same operations in the same order. Where QR refuses
// (rank loss), B is written a second time for the SVD, since QR's reflectors overwrote the first.
template <int R, int C, bool kPadded = false>
void check_written_like_materialized(const Eigen::MatrixXd& Ad, const Eigen::MatrixXd& Md,
                                     bool expect_qr, const std::string& what) {
  SCOPED_TRACE(what);
  const Mat<double, R, C> A = from_eigen<double, R, C>(Ad);
  CholeskyFactor<double, C> L;
  ASSERT_TRUE(cholesky(from_eigen<double, C, C>(Md), L));
  const double rtol = default_rank_rtol<double>(R, C);
  const auto pinv_of = [&](const auto& source) {
    if constexpr (kPadded) {
      return PseudoInverse<double, R, C, true>(source, rtol, ActiveBlock{R - 1, C});
    } else {
      return PseudoInverse<double, R, C>(source, rtol);
    }
  };
  const auto materialized = pinv_of(right_solve_lower_transpose(L, A));
  const auto written = pinv_of(right_solved_lower_transpose(L, A));
  EXPECT_EQ(written.factored_by_qr(), expect_qr);
  EXPECT_EQ(written.factored_by_qr(), materialized.factored_by_qr());
  EXPECT_EQ(written.rank(), materialized.rank());
  EXPECT_EQ(written.sweeps(), materialized.sweeps());
  const Mat<double, C, R> P = written.matrix(), Q = materialized.matrix();
  for (int i = 0; i < C; ++i)
    for (int j = 0; j < R; ++j) EXPECT_EQ(P(i, j), Q(i, j)) << i << ", " << j;
}

TEST(PseudoInverse, WrittenMatrixIsTheMaterializedOneBitForBit) {
  std::mt19937_64 rng(603);
  const auto spd = [&rng](int n) {
    const Eigen::MatrixXd G = gaussian(n, n, rng);
    return Eigen::MatrixXd(G * G.transpose() + n * Eigen::MatrixXd::Identity(n, n));
  };
  const Eigen::MatrixXd diagonal = Eigen::VectorXd::LinSpaced(5, 1.0, 3.0).asDiagonal();
  check_written_like_materialized<3, 5>(gaussian(3, 5, rng), spd(5), true, "wide, full rank");
  check_written_like_materialized<3, 5>(with_rank(3, 5, 2, rng), spd(5), false, "wide, rank 2");
  check_written_like_materialized<3, 5>(with_rank(3, 5, 2, rng), diagonal, false,
                                        "wide, rank 2, diagonal mass");
  check_written_like_materialized<6, 4>(with_rank(6, 4, 3, rng), spd(4), false, "tall, rank 3");
  check_written_like_materialized<5, 5>(gaussian(5, 5, rng), spd(5), true, "square");
  Eigen::MatrixXd padded = with_rank(5, 5, 3, rng);
  padded.row(4).setZero();  // the bucket's padding row
  check_written_like_materialized<5, 5, true>(padded, spd(5), false, "padded, rank 3");
}

}  // namespace
}  // namespace ukes
