// The combine step's pseudoinverse from SVD factors computed elsewhere (cuSOLVER's gesvdj
// convention B = U S V^T, full U and V, singular values in any order), checked against the
// Penrose conditions and Eigen's complete orthogonal decomposition, for rank-deficient B; and the
// UK finish on such factors against the fused uk_solve.
#include <gtest/gtest.h>

#include <string>

#include "kernels/uk/uk_solver.hpp"
#include "support/eigen_interop.hpp"

namespace ukes {
namespace {

using namespace ukes::testing;

// A random R x C matrix of rank `rank` (product of Gaussian factors).
Eigen::MatrixXd random_of_rank(int rows, int cols, int rank, std::mt19937_64& rng) {
  return gaussian(rows, rank, rng) * gaussian(rank, cols, rng);
}

// The full SVD of B by Eigen (an SVD computed elsewhere), optionally with the singular triplets
// in reverse order (gesvdj may leave them unsorted).
struct FullSvd {
  Eigen::MatrixXd U, V;
  Eigen::VectorXd s;
};

FullSvd library_svd(const Eigen::MatrixXd& B, bool reversed) {
  Eigen::JacobiSVD<Eigen::MatrixXd> svd(B, Eigen::ComputeFullU | Eigen::ComputeFullV);
  FullSvd f{svd.matrixU(), svd.matrixV(), svd.singularValues()};
  if (reversed) {
    const int k = static_cast<int>(f.s.size());
    f.s.reverseInPlace();
    f.U.leftCols(k) = f.U.leftCols(k).rowwise().reverse().eval();
    f.V.leftCols(k) = f.V.leftCols(k).rowwise().reverse().eval();
  }
  return f;
}

template <int R, int C>
PseudoInverse<double, R, C> from_library(const FullSvd& f, double rtol) {
  using P = PseudoInverse<double, R, C>;
  return P(
      P::factors_from_svd([&](int r, int k) { return f.U(r, k); }, [&](int k) { return f.s(k); },
                          [&](int c, int k) { return f.V(c, k); }),
      rtol);
}

template <int R, int C>
void check_penrose(int rank, std::uint64_t seed) {
  SCOPED_TRACE(std::to_string(R) + "x" + std::to_string(C) + " rank " + std::to_string(rank));
  std::mt19937_64 rng(seed);
  const Eigen::MatrixXd Bd = random_of_rank(R, C, rank, rng);
  const Mat<double, R, C> B = from_eigen<double, R, C>(Bd);
  const Eigen::MatrixXd Be = to_eigen(B);
  const double rtol = default_rank_rtol<double>(R, C);
  const Eigen::MatrixXd reference = Be.completeOrthogonalDecomposition().pseudoInverse();
  for (bool reversed : {false, true}) {
    SCOPED_TRACE(reversed ? "unsorted" : "sorted");
    const PseudoInverse<double, R, C> P = from_library<R, C>(library_svd(Be, reversed), rtol);
    EXPECT_EQ(P.rank(), rank);
    const Eigen::MatrixXd X = to_eigen(P.matrix());
    const double tol = 1e-12;
    EXPECT_LE((Be * X * Be - Be).norm(), tol * Be.norm()) << "B X B = B";
    EXPECT_LE((X * Be * X - X).norm(), tol * X.norm()) << "X B X = X";
    const Eigen::MatrixXd BX = Be * X, XB = X * Be;
    EXPECT_LE((BX - BX.transpose()).norm(), tol * BX.norm()) << "(B X)^T = B X";
    EXPECT_LE((XB - XB.transpose()).norm(), tol * XB.norm()) << "(X B)^T = X B";
    EXPECT_LE((X - reference).norm(), 1e-10 * reference.norm()) << "Eigen's pseudoinverse";
    // The same rank rule as the fused path's own Jacobi SVD (the route it takes for every matrix
    // not provably well conditioned), and the same rank as the fused path's choice.
    using Pinv = PseudoInverse<double, R, C>;
    const Pinv own(typename Pinv::Factors(JacobiSvd<double, Pinv::XR, Pinv::XC>([&B] {
                     if constexpr (Pinv::kTransposed) {
                       return transpose(B);
                     } else {
                       return B;
                     }
                   }())),
                   rtol);
    EXPECT_EQ(own.rank(), P.rank());
    EXPECT_NEAR(own.conditioning(), P.conditioning(), 1e-12);
    EXPECT_EQ(Pinv(B).rank(), P.rank());
  }
}

TEST(SvdFactors, PenroseConditionsRankDeficientTall) { check_penrose<7, 4>(2, 11); }
TEST(SvdFactors, PenroseConditionsRankDeficientWide) { check_penrose<3, 8>(2, 12); }
TEST(SvdFactors, PenroseConditionsRankDeficientSquare) { check_penrose<6, 6>(3, 13); }
TEST(SvdFactors, PenroseConditionsRankOne) { check_penrose<4, 9>(1, 14); }
TEST(SvdFactors, PenroseConditionsFullRank) { check_penrose<8, 10>(8, 15); }

TEST(SvdFactors, ZeroMatrixHasRankZeroAndZeroInverse) {
  const FullSvd f = library_svd(Eigen::MatrixXd::Zero(3, 5), false);
  const PseudoInverse<double, 3, 5> P = from_library<3, 5>(f, default_rank_rtol<double>(3, 5));
  EXPECT_EQ(P.rank(), 0);
  EXPECT_EQ(P.conditioning(), 1.0);
  const Mat<double, 5, 3> X = P.matrix();
  for (int k = 0; k < 15; ++k) EXPECT_EQ(X.a[k], 0.0);
}

// The UK finish on library factors of B = A L^-T is the fused uk_solve's answer: redundant rows
// (a duplicated row and a sum of two rows), consistent right-hand side.
TEST(SvdFactors, UkFinishOnLibraryFactorsMatchesUkSolve) {
  constexpr int n = 6, m = 5;
  std::mt19937_64 rng(21);
  for (int trial = 0; trial < 20; ++trial) {
    const Eigen::MatrixXd Me = random_spd(n, rng);
    Eigen::MatrixXd Ae = gaussian(m, n, rng);
    Ae.row(3) = Ae.row(0);
    Ae.row(4) = Ae.row(1) + Ae.row(2);
    const Eigen::VectorXd qdd_any = gaussian(n, 1, rng);
    const Eigen::VectorXd be = Ae * qdd_any;  // consistent rows
    const Mat<double, n, n> M = from_eigen<double, n, n>(Me);
    const Vec<double, n> Q = to_vec<double, n>(gaussian(n, 1, rng));
    const Mat<double, m, n> A = from_eigen<double, m, n>(Ae);
    const Vec<double, m> b = to_vec<double, m>(be);

    const UkSolution<double, n> fused = uk_solve(M, Q, A, b, NoNonIdealForce{});
    ASSERT_TRUE(fused.mass_ok);

    Mat<double, n, n> L;
    ASSERT_TRUE(cholesky(M, L));
    const Eigen::MatrixXd Bd = to_eigen(right_solve_lower_transpose(L, A));
    UkSolution<double, n> staged;
    staged.a = cholesky_solve(L, Q);
    uk_finish(L, A, b, from_library<m, n>(library_svd(Bd, true), default_rank_rtol<double>(m, n)),
              NoNonIdealForce{}, staged);
    EXPECT_TRUE(staged.mass_ok);
    EXPECT_EQ(staged.rank, 3);
    EXPECT_EQ(staged.rank, fused.rank);
    EXPECT_NEAR(staged.conditioning, fused.conditioning, 1e-12);
    const double scale = 1 + to_eigen(fused.qdd).norm();
    EXPECT_LE((to_eigen(staged.qdd) - to_eigen(fused.qdd)).norm(), 1e-12 * scale);
    EXPECT_LE((to_eigen(staged.Qc_ideal) - to_eigen(fused.Qc_ideal)).norm(),
              1e-12 * (1 + to_eigen(fused.Qc_ideal).norm()));
    EXPECT_LE(staged.inconsistency, 1e-10 * (1 + be.norm()));  // the rows are met
  }
}

// A mass matrix that is not positive definite: no valid field, every vector NaN (never stale).
TEST(SvdFactors, MassFailureIsDefined) {
  Mat<double, 2, 2> M = Mat<double, 2, 2>::identity();
  M(1, 1) = -1;
  const auto s = uk_solve(M, Vec<double, 2>::zero(), Mat<double, 1, 2>::identity(),
                          Vec<double, 1>::zero(), NoNonIdealForce{});
  EXPECT_FALSE(s.mass_ok);
  for (int j = 0; j < 2; ++j) {
    EXPECT_TRUE(std::isnan(s.qdd[j]));
    EXPECT_TRUE(std::isnan(s.Qc_ideal[j]));
    EXPECT_TRUE(std::isnan(s.Qc_nonideal[j]));
  }
}

}  // namespace
}  // namespace ukes
