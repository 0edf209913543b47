// pfaffian_particle (MODELS.md sec. 13): particle with a nonholonomic Pfaffian constraint.
#include "kernels/models/pfaffian_particle.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "kernels/ensemble/ensemble.hpp"
#include "kernels/uk/constraint_form.hpp"

namespace ukes {
namespace {

using Model = models::PfaffianParticle;

TEST(PfaffianParticleModel, CatalogueMetadataAndDefaultState) {
  const ModelInfo* info = find_model("pfaffian_particle");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->n, 3);
  EXPECT_EQ(info->position_rows, 0);
  EXPECT_EQ(info->velocity_rows, 1);
  EXPECT_FALSE(info->nonideal);
  ASSERT_EQ(info->params.size(), 2u);
  EXPECT_EQ(std::string(info->params[0].name), "m");
  EXPECT_EQ(info->params[0].value, 1.0);
  EXPECT_EQ(std::string(info->params[1].name), "g");
  EXPECT_EQ(info->params[1].value, 9.81);
  EXPECT_EQ(info->coordinates, (std::vector<std::string>{"x", "y", "z"}));
  EXPECT_EQ(info->t_end, 5.0);
  EXPECT_EQ(info->gains.alpha, 0.0);
  EXPECT_EQ(info->gains.beta, 0.0);
  EXPECT_EQ(info->q0, (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(info->qd0, (std::vector<double>{1, 1, -1}));
}

TEST(PfaffianParticleModel, ReferenceConstraintForm) {
  std::mt19937 rng(51);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  const double p[2] = {1.0, 9.81};
  for (int trial = 0; trial < 20; ++trial) {
    const Vec<double, 3> q{{u(rng), u(rng), u(rng)}}, qd{{u(rng), u(rng), u(rng)}};
    const auto f = constraint_form<Model, double>(q, qd, 0.3, p);
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
  const ModelInfo* info = find_model("pfaffian_particle");
  ASSERT_NE(info, nullptr);
  EnsembleSettings s = EnsembleSettings::for_model(*info);
  s.method = Method::kDopri5;
  s.rtol = s.atol = 1e-12;
  s.samples = 2001;
  Batch batch = Batch::defaults(*info, 1);
  BatchResults r;
  run_ensemble_cpu(batch, s, r, {0});
  ASSERT_EQ(r.status[0], 0);
  ASSERT_EQ(r.t[0], 5.0);

  const double m = 1, g = 9.81;
  const double e0 = 0.5 * m * 3;
  double psi_sampled = 0, e_err = 0;
  for (int k = 0; k < s.samples; ++k) {
    psi_sampled = std::max(psi_sampled, std::abs(r.traj_residual_at(0, k, 0)));
    double v2 = 0;
    for (int j = 0; j < 3; ++j) v2 += r.traj_qd_at(0, k, j) * r.traj_qd_at(0, k, j);
    const double e = 0.5 * m * v2 + m * g * r.traj_q_at(0, k, 2);
    e_err = std::max(e_err, std::abs(e - e0) / e0);
  }

  auto f = [&](const std::array<double, 6>& y) {
    const double z = y[2], yd = y[4], zd = y[5];
    const double A[3] = {1, 2 * z, 1};
    const double a[3] = {0, 0, -g};
    const double b = -2 * yd * zd;
    const double lam = (b - (A[0] * a[0] + A[1] * a[1] + A[2] * a[2])) /
                       ((A[0] * A[0] + A[1] * A[1] + A[2] * A[2]) / m);
    return std::array<double, 6>{
        y[3], y[4], y[5], a[0] + lam * A[0] / m, a[1] + lam * A[1] / m, a[2] + lam * A[2] / m};
  };
  auto axpy = [](const std::array<double, 6>& x, double c, const std::array<double, 6>& d) {
    std::array<double, 6> o;
    for (int i = 0; i < 6; ++i) o[i] = x[i] + c * d[i];
    return o;
  };
  std::array<double, 6> y = {0, 0, 0, 1, 1, -1};
  const int per_sample = 20;
  const double h = 5.0 / (s.samples - 1) / per_sample;
  double dev = 0;
  for (int k = 0; k < s.samples; ++k) {
    if (k > 0) {
      for (int j = 0; j < per_sample; ++j) {
        const auto k1 = f(y);
        const auto k2 = f(axpy(y, h / 2, k1));
        const auto k3 = f(axpy(y, h / 2, k2));
        const auto k4 = f(axpy(y, h, k3));
        for (int i = 0; i < 6; ++i) y[i] += h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
      }
    }
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
