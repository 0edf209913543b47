// ellipse_particle (docs/MODELS.md sec. 15): particle held on an elliptical path.
#include "kernels/models/ellipse_particle.hpp"

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

using Model = models::EllipseParticle;
using namespace ukes::testing;

// m, ax, by, g.
using Params = std::array<double, 4>;

// The catalogue metadata (names, defaults, t_end, gains) is asserted in tests/catalogue.
TEST(EllipseParticleModel, DefaultState) {
  const ModelInfo* info = find_model("ellipse_particle");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->q0, (std::vector<double>{2, 0}));
  EXPECT_EQ(info->qd0, (std::vector<double>{0, 1}));
  // (ax, 0) follows the semi-axis.
  const Params p = {1, 3.5, 1.2, 9.81};
  Vec<double, 2> q, qd;
  Model::initial_state(p.data(), q, qd);
  EXPECT_EQ(q[0], 3.5);
  EXPECT_EQ(q[1], 0.0);
  EXPECT_TRUE(on_constraint_set<Model>(q, qd, 0.0, p.data(), 1e-15, 1e-15));
}

// Second-order form by hand: A = [2x/ax^2, 2y/by^2], b = -2 (xd^2/ax^2 + yd^2/by^2).
TEST(EllipseParticleModel, ReferenceConstraintForm) {
  UniformRandom u(71);
  for (int trial = 0; trial < 20; ++trial) {
    const Params p = {1, 2 + u(), 1 + 0.5 * u(), 9.81};
    const Vec<double, 2> q{{2 * u(), 2 * u()}}, qd{{3 * u(), 3 * u()}};
    const double ax2 = p[1] * p[1], by2 = p[2] * p[2];
    const auto f = constraint_form<Model, double>(Model{}, q, qd, 0.0, p.data());
    EXPECT_NEAR(f.A(0, 0), 2 * q[0] / ax2, 1e-14);
    EXPECT_NEAR(f.A(0, 1), 2 * q[1] / by2, 1e-14);
    const double b = -2 * (qd[0] * qd[0] / ax2 + qd[1] * qd[1] / by2);
    EXPECT_NEAR(f.b[0], b, 1e-13 * (1 + std::abs(b)));
    EXPECT_NEAR(f.value[0], q[0] * q[0] / ax2 + q[1] * q[1] / by2 - 1, 1e-14);
  }
}

// Must hold: energy conserved to 1e-9 relative; |phi| < 1e-9 at rtol = atol = 1e-12. Also
// compared with the reduced coordinate s, (x, y) = (ax cos s, by sin s):
//   J(s) sdd + J'(s) sd^2 / 2 + m g by cos s = 0,  J = m (ax^2 sin^2 s + by^2 cos^2 s).
TEST(EllipseParticleModel, ConstraintHeldEnergyConservedAndReducedSolutionMatched) {
  const SystemRun run = run_default_system("ellipse_particle", Method::kDopri5, 1e-12, 2001);
  ASSERT_TRUE(ran_to_end(run));
  const BatchResults& r = run.results;
  ASSERT_EQ(r.t[0], 10.0);

  const double m = 1, ax = 2, by = 1, g = 9.81;
  const double e0 = 0.5 * m * 1.0;
  auto f = [&](double, const std::array<double, 2>& y) {
    const double c = std::cos(y[0]), sn = std::sin(y[0]);
    const double J = m * (ax * ax * sn * sn + by * by * c * c);
    const double dJ = 2 * m * (ax * ax - by * by) * sn * c;
    return std::array<double, 2>{y[1], -(0.5 * dJ * y[1] * y[1] + m * g * by * c) / J};
  };
  // (0, 1) = (-ax sin s, by cos s) sd at s = 0.
  const auto ref = rk4_reference_samples(f, 0.0, 10.0, std::array<double, 2>{0.0, 1.0 / by},
                                         r.samples, /*steps_per_sample=*/20);
  auto energy = [&](int k) {
    const double xd = r.traj_qd_at(0, k, 0), yd = r.traj_qd_at(0, k, 1);
    return 0.5 * m * (xd * xd + yd * yd) + m * g * r.traj_q_at(0, k, 1);
  };
  const double phi_sampled = max_abs_sampled_residual(r, 0);
  const double e_err = max_rel_deviation(r.samples, energy, e0);
  double dev = 0;
  for (int k = 0; k < r.samples; ++k) {
    const std::array<double, 2>& y = ref[std::size_t(k)];
    const double x = r.traj_q_at(0, k, 0), yy = r.traj_q_at(0, k, 1);
    const double xd = r.traj_qd_at(0, k, 0), yd = r.traj_qd_at(0, k, 1);
    dev = std::max(dev, std::abs(x - ax * std::cos(y[0])));
    dev = std::max(dev, std::abs(yy - by * std::sin(y[0])));
    dev = std::max(dev, std::abs(xd + ax * std::sin(y[0]) * y[1]));
    dev = std::max(dev, std::abs(yd - by * std::cos(y[0]) * y[1]));
  }
  std::printf(
      "ellipse_particle: max |phi| = %.3e (steps), %.3e (samples); max |phid| = %.3e; max |E - "
      "E0|/E0 = %.3e; max deviation from the reduced solution = %.3e\n",
      r.residual_at(0, 0), phi_sampled, r.residual_at(1, 0), e_err, dev);
  EXPECT_LT(r.residual_at(0, 0), 1e-9);
  EXPECT_LT(phi_sampled, 1e-9);
  EXPECT_LT(e_err, 1e-9);
  EXPECT_LT(dev, 1e-8);
}

}  // namespace
}  // namespace ukes
