// pfaffian_particle (docs/MODELS.md sec. 13): particle with a nonholonomic Pfaffian constraint.
#include "kernels/models/pfaffian_particle.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <vector>

#include "kernels/ensemble/ensemble.hpp"
#include "kernels/uk/constraint_form.hpp"
#include "support/model_test_support.hpp"

namespace ukes {
namespace {

using Model = models::PfaffianParticle;
using namespace ukes::testing;

// The catalogue metadata (names, defaults, t_end, gains) is asserted in tests/catalogue.
TEST(PfaffianParticleModel, DefaultState) {
  const ModelInfo* info = find_model("pfaffian_particle");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->q0, (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(info->qd0, (std::vector<double>{1, 1, -1}));
}

TEST(PfaffianParticleModel, ReferenceConstraintForm) {
  UniformRandom u(51, -2.0, 2.0);
  const double p[2] = {1.0, 9.81};
  for (int trial = 0; trial < 20; ++trial) {
    const Vec<double, 3> q{{u(), u(), u()}}, qd{{u(), u(), u()}};
    const auto f = constraint_form<Model, double>(Model{}, q, qd, 0.3, p);
    EXPECT_EQ(f.A(0, 0), 1.0);
    EXPECT_NEAR(f.A(0, 1), 2 * q[2], 1e-15);
    EXPECT_EQ(f.A(0, 2), 1.0);
    EXPECT_NEAR(f.b[0], -2 * qd[1] * qd[2], 1e-14);
    EXPECT_NEAR(f.value[0], qd[0] + 2 * q[2] * qd[1] + qd[2], 1e-14);
  }
}

// Must hold: at rtol = atol = 1e-12, |psi| < 1e-8 over the run (sampled output included); energy
// conserved to 1e-9 relative. Also compared with the Lagrange-multiplier equations
// m qdd = Q + lambda A^T, lambda = (b - A a) / (A A^T / m), integrated here by RK4.
TEST(PfaffianParticleModel, ConstraintHeldEnergyConservedAndMultiplierSolutionMatched) {
  const SystemRun run = run_default_system("pfaffian_particle", Method::kDopri5, 1e-12, 2001);
  ASSERT_TRUE(ran_to_end(run));
  const BatchResults& r = run.results;
  ASSERT_EQ(r.t[0], 5.0);

  const double m = 1, g = 9.81;
  const double e0 = 0.5 * m * 3;
  auto energy = [&](int k) {
    double v2 = 0;
    for (int j = 0; j < 3; ++j) v2 += r.traj_qd_at(0, k, j) * r.traj_qd_at(0, k, j);
    return 0.5 * m * v2 + m * g * r.traj_q_at(0, k, 2);
  };
  const double psi_sampled = max_abs_sampled_residual(r, 0);
  const double e_err = max_rel_deviation(r.samples, energy, e0);

  auto f = [&](double, const std::array<double, 6>& y) {
    const double z = y[2], yd = y[4], zd = y[5];
    const double A[3] = {1, 2 * z, 1};
    const double a[3] = {0, 0, -g};
    const double b = -2 * yd * zd;
    const double lam = (b - (A[0] * a[0] + A[1] * a[1] + A[2] * a[2])) /
                       ((A[0] * A[0] + A[1] * A[1] + A[2] * A[2]) / m);
    return std::array<double, 6>{
        y[3], y[4], y[5], a[0] + lam * A[0] / m, a[1] + lam * A[1] / m, a[2] + lam * A[2] / m};
  };
  const auto ref = rk4_reference_samples(f, 0.0, 5.0, std::array<double, 6>{0, 0, 0, 1, 1, -1},
                                         r.samples, /*steps_per_sample=*/20);
  double dev = 0;
  for (int k = 0; k < r.samples; ++k) {
    const std::array<double, 6>& y = ref[std::size_t(k)];
    for (int j = 0; j < 3; ++j) {
      dev = std::max(dev, std::abs(r.traj_q_at(0, k, j) - y[j]));
      dev = std::max(dev, std::abs(r.traj_qd_at(0, k, j) - y[3 + j]));
    }
  }
  std::printf(
      "pfaffian_particle: max |psi| = %.3e (steps), %.3e (samples); max |E - E0|/E0 = %.3e; max "
      "deviation from the multiplier solution = %.3e\n",
      r.residual_at(0, 0), psi_sampled, e_err, dev);
  EXPECT_LT(r.residual_at(0, 0), 1e-8);
  EXPECT_LT(psi_sampled, 1e-8);
  EXPECT_LT(e_err, 1e-9);
  EXPECT_LT(dev, 1e-8);
}

}  // namespace
}  // namespace ukes
