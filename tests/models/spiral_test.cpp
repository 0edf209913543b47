// spiral (docs/MODELS.md sec. 1): particle on a logarithmic spiral, rheonomic angle schedule.
#include "kernels/models/spiral.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "kernels/ensemble/ensemble.hpp"
#include "kernels/uk/constraint_form.hpp"
#include "support/model_test_support.hpp"

namespace ukes {
namespace {

using Model = models::Spiral;
using namespace ukes::testing;

// The catalogue metadata (names, defaults, t_end, gains) is asserted in tests/catalogue.
TEST(SpiralModel, DefaultInitialCondition) {
  const ModelInfo* info = find_model("spiral");
  ASSERT_NE(info, nullptr);
  const double e3 = std::exp(3.0);
  ASSERT_EQ(info->q0.size(), 2u);
  EXPECT_NEAR(info->q0[0], e3, 1e-14 * e3);
  EXPECT_EQ(info->q0[1], 30.0);
  EXPECT_NEAR(info->qd0[0], -0.1 * e3, 1e-14 * e3);
  EXPECT_EQ(info->qd0[1], -1.0);
}

TEST(SpiralModel, InitialStateFollowsParameters) {
  // A user who overrides k, omega or theta0 still gets a state on both rows (and their rates).
  const double p[] = {9.81, 0.25, 0.7, 4.0};
  Vec<double, 2> q, qd;
  Model::initial_state(p, q, qd);
  EXPECT_TRUE(on_constraint_set<Model>(q, qd, 0.0, p, 1e-14, 1e-14));
}

TEST(SpiralModel, ConstraintFormMatchesReference) {
  UniformRandom u(11);
  for (int trial = 0; trial < 20; ++trial) {
    const double k = 0.1 + 0.2 * (u() + 1.0), omega = 1.0 + u(), theta0 = 30.0;
    const double p[] = {9.81, k, omega, theta0};
    Vec<double, 2> q, qd;
    q[0] = 3.0 + 2.0 * u();
    q[1] = 10.0 * u();
    qd[0] = 5.0 * u();
    qd[1] = 5.0 * u();
    const double t = 20.0 * (u() + 1.0) / 2.0;
    const auto f = constraint_form<Model, double>(Model{}, q, qd, t, p);
    const double ekt = std::exp(k * q[1]);
    // Reference: A = [[1, -k e^{k theta}], [0, 1]], b = [k^2 e^{k theta} thetad^2, 0].
    EXPECT_EQ(f.A(0, 0), 1.0);
    EXPECT_NEAR(f.A(0, 1), -k * ekt, 1e-13 * k * ekt);
    EXPECT_EQ(f.A(1, 0), 0.0);
    EXPECT_EQ(f.A(1, 1), 1.0);
    const double b0 = k * k * ekt * qd[1] * qd[1];
    EXPECT_NEAR(f.b[0], b0, 1e-12 * std::abs(b0));
    EXPECT_NEAR(f.b[1], 0.0, 1e-15);
    // And the rows themselves, phi and phid.
    EXPECT_NEAR(f.value[0], q[0] - ekt, 1e-13 * (1 + ekt));
    EXPECT_NEAR(f.value[1], q[1] + omega * t - theta0, 1e-13 * 30);
    EXPECT_NEAR(f.rate[0], qd[0] - k * ekt * qd[1], 1e-13 * (1 + std::abs(k * ekt * qd[1])));
    EXPECT_NEAR(f.rate[1], qd[1] + omega, 1e-14 * 10);
  }
}

// Must hold: eps1 = sqrt(phi1^2 + phi2^2) and eps2 = sqrt(phid1^2 + phid2^2) stay below 1e-8
// over [0, 20] with the adaptive integrator at rtol = atol = 1e-10; theta(t) = 30 - t.
TEST(SpiralModel, StaysOnSpiralAndFollowsSchedule) {
  const SystemRun run = run_default_system("spiral", Method::kDopri5, 1e-10, 2001);
  ASSERT_TRUE(ran_to_end(run));
  const BatchResults& r = run.results;
  ASSERT_EQ(r.t[0], 20.0);

  const std::vector<double>& times = run.times;
  double eps1_max = 0, eps2_max = 0, theta_err = 0;
  for (int k = 0; k < r.samples; ++k) {
    const double phi1 = r.traj_residual_at(0, k, 0), phi2 = r.traj_residual_at(0, k, 1);
    const double phid1 = r.traj_residual_at(0, k, 2), phid2 = r.traj_residual_at(0, k, 3);
    eps1_max = std::max(eps1_max, std::hypot(phi1, phi2));
    eps2_max = std::max(eps2_max, std::hypot(phid1, phid2));
    theta_err = std::max(theta_err, std::abs(r.traj_q_at(0, k, 1) - (30.0 - times[k])));
    // Independently of the reported residuals: r = e^{0.1 theta} at the sampled state.
    const double rr = r.traj_q_at(0, k, 0), th = r.traj_q_at(0, k, 1);
    ASSERT_LT(std::abs(rr - std::exp(0.1 * th)), 1e-8) << "t = " << times[k];
  }
  std::printf("spiral: max eps1 = %.3g, max eps2 = %.3g, max |theta - (30 - t)| = %.3g\n", eps1_max,
              eps2_max, theta_err);
  EXPECT_LT(eps1_max, 1e-8);
  EXPECT_LT(eps2_max, 1e-8);
  EXPECT_LT(theta_err, 1e-8);
  // Every accepted step, not only the samples: the per-row maxima bound eps1 and eps2.
  EXPECT_LT(std::hypot(r.residual_at(0, 0), r.residual_at(1, 0)), 1e-8);
  EXPECT_LT(std::hypot(r.residual_at(2, 0), r.residual_at(3, 0)), 1e-8);
  // The particle has really moved along the spiral: theta(20) = 10, r(20) = e.
  EXPECT_NEAR(r.q_at(1, 0), 10.0, 1e-8);
  EXPECT_NEAR(r.q_at(0, 0), std::exp(1.0), 1e-8);
}

}  // namespace
}  // namespace ukes
