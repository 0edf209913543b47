// flexible_joint (docs/MODELS.md sec. 3): two-link flexible-joint manipulator, servo constraint.
#include "kernels/models/flexible_joint.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "kernels/ensemble/ensemble.hpp"
#include "kernels/uk/constraint_form.hpp"
#include "kernels/uk/dynamics.hpp"
#include "support/model_test_support.hpp"

namespace ukes {
namespace {

using Model = models::FlexibleJoint;
using namespace ukes::testing;

// docs/MODELS.md defaults, in order: m1, m2, l1, lc1, lc2, I1, I2, J1, J2, K1, K2, g, u1, u2. The
// catalogue metadata (names, defaults, t_end, gains) is asserted in tests/catalogue.
const std::vector<double> kValues = {1, 1, 1, 0.5, 0.5, 1, 1, 1, 1, 1, 1, 9.81, 0, 0};

TEST(FlexibleJointModel, DefaultInitialCondition) {
  const ModelInfo* info = find_model("flexible_joint");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->q0, (std::vector<double>{0, 0, 0, 0}));
  EXPECT_EQ(info->qd0, (std::vector<double>{1, -0.1, 0, 0}));
}

TEST(FlexibleJointModel, ConstraintFormMatchesReference) {
  UniformRandom u(3);
  for (int trial = 0; trial < 20; ++trial) {
    Vec<double, 4> q, qd;
    for (int j = 0; j < 4; ++j) {
      q[j] = 3.0 * u();
      qd[j] = 2.0 * u();
    }
    const auto f = constraint_form<Model, double>(Model{}, q, qd, 1.0, kValues.data());
    // Reference: A = [1, 1, 0, 0], b = 0; psi = th1d + th2d.
    EXPECT_EQ(f.A(0, 0), 1.0);
    EXPECT_EQ(f.A(0, 1), 1.0);
    EXPECT_EQ(f.A(0, 2), 0.0);
    EXPECT_EQ(f.A(0, 3), 0.0);
    EXPECT_EQ(f.b[0], 0.0);
    EXPECT_NEAR(f.value[0], qd[0] + qd[1], 1e-15);
  }
}

// The equations of motion against the Lagrangian they come from. With
// T = 1/2 thd^T D(th) thd + 1/2 (J1 m1d^2 + J2 m2d^2) and
// V = -(m1 lc1 + m2 l1) g cos th1 - m2 lc2 g cos(th1 + th2) + 1/2 K1 (th1 - m1)^2 + 1/2 K2 (...)^2
// (angles from the downward vertical), the unconstrained motion conserves T + V; here integrated
// with classical RK4 over the model's own M and Q but no constraint, so a wrong sign in C or G
// shows up as an energy drift. The constrained run (servo rows do work) is checked separately.
double energy(const Vec<double, 4>& q, const Vec<double, 4>& qd, const double* p) {
  const double m1 = p[0], m2 = p[1], l1 = p[2], lc1 = p[3], lc2 = p[4], I1 = p[5], I2 = p[6],
               J1 = p[7], J2 = p[8], K1 = p[9], K2 = p[10], g = p[11];
  const double c2 = std::cos(q[1]);
  const double d11 = m2 * (l1 * l1 + lc2 * lc2 + 2 * l1 * lc2 * c2) + m1 * lc1 * lc1 + I1 + I2;
  const double d12 = m2 * (lc2 * lc2 + l1 * lc2 * c2) + I2;
  const double d22 = m2 * lc2 * lc2 + I2;
  const double kin = 0.5 * (d11 * qd[0] * qd[0] + 2 * d12 * qd[0] * qd[1] + d22 * qd[1] * qd[1]) +
                     0.5 * (J1 * qd[2] * qd[2] + J2 * qd[3] * qd[3]);
  const double pot =
      -(m1 * lc1 + m2 * l1) * g * std::cos(q[0]) - m2 * lc2 * g * std::cos(q[0] + q[1]) +
      0.5 * K1 * (q[0] - q[2]) * (q[0] - q[2]) + 0.5 * K2 * (q[1] - q[3]) * (q[1] - q[3]);
  return kin + pot;
}

TEST(FlexibleJointModel, UnconstrainedDynamicsConserveEnergy) {
  const double* p = kValues.data();
  auto accel = [&](const Vec<double, 4>& q, const Vec<double, 4>& qd) {
    Mat<double, 4, 4> M;
    Vec<double, 4> Q;
    Model::mass(q, 0.0, p, M);
    Model::force(q, qd, 0.0, p, Q);
    Mat<double, 4, 4> L;
    EXPECT_TRUE(cholesky(M, L));
    return cholesky_solve(L, Q);
  };
  Vec<double, 4> q, qd;
  q[0] = 0.4, q[1] = -0.3, q[2] = 0.1, q[3] = 0.2;
  qd[0] = 1.0, qd[1] = -0.5, qd[2] = 0.3, qd[3] = -0.2;
  const double e0 = energy(q, qd, p);
  const double h = 1e-3;
  double drift = 0;
  for (int n = 0; n < 5000; ++n) {
    const auto a1 = accel(q, qd);
    const auto q2 = q + (0.5 * h) * qd, v2 = qd + (0.5 * h) * a1;
    const auto a2 = accel(q2, v2);
    const auto q3 = q + (0.5 * h) * v2, v3 = qd + (0.5 * h) * a2;
    const auto a3 = accel(q3, v3);
    const auto q4 = q + h * v3, v4 = qd + h * a3;
    const auto a4 = accel(q4, v4);
    q = q + (h / 6) * (qd + 2.0 * v2 + 2.0 * v3 + v4);
    qd = qd + (h / 6) * (a1 + 2.0 * a2 + 2.0 * a3 + a4);
    drift = std::max(drift, std::abs(energy(q, qd, p) - e0));
  }
  EXPECT_LT(drift, 1e-9 * std::abs(e0) + 1e-10) << "e0 = " << e0;
}

// Must hold: psi(t) = 0.9 e^{-2t} (default alpha = 2), so |psi| < 1e-3 from t = ln(900)/2 = 3.40 s.
TEST(FlexibleJointModel, ServoConstraintDecaysExponentially) {
  const SystemRun run = run_default_system("flexible_joint", Method::kDopri5, 1e-10, 2001);
  ASSERT_TRUE(ran_to_end(run));
  const BatchResults& r = run.results;
  ASSERT_EQ(r.t[0], 10.0);
  const std::vector<double>& times = run.times;
  const double t_settle = std::log(900.0) / 2.0;
  EXPECT_NEAR(t_settle, 3.40, 0.005);
  double err = 0, late = 0;
  for (int k = 0; k < r.samples; ++k) {
    const double t = times[k];
    const double psi = r.traj_residual_at(0, k, 0);
    // The reported psi is th1d + th2d of the sampled state.
    ASSERT_NEAR(psi, r.traj_qd_at(0, k, 0) + r.traj_qd_at(0, k, 1), 1e-15);
    err = std::max(err, std::abs(psi - 0.9 * std::exp(-2.0 * t)));
    if (t >= t_settle) late = std::max(late, std::abs(psi));
    // ... and not before: the bound is the decay's, not slack.
    if (t <= t_settle - 0.01) {
      ASSERT_GT(std::abs(psi), 1e-3) << "t = " << t;
    }
  }
  std::printf("flexible_joint: max |psi - 0.9 e^{-2t}| = %.3g; max |psi| for t >= %.4f = %.6g\n",
              err, t_settle, late);
  EXPECT_LT(err, 1e-9);
  EXPECT_LT(late, 1e-3);
  // The links really move (the servo holds th1 + th2, not the links).
  EXPECT_GT(std::abs(r.q_at(0, 0)), 1e-2);
}

}  // namespace
}  // namespace ukes
