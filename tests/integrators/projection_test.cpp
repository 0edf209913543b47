// Projection onto the constraint set (kernels/integrators/projection.hpp): after projection
// |phi|, |phid| and |psi| are at the requested tolerance, and the correction is the M-weighted
// least change: dq = M^-1 A^T mu, i.e. N^T M dq = 0 for a basis N of the tangent space null(A).
// For rows linear in q (positions) and affine in qd (velocities) the least-change point has a
// closed form, q* = q - M^-1 A^T (A M^-1 A^T)^-1 phi(q), computed here with Eigen; for a circle
// with isotropic M it is the radial projection L q / |q|.
#include "kernels/integrators/projection.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "support/eigen_interop.hpp"

namespace ukes {
namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;
using namespace ukes::testing;

// n = 4, constant SPD mass matrix (diagonally dominant), rows:
//   phi0 = q0 + 2 q1 - q3 - 0.5 t - d     phi1 = q1 - q2 + 3 q3 - 1
//   psi0 = qd3 + q0 qd2 - 0.5              (affine in qd, coefficient depends on q)
struct LinearRows {
  static constexpr const char* kName = "test_linear_rows";
  static constexpr int kN = 4;
  static constexpr int kPositionRows = 2;
  static constexpr int kVelocityRows = 1;
  static constexpr bool kNonIdeal = false;
  static constexpr ParamSpec kParams[] = {{"d", 0.7}};
  static constexpr double kM[16] = {4, 1, 0, 0.5, 1, 3, 0.2, 0, 0, 0.2, 2, 0.3, 0.5, 0, 0.3, 1.5};
  template <class T>
  static void mass(const Vec<T, kN>&, T, const T*, Mat<T, kN, kN>& M) {
    for (int k = 0; k < 16; ++k) M.a[k] = T(kM[k]);
  }
  template <class S, class T>
  static void position_rows(const Vec<S, kN>& q, S t, const T* p, S* phi) {
    phi[0] = q[0] + 2 * q[1] - q[3] - T(0.5) * t - p[0];
    phi[1] = q[1] - q[2] + 3 * q[3] - 1;
  }
  template <class S, class T>
  static void velocity_rows(const Vec<S, kN>& q, const Vec<S, kN>& qd, S, const T*, S* psi) {
    psi[0] = qd[3] + q[0] * qd[2] - 0.5;
  }
};

// Circle of radius L, mass m I: phi = (x^2 + y^2 - L^2) / 2.
struct Circle {
  static constexpr const char* kName = "test_circle";
  static constexpr int kN = 2;
  static constexpr int kPositionRows = 1;
  static constexpr int kVelocityRows = 0;
  static constexpr bool kNonIdeal = false;
  static constexpr ParamSpec kParams[] = {{"m", 1.7}, {"L", 1.3}};
  template <class T>
  static void mass(const Vec<T, kN>&, T, const T* p, Mat<T, kN, kN>& M) {
    M = Mat<T, kN, kN>::identity();
    M(0, 0) = p[0];
    M(1, 1) = p[0];
  }
  template <class S, class T>
  static void position_rows(const Vec<S, kN>& q, S, const T* p, S* phi) {
    phi[0] = 0.5 * (q[0] * q[0] + q[1] * q[1] - p[1] * p[1]);
  }
  template <class S, class T>
  static void velocity_rows(const Vec<S, kN>&, const Vec<S, kN>&, S, const T*, S*) {}
};

// Rows x = 0 and x = 1: cannot be met.
struct Contradiction {
  static constexpr const char* kName = "test_contradiction";
  static constexpr int kN = 2;
  static constexpr int kPositionRows = 2;
  static constexpr int kVelocityRows = 0;
  static constexpr bool kNonIdeal = false;
  static constexpr ParamSpec kParams[] = {{"mass", 1.0}};
  template <class T>
  static void mass(const Vec<T, kN>&, T, const T* p, Mat<T, kN, kN>& M) {
    M = Mat<T, kN, kN>::identity();
    M(0, 0) = p[0];
  }
  template <class S, class T>
  static void position_rows(const Vec<S, kN>& q, S, const T*, S* phi) {
    phi[0] = q[0] * 1.0;
    phi[1] = q[0] - 1.0;
  }
  template <class S, class T>
  static void velocity_rows(const Vec<S, kN>&, const Vec<S, kN>&, S, const T*, S*) {}
};

MatrixXd mass_of_linear_rows() {
  MatrixXd M(4, 4);
  for (int k = 0; k < 16; ++k) M(k / 4, k % 4) = LinearRows::kM[k];
  return M;
}

MatrixXd null_space(const MatrixXd& A) {
  Eigen::JacobiSVD<MatrixXd> svd(A, Eigen::ComputeFullV);
  int rank = 0;
  for (int k = 0; k < svd.singularValues().size(); ++k)
    if (svd.singularValues()(k) > 1e-10 * svd.singularValues()(0)) ++rank;
  return svd.matrixV().rightCols(A.cols() - rank);
}

// The M-weighted least change that makes A x = r: x* = x - M^-1 A^T (A M^-1 A^T)^-1 (A x - r).
VectorXd least_change(const MatrixXd& M, const MatrixXd& A, const VectorXd& x, const VectorXd& r) {
  const MatrixXd MiAt = M.ldlt().solve(A.transpose());
  return x - MiAt * (A * MiAt).ldlt().solve(A * x - r);
}

ProjectionSettings<double> proj(double tol, int iterations) {
  return {tol, iterations, default_rank_rtol<double>(3, 4)};
}

TEST(Projection, LinearRowsPositionsAndVelocitiesLeastChange) {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> g(0.0, 1.0);
  const double p[1] = {LinearRows::kParams[0].value};
  const MatrixXd M = mass_of_linear_rows();
  MatrixXd Ap(2, 4);
  Ap << 1, 2, 0, -1, 0, 1, -1, 3;
  for (int trial = 0; trial < 20; ++trial) {
    const double t = 2 * std::abs(g(rng));
    Vec<double, 4> q, qd;
    for (int j = 0; j < 4; ++j) {
      q[j] = g(rng);
      qd[j] = g(rng);
    }
    const VectorXd q_old = to_eigen(q), qd_old = to_eigen(qd);

    // Positions: rows linear in q, so one Gauss–Newton step is exact.
    ASSERT_TRUE((project_positions<LinearRows, double>(LinearRows{}, q, t, p, proj(1e-13, 1))));
    VectorXd r(2);
    r << 0.5 * t + p[0], 1.0;
    const VectorXd q_star = least_change(M, Ap, q_old, r);
    const VectorXd q_new = to_eigen(q);
    EXPECT_LE((q_new - q_star).norm(), 1e-13 * (1 + q_star.norm()));
    EXPECT_LE((Ap * q_new - r).lpNorm<Eigen::Infinity>(), 1e-13);
    const MatrixXd Np = null_space(Ap);
    EXPECT_LE((Np.transpose() * M * (q_new - q_old)).norm(), 1e-13 * (1 + (q_new - q_old).norm()))
        << "M-orthogonal to the tangent space";

    // Velocities: rows phid = Ap qd - (0.5, 0), psi = qd3 + q0 qd2 - 0.5.
    ASSERT_TRUE(
        (project_velocities<LinearRows, double>(LinearRows{}, q, qd, t, p, proj(1e-13, 1))));
    MatrixXd A(3, 4);
    A << Ap, 0, 0, q_new(0), 1;
    VectorXd rv(3);
    rv << 0.5, 0.0, 0.5;
    const VectorXd qd_star = least_change(M, A, qd_old, rv);
    const VectorXd qd_new = to_eigen(qd);
    EXPECT_LE((qd_new - qd_star).norm(), 1e-13 * (1 + qd_star.norm()));
    EXPECT_LE((A * qd_new - rv).lpNorm<Eigen::Infinity>(), 1e-13);
    const MatrixXd N = null_space(A);
    EXPECT_LE((N.transpose() * M * (qd_new - qd_old)).norm(),
              1e-13 * (1 + (qd_new - qd_old).norm()));
    // The constraint form agrees: phi, phid and psi are all ~0 now.
    const auto f = constraint_form<LinearRows, double>(LinearRows{}, q, qd, t, p);
    EXPECT_LE(std::abs(f.value[0]) + std::abs(f.value[1]) + std::abs(f.value[2]), 3e-13);
    EXPECT_LE(std::abs(f.rate[0]) + std::abs(f.rate[1]), 2e-13);
  }
}

// Nonlinear rows: the circle. Gauss–Newton moves along A^T = q, the ray through q, so it converges
// to the nearest point L q / |q|; velocities lose exactly their radial part.
TEST(Projection, CircleRadialProjection) {
  const double p[2] = {1.7, 1.3};
  const double L = p[1];
  for (double scale : {0.5, 0.97, 1.0 + 1e-9, 1.4, 3.0}) {
    SCOPED_TRACE(scale);
    const double th = 0.8;
    Vec<double, 2> q, qd;
    q[0] = scale * L * std::cos(th);
    q[1] = scale * L * std::sin(th);
    qd[0] = 0.4;
    qd[1] = -1.1;
    ASSERT_TRUE((project_positions<Circle, double>(Circle{}, q, 0.0, p, proj(1e-12, 20))));
    EXPECT_NEAR(q[0], L * std::cos(th), 1e-12);
    EXPECT_NEAR(q[1], L * std::sin(th), 1e-12);
    ASSERT_TRUE((project_velocities<Circle, double>(Circle{}, q, qd, 0.0, p, proj(1e-12, 20))));
    const double er[2] = {std::cos(th), std::sin(th)};
    const double radial = 0.4 * er[0] - 1.1 * er[1];
    EXPECT_NEAR(qd[0], 0.4 - radial * er[0], 1e-12);
    EXPECT_NEAR(qd[1], -1.1 - radial * er[1], 1e-12);
    EXPECT_NEAR(q[0] * qd[0] + q[1] * qd[1], 0.0, 1e-12);
  }
}

// Gauss–Newton needs several iterations on curved rows: with too few it must say it failed.
TEST(Projection, ReportsNonConvergence) {
  const double p[2] = {1.7, 1.3};
  Vec<double, 2> q;
  q[0] = 3.0;
  q[1] = 0.0;
  EXPECT_FALSE((project_positions<Circle, double>(Circle{}, q, 0.0, p, proj(1e-12, 1))));
  q[0] = 3.0;
  EXPECT_TRUE((project_positions<Circle, double>(Circle{}, q, 0.0, p, proj(1e-12, 30))));

  // Contradictory rows x = 0, x = 1: never met.
  const double pc[1] = {1.0};
  Vec<double, 2> qc;
  qc[0] = 0.3;
  qc[1] = 0.0;
  EXPECT_FALSE(
      (project_positions<Contradiction, double>(Contradiction{}, qc, 0.0, pc, proj(1e-12, 50))));
  // The least-squares compromise x = 1/2 is where it stays.
  EXPECT_NEAR(qc[0], 0.5, 1e-12);

  // A mass matrix that is not positive definite.
  const double pbad[1] = {-1.0};
  qc[0] = 0.3;
  EXPECT_FALSE(
      (project_positions<Contradiction, double>(Contradiction{}, qc, 0.0, pbad, proj(1e-12, 50))));
  Vec<double, 2> qd = Vec<double, 2>::zero();
  const double pcircle_bad[2] = {-1.0, 1.0};
  Vec<double, 2> qq;
  qq[0] = 1.0;
  qq[1] = 0.0;
  qd[0] = 1.0;
  EXPECT_FALSE(
      (project_velocities<Circle, double>(Circle{}, qq, qd, 0.0, pcircle_bad, proj(1e-12, 5))));
}

// Already-consistent states are left untouched (no iteration is taken).
TEST(Projection, ConsistentStateUnchanged) {
  const double p[2] = {1.7, 1.3};
  Vec<double, 2> q, qd;
  q[0] = 1.3;
  q[1] = 0.0;
  qd[0] = 0.0;
  qd[1] = 2.0;
  const Vec<double, 2> q0 = q, qd0 = qd;
  EXPECT_TRUE((project_positions<Circle, double>(Circle{}, q, 0.0, p, proj(1e-12, 0))));
  EXPECT_TRUE((project_velocities<Circle, double>(Circle{}, q, qd, 0.0, p, proj(1e-12, 0))));
  for (int j = 0; j < 2; ++j) {
    EXPECT_EQ(q[j], q0[j]);
    EXPECT_EQ(qd[j], qd0[j]);
  }
}

// Float: the same projections to float accuracy.
TEST(Projection, FloatLinearRows) {
  const float p[1] = {0.7f};
  Vec<float, 4> q, qd;
  const float qv[4] = {0.3f, -1.2f, 0.8f, 2.0f}, qdv[4] = {1.0f, 0.5f, -0.4f, 0.2f};
  for (int j = 0; j < 4; ++j) {
    q[j] = qv[j];
    qd[j] = qdv[j];
  }
  const ProjectionSettings<float> s{1e-5f, 3, default_rank_rtol<float>(3, 4)};
  ASSERT_TRUE((project_positions<LinearRows, float>(LinearRows{}, q, 0.5f, p, s)));
  ASSERT_TRUE((project_velocities<LinearRows, float>(LinearRows{}, q, qd, 0.5f, p, s)));
  const auto f = constraint_form<LinearRows, float>(LinearRows{}, q, qd, 0.5f, p);
  for (int r = 0; r < 3; ++r) EXPECT_LE(std::abs(f.value[r]), 1e-5f) << r;
  for (int r = 0; r < 2; ++r) EXPECT_LE(std::abs(f.rate[r]), 1e-5f) << r;
  // Against the double closed form.
  const MatrixXd M = mass_of_linear_rows();
  MatrixXd Ap(2, 4);
  Ap << 1, 2, 0, -1, 0, 1, -1, 3;
  VectorXd q_old(4), r(2);
  for (int j = 0; j < 4; ++j) q_old(j) = qv[j];
  r << 0.25 + 0.7, 1.0;
  const VectorXd q_star = least_change(M, Ap, q_old, r);
  for (int j = 0; j < 4; ++j) EXPECT_NEAR(q[j], q_star(j), 1e-5 * (1 + std::abs(q_star(j))));
}

}  // namespace
}  // namespace ukes
