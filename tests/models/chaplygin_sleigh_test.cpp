// chaplygin_sleigh (docs/MODELS.md sec. 10): nonholonomic knife edge.
#include "kernels/models/chaplygin_sleigh.hpp"

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

using Model = models::ChaplyginSleigh;

using namespace ukes::testing;

// The catalogue metadata (names, defaults, t_end, gains) is asserted in tests/catalogue.
TEST(ChaplyginSleighModel, DefaultState) {
  const ModelInfo* info = find_model("chaplygin_sleigh");
  ASSERT_NE(info, nullptr);
  // x = y = th = 0, xd = 1, thd = 1, yd = a thd.
  EXPECT_EQ(info->q0, (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(info->qd0, (std::vector<double>{1, 0.5, 1}));
  // yd = a thd follows the parameter.
  const double p[3] = {2.0, 0.3, 0.25};
  Vec<double, 3> q, qd;
  Model::initial_state(p, q, qd);
  EXPECT_EQ(qd[1], 0.25);
  const auto f = constraint_form<Model, double>(Model{}, q, qd, 0.0, p);
  EXPECT_NEAR(f.value[0], 0.0, 1e-15);
}

TEST(ChaplyginSleighModel, ReferenceConstraintForm) {
  UniformRandom u(31);
  for (int trial = 0; trial < 20; ++trial) {
    const double p[3] = {1 + 0.5 * u(), 0.1 + 0.05 * u(), 0.5 + 0.3 * u()};
    const Vec<double, 3> q{{3 * u(), 3 * u(), 4 * u()}};
    const Vec<double, 3> qd{{2 * u(), 2 * u(), 2 * u()}};
    const auto f = constraint_form<Model, double>(Model{}, q, qd, 1.0, p);
    const double th = q[2], a = p[2];
    EXPECT_NEAR(f.A(0, 0), -std::sin(th), 1e-15);
    EXPECT_NEAR(f.A(0, 1), std::cos(th), 1e-15);
    EXPECT_NEAR(f.A(0, 2), -a, 1e-15);
    const double b = qd[2] * (std::cos(th) * qd[0] + std::sin(th) * qd[1]);
    EXPECT_NEAR(f.b[0], b, 1e-12 * (1 + std::abs(b)));
    const double psi = -std::sin(th) * qd[0] + std::cos(th) * qd[1] - a * qd[2];
    EXPECT_NEAR(f.value[0], psi, 1e-14);
  }
}

// Must hold: kinetic energy constant to 1e-9 relative; the rate decays to 0 and the sleigh ends
// moving forward; u, w follow m ud = m a w^2, (I + m a^2) wd = -m a u w.
TEST(ChaplyginSleighModel, RunMatchesReducedEquations) {
  const SystemRun run = run_default_system("chaplygin_sleigh", Method::kDopri5, 1e-12, 2001);
  ASSERT_TRUE(ran_to_end(run));
  const BatchResults& r = run.results;
  ASSERT_EQ(r.t[0], 20.0);

  const double m = 1, I = 0.1, a = 0.5;
  auto kinetic = [&](int k) {
    const double xd = r.traj_qd_at(0, k, 0), yd = r.traj_qd_at(0, k, 1), w = r.traj_qd_at(0, k, 2);
    return 0.5 * m * (xd * xd + yd * yd) + 0.5 * I * w * w;
  };
  const double ke0 = 0.5 * m * (1 + 0.25) + 0.5 * I;
  EXPECT_NEAR(kinetic(0), ke0, 1e-15);
  const double ke_err = max_rel_deviation(r.samples, kinetic, ke0);
  const double psi_max = max_abs_sampled_residual(r, 0);
  EXPECT_LT(ke_err, 1e-9);

  // Independent reduced model y = (x, y, th, u, w): the centre of mass moves with forward speed u
  // and sideways speed a w (blade does not slip).
  auto f = [&](double, const std::array<double, 5>& z) {
    const double c = std::cos(z[2]), sn = std::sin(z[2]), uu = z[3], w = z[4];
    return std::array<double, 5>{uu * c - a * w * sn, uu * sn + a * w * c, w, a * w * w,
                                 -m * a * uu * w / (I + m * a * a)};
  };
  const auto ref = rk4_reference_samples(f, 0.0, 20.0, std::array<double, 5>{0, 0, 0, 1, 1},
                                         r.samples, /*steps_per_sample=*/20);
  double dev = 0, uw_dev = 0, w_prev = 1;
  bool w_monotone = true;
  for (int k = 0; k < r.samples; ++k) {
    const std::array<double, 5>& z = ref[std::size_t(k)];
    for (int j = 0; j < 3; ++j) dev = std::max(dev, std::abs(r.traj_q_at(0, k, j) - z[j]));
    const double th = r.traj_q_at(0, k, 2);
    const double xd = r.traj_qd_at(0, k, 0), yd = r.traj_qd_at(0, k, 1), w = r.traj_qd_at(0, k, 2);
    const double uu = std::cos(th) * xd + std::sin(th) * yd;
    uw_dev = std::max({uw_dev, std::abs(uu - z[3]), std::abs(w - z[4])});
    if (std::abs(w) > w_prev + 1e-12) w_monotone = false;
    w_prev = std::abs(w);
  }
  const double u_end =
      std::cos(r.q_at(2, 0)) * r.qd_at(0, 0) + std::sin(r.q_at(2, 0)) * r.qd_at(1, 0);
  const double w_end = r.qd_at(2, 0);
  std::printf(
      "chaplygin_sleigh: max |KE - KE0|/KE0 = %.3e, max |psi| (samples) = %.3e, (steps) = %.3e\n"
      "  max |q - q_reduced| = %.3e, max |(u, w) - reduced| = %.3e, u(20) = %.12f, w(20) = %.3e\n",
      ke_err, psi_max, r.residual_at(0, 0), dev, uw_dev, u_end, w_end);
  EXPECT_LT(dev, 1e-8);
  EXPECT_LT(uw_dev, 1e-8);
  EXPECT_TRUE(w_monotone);
  // The rate has died out; all kinetic energy is forward motion, blade behind (u > 0).
  EXPECT_LT(std::abs(w_end), 1e-6);
  EXPECT_GT(u_end, 0.0);
  // Blade behind: the vector from the blade P to the centre of mass, a (cos th, sin th), points
  // along the velocity of the centre of mass.
  const double th_end = r.q_at(2, 0);
  EXPECT_GT(a * (std::cos(th_end) * r.qd_at(0, 0) + std::sin(th_end) * r.qd_at(1, 0)), 0.0);
  EXPECT_NEAR(u_end, std::sqrt(2 * ke0 / m), 1e-8);
}

}  // namespace
}  // namespace ukes
