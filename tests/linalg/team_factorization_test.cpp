// The cooperative factorizations (kernels/linalg/team_cholesky.hpp, team_jacobi_svd.hpp) run on a
// ThreadTeam (one thread per lane, kernels/backend/host_gpu/thread_team.hpp), against the
// sequential ones they mirror (cholesky(), JacobiSvd) and against the defining properties of their
// results:
//  - team_cholesky: the same factor as cholesky() up to rounding (the same arithmetic, so ~eps),
//    the same verdict on every input (indefinite, zero pivot, NaN / Inf entries; a NaN in the
//    unread upper triangle is no failure), the same verdict in every lane;
//  - TeamJacobiSvd: X = W V^T, V orthogonal, W's columns mutually orthogonal, the singular values
//    of JacobiSvd, for square, tall and wide X, full rank and rank-deficient (duplicate rows and
//    columns, zero matrix), with teams as large as the matrix and as a warp (32 lanes).
// Every run also checks that the lanes called the same collectives (ThreadTeam::run throws).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/backend/host_gpu/thread_team.hpp"
#include "kernels/linalg/cholesky.hpp"
#include "kernels/linalg/team_cholesky.hpp"
#include "kernels/linalg/team_jacobi_svd.hpp"
#include "support/eigen_interop.hpp"

namespace ukes {
namespace {

using namespace ukes::testing;
using host_gpu::ThreadTeam;

template <class T>
constexpr double eps_of() {
  return std::numeric_limits<T>::epsilon();
}

// ---- Cholesky --------------------------------------------------------------------------------

template <class T, int N>
struct TeamCholeskyRun {
  Mat<T, N, N> L;         // row r from lane r
  std::vector<int> okay;  // every lane's verdict
};

// Lane r < N gets row r of M (the whole row: the factorization must read only its lower part).
template <class T, int N>
TeamCholeskyRun<T, N> run_team_cholesky(const Mat<T, N, N>& M, int lanes) {
  TeamCholeskyRun<T, N> out{Mat<T, N, N>::zero(), std::vector<int>(std::size_t(lanes), -1)};
  ThreadTeam team(lanes);
  team.run([&](const ThreadTeam::Lane& lane) {
    const int r = lane.rank();
    Vec<T, N> row = Vec<T, N>::zero();
    if (r < N)
      for (int c = 0; c < N; ++c) row[c] = M(r, c);
    const bool ok = team_cholesky(lane, row);
    out.okay[std::size_t(r)] = ok ? 1 : 0;
    if (r < N)
      for (int c = 0; c < N; ++c) out.L(r, c) = row[c];
  });
  return out;
}

// The verdict, the same in every lane, and cholesky()'s; on success the factor to `rel` of |L|.
template <class T, int N>
void expect_like_cholesky(const Mat<T, N, N>& M, int lanes, double rel, const std::string& what) {
  SCOPED_TRACE(what + " N=" + std::to_string(N) + " lanes=" + std::to_string(lanes));
  Mat<T, N, N> Lref = Mat<T, N, N>::zero();
  const bool ref_ok = cholesky(M, Lref);
  const TeamCholeskyRun<T, N> run = run_team_cholesky(M, lanes);
  for (int v : run.okay) ASSERT_EQ(v, ref_ok ? 1 : 0);
  if (!ref_ok) return;
  double norm2 = 0.0, diff2 = 0.0;
  for (int r = 0; r < N; ++r) {
    for (int c = 0; c < N; ++c) {
      if (c > r) {
        EXPECT_EQ(run.L(r, c), T(0)) << r << "," << c;
      }
      norm2 += double(Lref(r, c)) * double(Lref(r, c));
      diff2 +=
          (double(run.L(r, c)) - double(Lref(r, c))) * (double(run.L(r, c)) - double(Lref(r, c)));
    }
  }
  EXPECT_LE(std::sqrt(diff2), rel * std::sqrt(norm2));
}

template <class T, int N>
void check_random_spd(std::uint64_t seed, int matrices) {
  std::mt19937_64 rng(seed);
  for (int k = 0; k < matrices; ++k) {
    Mat<T, N, N> M = from_eigen<T, N, N>(random_spd(N, 0.1, rng));
    // Garbage in the strict upper triangle: not read.
    for (int r = 0; r < N; ++r)
      for (int c = r + 1; c < N; ++c) M(r, c) = T(1e3 * (r - c));
    for (int lanes : {N, 32}) expect_like_cholesky(M, lanes, 1e-14, "spd");
  }
}

TEST(TeamCholesky, MatchesCholeskyOnRandomSpdMatrices) {
  check_random_spd<double, 1>(11, 3);
  check_random_spd<double, 2>(12, 3);
  check_random_spd<double, 4>(13, 3);
  check_random_spd<double, 9>(14, 3);
  check_random_spd<double, 10>(15, 3);
  check_random_spd<double, 32>(16, 2);
}

TEST(TeamCholesky, MatchesCholeskyInFloat) {
  std::mt19937_64 rng(21);
  const Mat<float, 9, 9> M = from_eigen<float, 9, 9>(random_spd(9, 0.1, rng));
  for (int lanes : {9, 32}) expect_like_cholesky(M, lanes, 16 * eps_of<float>(), "float spd");
}

// Fails exactly where cholesky() fails, and succeeds where it succeeds, on the edge cases.
template <int N>
void check_failures(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const Mat<double, N, N> spd = from_eigen<double, N, N>(random_spd(N, 0.1, rng));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  struct Case {
    const char* name;
    int r, c;
    double value;
  };
  std::vector<Case> cases = {
      {"indefinite (negative last diagonal)", N - 1, N - 1, -1.0},
      {"NaN on the diagonal", N / 2, N / 2, nan},
      {"Inf on the diagonal", 0, 0, inf},
      {"NaN below the diagonal", N - 1, 0, nan},
      {"zero first pivot", 0, 0, 0.0},
      {"negative first pivot", 0, 0, -2.0},
  };
  if (N > 1) cases.push_back({"NaN above the diagonal (not read)", 0, N - 1, nan});
  for (const Case& k : cases) {
    if (N == 1 && k.r != k.c) continue;
    Mat<double, N, N> M = spd;
    M(k.r, k.c) = k.value;
    Mat<double, N, N> L = Mat<double, N, N>::zero();
    const bool expected_ok = std::string(k.name).find("not read") != std::string::npos;
    ASSERT_EQ(cholesky(M, L), expected_ok) << k.name;  // the case is what it claims to be
    for (int lanes : {N, 32}) expect_like_cholesky(M, lanes, 1e-14, k.name);
  }
  // Rank-deficient (a duplicated row and column): the pivot is rounding noise, either sign; the
  // verdict must be cholesky()'s whichever it is.
  if (N > 1) {
    Mat<double, N, N> M = spd;
    for (int c = 0; c < N; ++c) M(N - 1, c) = M(0, c);
    for (int r = 0; r < N; ++r) M(r, N - 1) = M(r, 0);
    M(N - 1, N - 1) = M(0, 0);
    for (int lanes : {N, 32}) expect_like_cholesky(M, lanes, 1e-14, "singular");
  }
}

TEST(TeamCholesky, FailsExactlyWhereCholeskyFails) {
  check_failures<1>(31);
  check_failures<4>(32);
  check_failures<10>(33);
}

// ---- Jacobi SVD ------------------------------------------------------------------------------

template <class T, int XR, int XC>
struct TeamSvdRun {
  Mat<T, XR, XC> W = Mat<T, XR, XC>::zero();
  Mat<T, XC, XC> V = Mat<T, XC, XC>::zero();
  std::vector<Vec<T, XC>> sigma;  // every lane's
  std::vector<int> sweeps;        // every lane's
  std::vector<int> stray;         // lanes without a row of W / V: nonzero entries found there
};

template <class T, int XR, int XC>
TeamSvdRun<T, XR, XC> run_team_svd(const Mat<T, XR, XC>& X, int lanes) {
  TeamSvdRun<T, XR, XC> out;
  out.sigma.resize(std::size_t(lanes));
  out.sweeps.resize(std::size_t(lanes));
  out.stray.resize(std::size_t(lanes));
  ThreadTeam team(lanes);
  team.run([&](const ThreadTeam::Lane& lane) {
    const int r = lane.rank();
    const std::size_t ri = std::size_t(r);
    Vec<T, XC> row = Vec<T, XC>::zero();
    if (r < XR)
      for (int c = 0; c < XC; ++c) row[c] = X(r, c);
    const TeamJacobiSvd<T, XR, XC> svd(lane, row);
    for (int c = 0; c < XC; ++c) {
      if (r < XR) out.W(r, c) = svd.w[c];
      if (r < XC) out.V(r, c) = svd.v[c];
      if (r >= XR && svd.w[c] != T(0)) ++out.stray[ri];
      if (r >= XC && svd.v[c] != T(0)) ++out.stray[ri];
    }
    out.sigma[ri] = svd.sigma;
    out.sweeps[ri] = svd.sweeps;
  });
  return out;
}

// The factorization's defining properties, and JacobiSvd's singular values.
template <class T, int XR, int XC>
void check_svd(const Eigen::MatrixXd& Xd, int lanes, const std::string& what) {
  SCOPED_TRACE(what + " " + std::to_string(XR) + "x" + std::to_string(XC) +
               " lanes=" + std::to_string(lanes));
  const Mat<T, XR, XC> X = from_eigen<T, XR, XC>(Xd);
  const TeamSvdRun<T, XR, XC> run = run_team_svd(X, lanes);
  const JacobiSvd<T, XR, XC> ref(X);
  const double tol = sizeof(T) == 8 ? 1e-13 : 64 * std::max(XR, XC) * eps_of<T>();

  for (int l = 0; l < lanes; ++l) {
    const std::size_t li = std::size_t(l);
    EXPECT_EQ(run.stray[li], 0) << "lane " << l;
    EXPECT_EQ(run.sweeps[li], run.sweeps[0]) << "lane " << l;
    for (int k = 0; k < XC; ++k) ASSERT_EQ(run.sigma[li][k], run.sigma[0][k]) << "lane " << l;
  }
  EXPECT_LT(run.sweeps[0], (TeamJacobiSvd<T, XR, XC>::kMaxSweeps)) << "did not converge";

  const Eigen::MatrixXd Xe = to_eigen(X), W = to_eigen(run.W), V = to_eigen(run.V);
  const double xn = std::max(Xe.norm(), 1e-300);
  EXPECT_LE((Xe - W * V.transpose()).norm(), tol * xn) << "X = W V^T";
  EXPECT_LE((V.transpose() * V - Eigen::MatrixXd::Identity(XC, XC)).norm(), tol) << "V orthogonal";
  // Mutually orthogonal columns, relative to the columns' norms, up to the noise columns that
  // JacobiSvd's negligible test leaves alone (norm <= eps |X|, null directions of a rank-deficient
  // X): their dot product with any column is at most eps |X|^2.
  const Vec<T, XC>& sigma = run.sigma[0];
  for (int i = 0; i < XC; ++i) {
    EXPECT_NEAR(double(sigma[i]), W.col(i).norm(), tol * xn) << "sigma " << i;
    for (int j = i + 1; j < XC; ++j) {
      const double gij = std::abs(W.col(i).dot(W.col(j)));
      const double bound = tol * W.col(i).norm() * W.col(j).norm() + 2 * eps_of<T>() * xn * xn;
      EXPECT_LE(gij, bound) << "columns " << i << ", " << j;
    }
  }
  // The same singular values as JacobiSvd (the same pair order and tests), each to tol of s_max.
  const double smax = std::max(double(ref.sigma_max()), 1e-300);
  for (int k = 0; k < XC; ++k)
    EXPECT_NEAR(double(sigma[k]), double(ref.sigma[k]), tol * smax) << "sigma " << k;
}

template <int XR, int XC>
void check_shape(std::uint64_t seed, bool warp_too) {
  std::mt19937_64 rng(seed);
  constexpr int kTeam = XR > XC ? XR : XC;
  std::vector<int> team_sizes = {kTeam};
  if (warp_too && kTeam < 32) team_sizes.push_back(32);
  const Eigen::MatrixXd G = gaussian(XR, XC, rng);
  Eigen::MatrixXd dup_row = gaussian(XR, XC, rng), dup_col = gaussian(XR, XC, rng);
  if (XR > 1) dup_row.row(XR - 1) = dup_row.row(0);
  if (XC > 1) dup_col.col(XC - 1) = dup_col.col(0);
  const Eigen::MatrixXd rank1 = gaussian(XR, 1, rng) * gaussian(1, XC, rng);
  for (int lanes : team_sizes) {
    check_svd<double, XR, XC>(G, lanes, "gaussian");
    check_svd<double, XR, XC>(dup_row, lanes, "duplicated row");
    check_svd<double, XR, XC>(dup_col, lanes, "duplicated column");
    check_svd<double, XR, XC>(rank1, lanes, "rank 1");
    check_svd<double, XR, XC>(Eigen::MatrixXd::Zero(XR, XC), lanes, "zero");
  }
  check_svd<float, XR, XC>(G, kTeam, "gaussian float");
}

TEST(TeamJacobiSvd, SquareTallWideFullAndRankDeficient) {
  check_shape<1, 1>(41, true);
  check_shape<4, 4>(42, true);
  check_shape<10, 10>(43, true);
  check_shape<9, 8>(44, true);  // tall, as PseudoInverse takes it
  check_shape<6, 2>(45, false);
  check_shape<3, 7>(46, false);  // wide: JacobiSvd takes any shape
}

TEST(TeamJacobiSvd, WarpSizedMatrices) {
  std::mt19937_64 rng(51);
  check_svd<double, 32, 6>(gaussian(32, 6, rng), 32, "gaussian");
  check_svd<double, 32, 32>(gaussian(32, 32, rng), 32, "gaussian");
}

}  // namespace
}  // namespace ukes
