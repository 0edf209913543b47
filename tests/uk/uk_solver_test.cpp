// The Udwadia–Kalaba solve of kernels/uk/uk_solver.hpp against independent formulations:
//  - the Lagrange-multiplier (KKT) system [[M, A^T], [A, 0]] [qdd; -lambda] = [Q; b] (full row
//    rank A), solved by Eigen's LU;
//  - Gauss's principle of least constraint: qdd minimizes G(x) = (x - a)^T M (x - a) over
//    {x : A x = b}, solved by the null-space method with Eigen (valid for any consistent A,
//    rank-deficient, duplicated and zero rows included);
//  - non-ideal constraints ("On constrained motion"): qdd = a + A_M^+ (b - A a) + (I - A_M^+ A) c
//    is the ideal UK solution for the applied force Q + C, so equals the KKT solution with Q + C;
//    the ideal and non-ideal constraint forces are M^-1-orthogonal, and the total constraint force
//    does virtual work w^T C on every w with A w = 0.
#include "kernels/uk/uk_solver.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "support/eigen_interop.hpp"

namespace ukes {
namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;
using namespace ukes::testing;

// Rank-k r x c matrix with singular values in [1, 3].
MatrixXd with_rank(int r, int c, int k, std::mt19937_64& rng) {
  if (k == 0) return MatrixXd::Zero(r, c);
  const MatrixXd U = Eigen::HouseholderQR<MatrixXd>(gaussian(r, r, rng)).householderQ();
  const MatrixXd V = Eigen::HouseholderQR<MatrixXd>(gaussian(c, c, rng)).householderQ();
  std::uniform_real_distribution<double> u(1.0, 3.0);
  VectorXd s(k);
  for (int i = 0; i < k; ++i) s(i) = u(rng);
  return U.leftCols(k) * s.asDiagonal() * V.leftCols(k).transpose();
}

// Orthonormal basis of null(A) (columns), from Eigen's SVD: singular values at most rtol * s_max
// count as zero (for float data pass the float rank tolerance: the rounded matrix is not exactly
// rank deficient).
MatrixXd null_space(const MatrixXd& A, double rtol = 1e-10) {
  const int n = int(A.cols());
  if (A.rows() == 0) return MatrixXd::Identity(n, n);
  Eigen::JacobiSVD<MatrixXd> svd(A, Eigen::ComputeFullV);
  const VectorXd& s = svd.singularValues();
  int rank = 0;
  for (int k = 0; k < s.size(); ++k)
    if (s(k) > rtol * s(0)) ++rank;
  return svd.matrixV().rightCols(n - rank);
}

// Gauss's principle by the null-space method: x = xp + N z minimizing (x - a)^T M (x - a).
VectorXd gauss_minimizer(const MatrixXd& M, const VectorXd& a, const MatrixXd& A, const VectorXd& b,
                         double rtol) {
  VectorXd xp = VectorXd::Zero(a.size());
  if (A.rows() > 0) {
    Eigen::CompleteOrthogonalDecomposition<MatrixXd> cod(A.rows(), A.cols());
    cod.setThreshold(rtol);
    cod.compute(A);
    xp = cod.solve(b);
  }
  const MatrixXd N = null_space(A, rtol);
  if (N.cols() == 0) return xp;
  const VectorXd z = (N.transpose() * M * N).ldlt().solve(N.transpose() * M * (a - xp));
  return xp + N * z;
}

// KKT: [[M, A^T], [A, 0]] [x; mu] = [Q; b]; the constraint force is -A^T mu.
struct Kkt {
  VectorXd qdd, force;
};
Kkt kkt_solve(const MatrixXd& M, const VectorXd& Q, const MatrixXd& A, const VectorXd& b) {
  const int n = int(M.rows()), m = int(A.rows());
  MatrixXd K = MatrixXd::Zero(n + m, n + m);
  K.topLeftCorner(n, n) = M;
  K.topRightCorner(n, m) = A.transpose();
  K.bottomLeftCorner(m, n) = A;
  VectorXd rhs(n + m);
  rhs << Q, b;
  const VectorXd sol = K.fullPivLu().solve(rhs);
  return {sol.head(n), -A.transpose() * sol.tail(m)};
}

double rel(const VectorXd& x, const VectorXd& ref) {
  return (x - ref).norm() / std::max(1.0, ref.norm());
}

template <class T>
constexpr double eps_of() {
  return std::numeric_limits<T>::epsilon();
}

// ------------------------------------------------------------------ ideal constraints

// Full row rank: A qdd = b, equality with the KKT solution, Qc = M (qdd - a) = -A^T mu, and
// Gauss's principle (strict: G(x) = G(qdd) + |x - qdd|_M^2 for every feasible x).
template <class T, int N, int Mr>
void check_full_row_rank(std::uint64_t seed, double tol) {
  SCOPED_TRACE("n=" + std::to_string(N) + " m=" + std::to_string(Mr));
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < 5; ++trial) {
    const Mat<T, N, N> M = from_eigen<T, N, N>(random_spd(N, rng));
    const Vec<T, N> Q = to_vec<T, N>(gaussian(N, 1, rng));
    const Mat<T, Mr, N> A = from_eigen<T, Mr, N>(with_rank(Mr, N, Mr, rng));
    const Vec<T, Mr> b = to_vec<T, Mr>(gaussian(Mr, 1, rng));
    const auto s = uk_solve(M, Q, A, b, NoNonIdealForce{});
    ASSERT_TRUE(s.mass_ok);
    EXPECT_EQ(s.rank, Mr);
    const MatrixXd Me = to_eigen(M), Ae = to_eigen(A);
    const VectorXd Qe = to_eigen(Q), be = to_eigen(b), qdd = to_eigen(s.qdd), a = to_eigen(s.a);

    EXPECT_LE(rel(Me * a, Qe), tol) << "a = M^-1 Q";
    EXPECT_LE(rel(Ae * qdd, be), tol) << "A qdd = b";
    EXPECT_LE(double(s.inconsistency), tol * std::max(1.0, be.norm()));
    const Kkt ref = kkt_solve(Me, Qe, Ae, be);
    EXPECT_LE(rel(qdd, ref.qdd), tol) << "KKT";
    EXPECT_LE(rel(to_eigen(s.Qc_ideal), ref.force), tol) << "Qc = -A^T mu";
    EXPECT_LE(rel(to_eigen(s.Qc_ideal), Me * (qdd - a)), tol) << "Qc = M (qdd - a)";
    for (int j = 0; j < N; ++j) EXPECT_EQ(s.Qc_nonideal[j], T(0));

    // Gauss: random feasible x = qdd + N z.
    const MatrixXd Nul = null_space(Ae);
    ASSERT_EQ(Nul.cols(), N - Mr);
    const double G0 = (qdd - a).dot(Me * (qdd - a));
    for (int k = 0; k < 5 && Nul.cols() > 0; ++k) {
      const VectorXd x = qdd + Nul * gaussian(int(Nul.cols()), 1, rng);
      const double G = (x - a).dot(Me * (x - a));
      const double dist = (x - qdd).dot(Me * (x - qdd));
      EXPECT_GE(G, G0);
      EXPECT_NEAR(G - G0, dist, tol * std::max(1.0, G));
    }
  }
}

TEST(UkSolve, FullRowRankMatchesKktDouble) {
  // Random SPD M (cond ~ 10-100) and A with singular values in [1, 3]. Bounds are relative,
  // about 10x the worst measured (double ~1e-14, float ~3e-7).
  check_full_row_rank<double, 1, 1>(1, 1e-13);
  check_full_row_rank<double, 3, 1>(2, 1e-13);
  check_full_row_rank<double, 3, 2>(3, 1e-13);
  check_full_row_rank<double, 5, 4>(4, 1e-13);
  check_full_row_rank<double, 9, 8>(5, 1e-13);
  check_full_row_rank<double, 12, 5>(6, 1e-13);
  check_full_row_rank<double, 32, 16>(7, 1e-13);
}

TEST(UkSolve, FullRowRankMatchesKktFloat) {
  check_full_row_rank<float, 3, 2>(8, 1e-5);
  check_full_row_rank<float, 5, 4>(9, 1e-5);
  check_full_row_rank<float, 9, 8>(10, 1e-5);
}

// Rank-deficient consistent constraints (b in the range of A): A qdd = b, and qdd equals the
// minimizer of Gauss's function over the feasible set (null-space method), for wide, square and
// tall A.
template <class T, int N, int Mr>
void check_rank_deficient(int rank, std::uint64_t seed, double tol) {
  SCOPED_TRACE("n=" + std::to_string(N) + " m=" + std::to_string(Mr) +
               " rank=" + std::to_string(rank));
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < 5; ++trial) {
    const Mat<T, N, N> M = from_eigen<T, N, N>(random_spd(N, rng));
    const Vec<T, N> Q = to_vec<T, N>(gaussian(N, 1, rng));
    const Mat<T, Mr, N> A = from_eigen<T, Mr, N>(with_rank(Mr, N, rank, rng));
    const MatrixXd Ae = to_eigen(A);
    const Vec<T, Mr> b = to_vec<T, Mr>(Ae * gaussian(N, 1, rng));  // consistent
    const VectorXd be = to_eigen(b);
    const auto s = uk_solve(M, Q, A, b, NoNonIdealForce{});
    ASSERT_TRUE(s.mass_ok);
    EXPECT_EQ(s.rank, rank);
    const MatrixXd Me = to_eigen(M);
    const VectorXd qdd = to_eigen(s.qdd), a = to_eigen(s.a);
    EXPECT_LE(rel(Ae * qdd, be), tol) << "A qdd = b";
    EXPECT_LE(double(s.inconsistency), tol * std::max(1.0, be.norm()));
    const double rtol = default_rank_rtol<T>(Mr, N);
    EXPECT_LE(rel(qdd, gauss_minimizer(Me, a, Ae, be, rtol)), tol) << "Gauss minimizer";
    const MatrixXd Nul = null_space(Ae, rtol);
    const double G0 = (qdd - a).dot(Me * (qdd - a));
    for (int k = 0; k < 5 && Nul.cols() > 0; ++k) {
      const VectorXd x = qdd + Nul * gaussian(int(Nul.cols()), 1, rng);
      EXPECT_GE((x - a).dot(Me * (x - a)), G0);
    }
  }
}

TEST(UkSolve, RankDeficientConsistentDouble) {
  check_rank_deficient<double, 5, 3>(2, 11, 1e-13);
  check_rank_deficient<double, 5, 5>(3, 12, 1e-13);
  check_rank_deficient<double, 4, 7>(3, 13, 1e-13);  // tall: more rows than coordinates
  check_rank_deficient<double, 6, 4>(1, 14, 1e-13);
  check_rank_deficient<double, 9, 12>(6, 15, 1e-13);
  check_rank_deficient<double, 3, 3>(0, 16, 1e-13);  // A = 0, b = 0: qdd = a
}

TEST(UkSolve, RankDeficientConsistentFloat) {
  check_rank_deficient<float, 5, 3>(2, 17, 1e-5);
  check_rank_deficient<float, 4, 7>(3, 18, 1e-5);
}

// Duplicated rows (a copy of a row of A and of its entry of b) change nothing but round-off.
template <class T>
void check_duplicated_rows(double tol) {
  constexpr int n = 6, m = 3;
  std::mt19937_64 rng(21);
  for (int trial = 0; trial < 5; ++trial) {
    const Mat<T, n, n> M = from_eigen<T, n, n>(random_spd(n, rng));
    const Vec<T, n> Q = to_vec<T, n>(gaussian(n, 1, rng));
    const MatrixXd Ae = with_rank(m, n, m, rng);
    const VectorXd be = gaussian(m, 1, rng);
    MatrixXd A2(m + 2, n);
    A2 << Ae, Ae.row(1), Ae.row(1);  // row 1 twice more
    VectorXd b2(m + 2);
    b2 << be, be(1), be(1);
    const auto s1 = uk_solve(M, Q, from_eigen<T, m, n>(Ae), to_vec<T, m>(be), NoNonIdealForce{});
    const auto s2 =
        uk_solve(M, Q, from_eigen<T, m + 2, n>(A2), to_vec<T, m + 2>(b2), NoNonIdealForce{});
    EXPECT_EQ(s2.rank, m);
    EXPECT_LE(rel(to_eigen(s2.qdd), to_eigen(s1.qdd)), tol);
    EXPECT_LE(rel(to_eigen(s2.Qc_ideal), to_eigen(s1.Qc_ideal)), tol);
    EXPECT_LE(double(s2.inconsistency), tol * std::max(1.0, be.norm()));
  }
}

TEST(UkSolve, DuplicatedRowsChangeNothingDouble) { check_duplicated_rows<double>(1e-13); }
TEST(UkSolve, DuplicatedRowsChangeNothingFloat) { check_duplicated_rows<float>(1e-5); }

// Zero rows: m = 0 gives the unconstrained motion exactly; an all-zero row with b = 0 changes
// nothing; an all-zero A with b = 0 leaves qdd = a.
TEST(UkSolve, ZeroRows) {
  constexpr int n = 4;
  std::mt19937_64 rng(31);
  const MatrixXd Me = random_spd(n, rng);
  const Mat<double, n, n> M = from_eigen<double, n, n>(Me);
  const Vec<double, n> Q = to_vec<double, n>(gaussian(n, 1, rng));
  const VectorXd a = Me.ldlt().solve(to_eigen(Q));

  const auto s0 =
      uk_solve(M, Q, Mat<double, 0, n>::zero(), Vec<double, 0>::zero(), NoNonIdealForce{});
  ASSERT_TRUE(s0.mass_ok);
  EXPECT_EQ(s0.rank, 0);
  EXPECT_LE(rel(to_eigen(s0.qdd), a), 1e-14);
  for (int j = 0; j < n; ++j) {
    EXPECT_EQ(s0.qdd[j], s0.a[j]);
    EXPECT_EQ(s0.Qc_ideal[j], 0.0);
  }
  EXPECT_EQ(s0.inconsistency, 0.0);

  const MatrixXd A1 = with_rank(2, n, 2, rng);
  const VectorXd b1 = gaussian(2, 1, rng);
  MatrixXd A2(3, n);
  A2 << A1.row(0), MatrixXd::Zero(1, n), A1.row(1);
  VectorXd b2(3);
  b2 << b1(0), 0.0, b1(1);
  const auto s1 =
      uk_solve(M, Q, from_eigen<double, 2, n>(A1), to_vec<double, 2>(b1), NoNonIdealForce{});
  const auto s2 =
      uk_solve(M, Q, from_eigen<double, 3, n>(A2), to_vec<double, 3>(b2), NoNonIdealForce{});
  EXPECT_EQ(s2.rank, 2);
  EXPECT_LE(rel(to_eigen(s2.qdd), to_eigen(s1.qdd)), 1e-13);
  EXPECT_LE(s2.inconsistency, 1e-13);

  const auto sz =
      uk_solve(M, Q, Mat<double, 3, n>::zero(), Vec<double, 3>::zero(), NoNonIdealForce{});
  EXPECT_EQ(sz.rank, 0);
  for (int j = 0; j < n; ++j) EXPECT_EQ(sz.qdd[j], sz.a[j]);
}

// Inconsistent rows x = 0 and x = 1 at acceleration level (A = [e1; e1], b = [0, 1]): the UK
// solution is the least-squares compromise qdd_x = 1/2 whatever M (B = A L^-T has one nonzero
// column direction), so |A qdd - b| = sqrt(1/2), which `inconsistency` must report.
TEST(UkSolve, InconsistentRowsAreReported) {
  constexpr int n = 3;
  Mat<double, n, n> M = Mat<double, n, n>::zero();
  M(0, 0) = 2.0;
  M(1, 1) = 3.0;
  M(2, 2) = 0.5;
  Vec<double, n> Q = Vec<double, n>::zero();
  Q[1] = 1.5;
  Mat<double, 2, n> A = Mat<double, 2, n>::zero();
  A(0, 0) = 1.0;
  A(1, 0) = 1.0;
  Vec<double, 2> b;
  b[0] = 0.0;
  b[1] = 1.0;
  const auto s = uk_solve(M, Q, A, b, NoNonIdealForce{});
  EXPECT_EQ(s.rank, 1);
  EXPECT_NEAR(s.qdd[0], 0.5, 1e-15);
  EXPECT_NEAR(s.qdd[1], 0.5, 1e-15);  // a_y = Q_y / m_y: untouched by the x rows
  EXPECT_NEAR(s.qdd[2], 0.0, 1e-15);
  EXPECT_NEAR(s.inconsistency, std::sqrt(0.5), 1e-15);
}

TEST(UkSolve, NonPositiveDefiniteMassIsReported) {
  Mat<double, 2, 2> M = Mat<double, 2, 2>::identity();
  M(1, 1) = -1.0;
  const auto s = uk_solve(M, Vec<double, 2>::zero(), Mat<double, 1, 2>::identity(),
                          Vec<double, 1>::zero(), NoNonIdealForce{});
  EXPECT_FALSE(s.mass_ok);
  Mat<float, 2, 2> Mf = Mat<float, 2, 2>::zero();  // singular
  const auto sf = uk_solve(Mf, Vec<float, 2>::zero(), Mat<float, 1, 2>::identity(),
                           Vec<float, 1>::zero(), NoNonIdealForce{});
  EXPECT_FALSE(sf.mass_ok);
}

// The rank tolerance is the caller's: a row nearly dependent on another (relative 1e-9) counts
// as independent at the default tolerance and as dependent at rtol = 1e-6.
TEST(UkSolve, RankToleranceIsForwarded) {
  constexpr int n = 3;
  const Mat<double, n, n> M = Mat<double, n, n>::identity();
  Mat<double, 2, n> A = Mat<double, 2, n>::zero();
  A(0, 0) = 1.0;
  A(1, 0) = 1.0;
  A(1, 1) = 1e-9;
  Vec<double, 2> b = Vec<double, 2>::zero();
  EXPECT_EQ(uk_solve(M, Vec<double, n>::zero(), A, b, NoNonIdealForce{}).rank, 2);
  EXPECT_EQ(uk_solve(M, Vec<double, n>::zero(), A, b, NoNonIdealForce{}, 1e-6).rank, 1);
}

// ------------------------------------------------------------------ non-ideal constraints

template <class T, int N>
struct ConstantForce {
  static constexpr bool kActive = true;
  Vec<T, N> C;
  void operator()(const Vec<T, N>&, Vec<T, N>& out) const { out = C; }
};

// A friction-like law that needs the ideal force: C = -mu |Qc_ideal| v / |v|.
template <class T, int N>
struct FrictionLike {
  static constexpr bool kActive = true;
  T mu;
  Vec<T, N> v;
  void operator()(const Vec<T, N>& Qc_ideal, Vec<T, N>& out) const {
    const T scale = -mu * norm2(Qc_ideal) / norm2(v);
    for (int j = 0; j < N; ++j) out[j] = scale * v[j];
  }
};

template <class T, int N, int Mr, class F>
void check_nonideal(const MatrixXd& Me, const VectorXd& Qe, const MatrixXd& Ae, const VectorXd& be,
                    const F& force, double tol) {
  const auto s = uk_solve(from_eigen<T, N, N>(Me), to_vec<T, N>(Qe), from_eigen<T, Mr, N>(Ae),
                          to_vec<T, Mr>(be), force);
  ASSERT_TRUE(s.mass_ok);
  const VectorXd qdd = to_eigen(s.qdd), a = to_eigen(s.a), Qi = to_eigen(s.Qc_ideal),
                 Qn = to_eigen(s.Qc_nonideal);
  // The prescribed force this solve used, re-evaluated from its own Qc_ideal.
  Vec<T, N> Cv;
  force(s.Qc_ideal, Cv);
  const VectorXd C = to_eigen(Cv);

  EXPECT_LE(rel(Ae * qdd, be), tol) << "A qdd = b";
  EXPECT_LE(rel(Me * (qdd - a), Qi + Qn), tol) << "M (qdd - a) = Qc_ideal + Qc_nonideal";
  // M^-1-orthogonality of the two parts.
  const double cross = Qi.dot(Me.ldlt().solve(Qn));
  const double scale = std::sqrt(Qi.dot(Me.ldlt().solve(Qi)) * Qn.dot(Me.ldlt().solve(Qn)));
  EXPECT_LE(std::abs(cross), tol * std::max(1.0, scale)) << "Qc_ideal^T M^-1 Qc_nonideal = 0";
  // Virtual work on w with A w = 0 equals w^T C.
  const MatrixXd Nul = null_space(Ae);
  for (int k = 0; k < Nul.cols(); ++k) {
    const VectorXd w = Nul.col(k);
    EXPECT_NEAR(w.dot(Qi + Qn), w.dot(C), tol * std::max(1.0, C.norm()));
    EXPECT_NEAR(w.dot(Qi), 0.0, tol * std::max(1.0, Qi.norm())) << "ideal force does no work";
  }
  // Equivalent formulation: the ideal UK (= KKT) solution for the applied force Q + C.
  if (Ae.rows() > 0) {
    const Kkt ref = kkt_solve(Me, Qe + C, Ae, be);
    EXPECT_LE(rel(qdd, ref.qdd), tol) << "KKT with Q + C";
    // and Qc_ideal is the ideal solve's constraint force for Q alone.
    const Kkt ideal = kkt_solve(Me, Qe, Ae, be);
    EXPECT_LE(rel(Qi, ideal.force), tol) << "Qc_ideal independent of C";
  } else {
    EXPECT_LE(rel(qdd, Me.ldlt().solve(Qe + C)), tol) << "no rows: C is an applied force";
    EXPECT_LE(rel(Qn, C), tol);
  }
}

template <class T>
void nonideal_suite(double tol) {
  std::mt19937_64 rng(51);
  constexpr int n = 5, m = 2;
  for (int trial = 0; trial < 5; ++trial) {
    const MatrixXd Me = random_spd(n, rng);
    const VectorXd Qe = gaussian(n, 1, rng);
    const MatrixXd Ae = with_rank(m, n, m, rng);
    const VectorXd be = gaussian(m, 1, rng);
    check_nonideal<T, n, m>(Me, Qe, Ae, be, ConstantForce<T, n>{to_vec<T, n>(gaussian(n, 1, rng))},
                            tol);
    check_nonideal<T, n, m>(Me, Qe, Ae, be,
                            FrictionLike<T, n>{T(0.3), to_vec<T, n>(gaussian(n, 1, rng))}, tol);
    // Rank-deficient consistent rows with a duplicate.
    MatrixXd A3(3, n);
    A3 << Ae, Ae.row(0);
    VectorXd b3(3);
    b3 << be, be(0);
    check_nonideal<T, n, 3>(Me, Qe, A3, b3, ConstantForce<T, n>{to_vec<T, n>(gaussian(n, 1, rng))},
                            tol * 10);
    // No rows.
    check_nonideal<T, n, 0>(Me, Qe, MatrixXd::Zero(0, n), VectorXd::Zero(0),
                            ConstantForce<T, n>{to_vec<T, n>(gaussian(n, 1, rng))}, tol);
  }
}

TEST(UkSolve, NonIdealConstraintsDouble) { nonideal_suite<double>(1e-13); }
TEST(UkSolve, NonIdealConstraintsFloat) { nonideal_suite<float>(1e-5); }

// Bead on a circle x^2 + y^2 = R^2 under gravity, moving with speed u counterclockwise at angle
// th, with friction C = -mu |N| v / |v|: closed form. Along e_r = (cos th, sin th) the normal
// force N_r supplies what gravity does not of the centripetal demand: m (-u^2 / R) =
// -m g sin(th) + N_r, so |N| = m |g sin(th) - u^2 / R|; the tangential acceleration is
// -g cos(th) - mu |N| / m, and the friction force is the whole non-ideal part (it is tangent).
TEST(UkSolve, NonIdealBeadOnCircleClosedForm) {
  const double m = 1.3, R = 0.8, g = 9.81, mu = 0.25, th = 0.6, u = 2.2;
  const double x = R * std::cos(th), y = R * std::sin(th);
  const double vx = -u * std::sin(th), vy = u * std::cos(th);
  Mat<double, 2, 2> M = Mat<double, 2, 2>::identity();
  M(0, 0) = m;
  M(1, 1) = m;
  Vec<double, 2> Q;
  Q[0] = 0.0;
  Q[1] = -m * g;
  // phi = (x^2 + y^2 - R^2) / 2: A = [x, y], b = -(vx^2 + vy^2).
  Mat<double, 1, 2> A;
  A(0, 0) = x;
  A(0, 1) = y;
  Vec<double, 1> b;
  b[0] = -(vx * vx + vy * vy);
  Vec<double, 2> v;
  v[0] = vx;
  v[1] = vy;
  const auto s = uk_solve(M, Q, A, b, FrictionLike<double, 2>{mu, v});
  const double N = m * std::abs(g * std::sin(th) - u * u / R);
  EXPECT_NEAR(norm2(s.Qc_ideal), N, 1e-12 * N);
  const double at = -g * std::cos(th) - mu * N / m;  // tangential acceleration
  const double ar = -u * u / R;                      // radial (centripetal)
  const double ax = ar * std::cos(th) - at * std::sin(th);
  const double ay = ar * std::sin(th) + at * std::cos(th);
  EXPECT_NEAR(s.qdd[0], ax, 1e-12 * (1 + std::abs(ax)));
  EXPECT_NEAR(s.qdd[1], ay, 1e-12 * (1 + std::abs(ay)));
  // Friction power is -mu N u <= 0.
  EXPECT_NEAR(dot(s.Qc_nonideal, v), -mu * N * u, 1e-12 * mu * N * u);
  EXPECT_NEAR(s.Qc_nonideal[0], -mu * N * vx / u, 1e-12);
  EXPECT_NEAR(s.Qc_nonideal[1], -mu * N * vy / u, 1e-12);
}

// ------------------------------------------------------------------ singular mass matrices
// M only positive semi-definite: the KKT matrix [[M, A^T], [A, 0]] is still nonsingular while
// [M; A] has full column rank and A full row rank, so it stays an independent reference.

// Random positive semi-definite n x n matrices of rank n - m, and m x n rows that complete them:
// the UK solution must equal the KKT one, forces included.
template <int N, int Mr>
void check_semidefinite_mass(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < 20; ++trial) {
    const MatrixXd G = gaussian(N, N - Mr, rng);
    const MatrixXd Me = G * G.transpose();  // rank N - Mr
    const MatrixXd Ae = gaussian(Mr, N, rng);
    MatrixXd stacked(N + Mr, N);
    stacked << Me, Ae;
    ASSERT_EQ(Eigen::FullPivLU<MatrixXd>(stacked).rank(), N);
    const VectorXd Qe = gaussian(N, 1, rng), be = gaussian(Mr, 1, rng);
    const Kkt ref = kkt_solve(Me, Qe, Ae, be);
    const auto s =
        uk_solve(from_eigen<double, N, N>(Me), to_vec<double, N>(Qe), from_eigen<double, Mr, N>(Ae),
                 to_vec<double, Mr>(be), NoNonIdealForce{});
    ASSERT_TRUE(s.mass_ok) << "trial " << trial;
    const double cond = Eigen::JacobiSVD<MatrixXd>(stacked).singularValues().maxCoeff() /
                        Eigen::JacobiSVD<MatrixXd>(stacked).singularValues().minCoeff();
    EXPECT_LE(rel(to_eigen(s.qdd), ref.qdd), 1e-13 * cond) << "trial " << trial;
    EXPECT_LE(rel(to_eigen(s.Qc_ideal), ref.force), 1e-13 * cond) << "trial " << trial;
    EXPECT_LE(s.inconsistency, 1e-12 * cond * std::max(1.0, be.norm())) << "trial " << trial;
  }
}

TEST(UkSolveSingularMass, MatchesKktWhileMassAndRowsHaveFullRank) {
  check_semidefinite_mass<3, 1>(11);
  check_semidefinite_mass<4, 2>(12);
  check_semidefinite_mass<6, 3>(13);
}

// A pendulum in Cartesian coordinates with its angle as a third, massless coordinate: q = (x, y,
// th), M = diag(m, m, 0), rows x - l sin th = 0 and y + l cos th = 0. The reduced equation is
// th'' = -(g / l) sin th, and x'', y'' follow by differentiating the rows twice.
TEST(UkSolveSingularMass, MasslessCoordinateFollowsTheReducedEquation) {
  const double m = 0.7, l = 1.3, g = 9.81;
  Mat<double, 3, 3> M = Mat<double, 3, 3>::zero();
  M(0, 0) = M(1, 1) = m;
  Vec<double, 3> Q = Vec<double, 3>::zero();
  Q[1] = -m * g;
  for (const double th : {-2.5, -0.4, 0.0, 0.3, 1.2, 3.0}) {
    for (const double thd : {0.0, 1.7, -4.0}) {
      const double s = std::sin(th), c = std::cos(th);
      // phi = (x - l sin th, y + l cos th): A = [[1, 0, -l c], [0, 1, -l s]],
      // b = -(d/dt A) qd = (-l s thd^2, l c thd^2).
      Mat<double, 2, 3> A = Mat<double, 2, 3>::zero();
      A(0, 0) = 1.0;
      A(0, 2) = -l * c;
      A(1, 1) = 1.0;
      A(1, 2) = -l * s;
      Vec<double, 2> b;
      b[0] = -l * s * thd * thd;
      b[1] = l * c * thd * thd;
      const auto sol = uk_solve(M, Q, A, b, NoNonIdealForce{});
      ASSERT_TRUE(sol.mass_ok) << th;
      const double thdd = -(g / l) * s;
      EXPECT_NEAR(sol.qdd[2], thdd, 1e-12) << th << " " << thd;
      EXPECT_NEAR(sol.qdd[0], l * (c * thdd - s * thd * thd), 1e-12) << th << " " << thd;
      EXPECT_NEAR(sol.qdd[1], l * (s * thdd + c * thd * thd), 1e-12) << th << " " << thd;
      // The rod's tension acts along it, and the massless coordinate feels no net force.
      const Vec<double, 3> Qc = sol.Qc_ideal;
      EXPECT_NEAR(Qc[0] * c + Qc[1] * s, 0.0, 1e-11) << "tension along the rod";
      // th has no mass: the force on it balances, 0 = Q[2] + Qc[2].
      EXPECT_NEAR(Qc[2], -Q[2], 1e-11);
      EXPECT_LE(sol.inconsistency, 1e-12);
    }
  }
}

// FrictionLike that also records the ideal force it was given.
template <class T, int N>
struct RecordingFriction {
  static constexpr bool kActive = true;
  FrictionLike<T, N> law;
  Vec<T, N>* seen;
  void operator()(const Vec<T, N>& Qc_ideal, Vec<T, N>& C) const {
    *seen = Qc_ideal;
    law(Qc_ideal, C);
  }
};

// The prescribed force of a non-ideal constraint gets the original mass's ideal force (friction
// laws use it as the normal force), and the total equals the KKT solution for Q + C.
TEST(UkSolveSingularMass, NonIdealForcesSeeTheOriginalIdealForce) {
  std::mt19937_64 rng(21);
  constexpr int n = 4, m = 2;
  const MatrixXd G = gaussian(n, n - m, rng);
  const MatrixXd Me = G * G.transpose();
  const MatrixXd Ae = gaussian(m, n, rng);
  const VectorXd Qe = gaussian(n, 1, rng), be = gaussian(m, 1, rng);
  const Kkt ideal = kkt_solve(Me, Qe, Ae, be);
  const Vec<double, n> v = to_vec<double, n>(gaussian(n, 1, rng));
  Vec<double, n> seen = Vec<double, n>::zero();
  const auto s =
      uk_solve(from_eigen<double, n, n>(Me), to_vec<double, n>(Qe), from_eigen<double, m, n>(Ae),
               to_vec<double, m>(be), RecordingFriction<double, n>{{0.3, v}, &seen});
  ASSERT_TRUE(s.mass_ok);
  EXPECT_LE(rel(to_eigen(seen), ideal.force), 1e-11);
  Vec<double, n> C;
  FrictionLike<double, n>{0.3, v}(seen, C);
  const Kkt total = kkt_solve(Me, Qe + to_eigen(C), Ae, be);
  EXPECT_LE(rel(to_eigen(s.qdd), total.qdd), 1e-11);
  EXPECT_LE(rel(to_eigen(s.Qc_ideal + s.Qc_nonideal), total.force + to_eigen(C)), 1e-11);
}

// singular_mass stays the answer where [M; A] loses rank: a coordinate neither mass nor rows see.
TEST(UkSolveSingularMass, AugmentedRankLossIsStillReported) {
  Mat<double, 3, 3> M = Mat<double, 3, 3>::zero();
  M(0, 0) = 1.0;
  Mat<double, 1, 3> A = Mat<double, 1, 3>::zero();
  A(0, 1) = 1.0;
  const auto s = uk_solve(M, Vec<double, 3>::zero(), A, Vec<double, 1>::zero(), NoNonIdealForce{});
  EXPECT_FALSE(s.mass_ok);
  // No rows at all: a singular M has nothing to complete it.
  const auto none =
      uk_solve(M, Vec<double, 3>::zero(), Mat<double, 0, 3>{}, Vec<double, 0>{}, NoNonIdealForce{});
  EXPECT_FALSE(none.mass_ok);
}

}  // namespace
}  // namespace ukes
