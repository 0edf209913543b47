// four_bar (docs/MODELS.md sec. 9): grounded four-bar linkage in absolute coordinates.
#include "kernels/models/four_bar.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <vector>

#include "kernels/ensemble/ensemble.hpp"
#include "kernels/uk/constraint_form.hpp"
#include "kernels/uk/dynamics.hpp"
#include "support/eigen_interop.hpp"
#include "support/model_test_support.hpp"

namespace ukes {
namespace {

using Model = models::FourBar;
using namespace ukes::testing;
constexpr double kPi = 3.14159265358979323846;

// L1, L2, L3, d, m1, m2, m3, g, tau (docs/MODELS.md order and defaults).
using Params = std::array<double, 9>;
const Params kDefaults = {1, 3, 2, 2.5, 1, 3, 2, 9.81, 0};

using Vec9 = Eigen::Matrix<double, 9, 1>;
using Mat89 = Eigen::Matrix<double, 8, 9>;
using Vec8 = Eigen::Matrix<double, 8, 1>;

// The second-order form of the eight rows, derived by hand from E_1^- = O1, E_1^+ = E_2^-,
// E_2^+ = E_3^-, E_3^+ = O4 (x and y rows each).
void reference_form(const Params& p, const Vec9& q, const Vec9& qd, Mat89& A, Vec8& b) {
  const double h1 = p[0] / 2, h2 = p[1] / 2, h3 = p[2] / 2;
  const double c1 = std::cos(q[2]), s1 = std::sin(q[2]), w1 = qd[2] * qd[2];
  const double c2 = std::cos(q[5]), s2 = std::sin(q[5]), w2 = qd[5] * qd[5];
  const double c3 = std::cos(q[8]), s3 = std::sin(q[8]), w3 = qd[8] * qd[8];
  A.setZero();
  A(0, 0) = 1, A(0, 2) = h1 * s1, b[0] = -h1 * c1 * w1;
  A(1, 1) = 1, A(1, 2) = -h1 * c1, b[1] = -h1 * s1 * w1;
  A(2, 0) = 1, A(2, 2) = -h1 * s1, A(2, 3) = -1, A(2, 5) = -h2 * s2;
  b[2] = h1 * c1 * w1 + h2 * c2 * w2;
  A(3, 1) = 1, A(3, 2) = h1 * c1, A(3, 4) = -1, A(3, 5) = h2 * c2;
  b[3] = h1 * s1 * w1 + h2 * s2 * w2;
  A(4, 3) = 1, A(4, 5) = -h2 * s2, A(4, 6) = -1, A(4, 8) = -h3 * s3;
  b[4] = h2 * c2 * w2 + h3 * c3 * w3;
  A(5, 4) = 1, A(5, 5) = h2 * c2, A(5, 7) = -1, A(5, 8) = h3 * c3;
  b[5] = h2 * s2 * w2 + h3 * s3 * w3;
  A(6, 6) = 1, A(6, 8) = -h3 * s3, b[6] = h3 * c3 * w3;
  A(7, 7) = 1, A(7, 8) = h3 * c3, b[7] = h3 * s3 * w3;
}

Eigen::Matrix<double, 9, 9> mass_matrix(const Params& p) {
  Vec9 diag;
  diag << p[4], p[4], p[4] * p[0] * p[0] / 12, p[5], p[5], p[5] * p[1] * p[1] / 12, p[6], p[6],
      p[6] * p[2] * p[2] / 12;
  return diag.asDiagonal();
}

Vec9 applied_force(const Params& p) {
  Vec9 Q;
  Q << 0, -p[4] * p[7], p[8], 0, -p[5] * p[7], 0, 0, -p[6] * p[7], 0;
  return Q;
}

double energy(const Params& p, const Vec9& q, const Vec9& qd) {
  return 0.5 * qd.dot(mass_matrix(p) * qd) + p[7] * (p[4] * q[1] + p[5] * q[4] + p[6] * q[7]);
}

// The catalogue metadata (names, defaults, t_end, gains) is asserted in tests/catalogue.
TEST(FourBarModel, DefaultState) {
  const ModelInfo* info = find_model("four_bar");
  ASSERT_NE(info, nullptr);
  // The numbers listed in docs/MODELS.md (15 significant digits).
  const double q0[9] = {0.25,
                        0.433012701892219,
                        1.0471975511966,
                        1.92351207495062,
                        1.33890316015471,
                        0.320722011634256,
                        2.92351207495062,
                        0.905890458262487,
                        -2.00811508058688};
  const double qd0[9] = {-0.866025403784438, 0.500000000000001, 2,
                         -1.69464129880816,  0.887385509845916, -0.0791103160526351,
                         -0.828615895023725, 0.387385509845916, 0.914697673947272};
  ASSERT_EQ(info->q0.size(), 9u);
  ASSERT_EQ(info->qd0.size(), 9u);
  for (int j = 0; j < 9; ++j) {
    EXPECT_NEAR(info->q0[j], q0[j], 2e-14) << "q0[" << j << "]";
    EXPECT_NEAR(info->qd0[j], qd0[j], 2e-14) << "qd0[" << j << "]";
  }
  // The coupler-rocker joint E_2^+ = (3.34702415, 1.81178092).
  const double jx = info->q0[3] + 1.5 * std::cos(info->q0[5]);
  const double jy = info->q0[4] + 1.5 * std::sin(info->q0[5]);
  EXPECT_NEAR(jx, 3.34702415, 1e-8);
  EXPECT_NEAR(jy, 1.81178092, 1e-8);
}

// The default IC is computed from the parameters: for other lengths it is still assembled
// (phi = 0, phid = 0) with th1 = pi/3, th1d = 2 and the joint on the upper branch.
TEST(FourBarModel, InitialStateAssembledForOtherParameters) {
  const std::vector<Params> cases = {
      {1.2, 2.8, 2.2, 2.7, 1, 3, 2, 9.81, 0},
      {0.8, 3.5, 2.5, 3.0, 2, 1, 1, 9.81, 0.5},
      {1.0, 3.0, 2.0, 2.5, 1, 3, 2, 9.81, 0},
  };
  for (const Params& p : cases) {
    Vec<double, 9> q, qd;
    Model::initial_state(p.data(), q, qd);
    EXPECT_NEAR(q[2], kPi / 3, 1e-15);
    EXPECT_EQ(qd[2], 2.0);
    Mat89 A;
    Vec8 b;
    reference_form(p, to_eigen(q), to_eigen(qd), A, b);
    EXPECT_TRUE(on_constraint_set<Model>(q, qd, 0.0, p.data(), 1e-14, 1e-14));
    // Velocity consistency independently: A qd = 0 with the hand-derived Jacobian.
    EXPECT_LT((A * to_eigen(qd)).norm(), 1e-14);
    const double jy = q[4] + p[1] / 2 * std::sin(q[5]);
    EXPECT_GT(jy, 0.0);
  }
}

TEST(FourBarModel, ReferenceConstraintForm) {
  UniformRandom u(21);
  for (int trial = 0; trial < 20; ++trial) {
    Params p = kDefaults;
    for (int k = 0; k < 4; ++k) p[k] *= 1 + 0.3 * u();
    Vec<double, 9> q, qd;
    for (int j = 0; j < 9; ++j) {
      q[j] = 3 * u();
      qd[j] = 3 * u();
    }
    Mat89 A;
    Vec8 b;
    reference_form(p, to_eigen(q), to_eigen(qd), A, b);
    const auto f = constraint_form<Model, double>(Model{}, q, qd, 0.7, p.data());
    for (int r = 0; r < 8; ++r) {
      for (int j = 0; j < 9; ++j) EXPECT_NEAR(f.A(r, j), A(r, j), 1e-14) << r << "," << j;
      EXPECT_NEAR(f.b[r], b[r], 1e-12 * (1 + std::abs(b[r]))) << "row " << r;
    }
  }
}

// Must hold: energy conserved to 1e-8 relative at rtol = atol = 1e-10; th1 gains more than 2 pi by
// t = 2.7 s; UK qdd equals the Lagrange-multiplier (KKT) solution where A has full row rank.
class FourBarRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // 1001 samples, every 0.01 s: t = 2.7 is sample 270.
    run_ = new SystemRun(run_default_system("four_bar", Method::kDopri5, 1e-10, 1001));
    results_ = &run_->results;
    ASSERT_NE(run_->info, nullptr);
  }
  static void TearDownTestSuite() {
    delete run_;
    run_ = nullptr;
    results_ = nullptr;
  }
  static Vec9 q_at(int k) {
    Vec9 v;
    for (int j = 0; j < 9; ++j) v[j] = results_->traj_q_at(0, k, j);
    return v;
  }
  static Vec9 qd_at(int k) {
    Vec9 v;
    for (int j = 0; j < 9; ++j) v[j] = results_->traj_qd_at(0, k, j);
    return v;
  }
  static double time_at(int k) { return 10.0 * k / (results_->samples - 1); }

  static inline SystemRun* run_ = nullptr;
  static inline const BatchResults* results_ = nullptr;
};

TEST_F(FourBarRun, EnergyConserved) {
  const BatchResults& r = *results_;
  ASSERT_TRUE(ran_to_end(*run_));
  ASSERT_EQ(r.t[0], 10.0);
  const double e0 = energy(kDefaults, q_at(0), qd_at(0));
  const double worst = max_rel_deviation(
      r.samples, [](int k) { return energy(kDefaults, q_at(k), qd_at(k)); }, e0);
  std::printf("four_bar: E0 = %.6f, max |E - E0| / |E0| = %.3e, max |phi| = %.3e, steps = %lld\n",
              e0, worst, r.residual_at(0, 0), static_cast<long long>(r.steps[0]));
  EXPECT_LT(worst, 1e-8);
}

TEST_F(FourBarRun, CrankTurnsFullCircleBy2p7s) {
  const int k27 = 270;
  ASSERT_NEAR(time_at(k27), 2.7, 1e-12);
  const double gained = results_->traj_q_at(0, k27, 2) - results_->traj_q_at(0, 0, 2);
  std::printf("four_bar: th1(2.7) - th1(0) = %.6f (2 pi = %.6f)\n", gained, 2 * kPi);
  EXPECT_GT(gained, 2 * kPi);
}

TEST_F(FourBarRun, UkAccelerationEqualsKktSolution) {
  const Eigen::Matrix<double, 9, 9> M = mass_matrix(kDefaults);
  const Vec9 Q = applied_force(kDefaults);
  int compared = 0;
  double worst = 0;
  for (int k = 0; k < results_->samples; k += 5) {
    const Vec9 q = q_at(k), qd = qd_at(k);
    Mat89 A;
    Vec8 b;
    reference_form(kDefaults, q, qd, A, b);
    const Eigen::JacobiSVD<Mat89> svd(A);
    const auto sv = svd.singularValues();
    if (sv[7] < 1e-6 * sv[0]) continue;  // full row rank only
    Eigen::Matrix<double, 17, 17> K = Eigen::Matrix<double, 17, 17>::Zero();
    K.topLeftCorner<9, 9>() = M;
    K.topRightCorner<9, 8>() = A.transpose();
    K.bottomLeftCorner<8, 9>() = A;
    Eigen::Matrix<double, 17, 1> rhs;
    rhs << Q, b;
    const Eigen::Matrix<double, 17, 1> sol = K.fullPivLu().solve(rhs);
    const Vec9 qdd_kkt = sol.head<9>();

    Vec<double, 9> qv, qdv;
    for (int j = 0; j < 9; ++j) {
      qv[j] = q[j];
      qdv[j] = qd[j];
    }
    const auto e = evaluate_dynamics<Model, double>(Model{}, qv, qdv, time_at(k), kDefaults.data(),
                                                    DynamicsSettings<double>{});
    ASSERT_TRUE(e.mass_ok);
    EXPECT_EQ(e.rank, 8);
    double diff = 0;
    for (int j = 0; j < 9; ++j) diff = std::max(diff, std::abs(e.qdd[j] - qdd_kkt[j]));
    worst = std::max(worst, diff / (1 + qdd_kkt.cwiseAbs().maxCoeff()));
    // The constraint forces agree too: Qc = -A^T lambda from the KKT system.
    const Vec9 Qc_kkt = -A.transpose() * sol.tail<8>();
    for (int j = 0; j < 9; ++j)
      EXPECT_NEAR(e.Qc[j], Qc_kkt[j], 1e-9 * (1 + Qc_kkt.cwiseAbs().maxCoeff()));
    ++compared;
  }
  std::printf("four_bar: %d states compared with KKT, max relative difference = %.3e\n", compared,
              worst);
  EXPECT_GT(compared, 150);
  EXPECT_LT(worst, 1e-10);
}

}  // namespace
}  // namespace ukes
