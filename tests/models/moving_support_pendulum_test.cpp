// moving_support_pendulum (docs/MODELS.md sec. 14): pendulum whose support oscillates horizontally.
#include "kernels/models/moving_support_pendulum.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

#include "kernels/ensemble/ensemble.hpp"
#include "kernels/uk/constraint_form.hpp"
#include "support/model_test_support.hpp"

namespace ukes {
namespace {

using Model = models::MovingSupportPendulum;
using namespace ukes::testing;
constexpr double kPi = 3.14159265358979323846;

// m, L, g, Xs, Ws.
using Params = std::array<double, 5>;

// The catalogue metadata (names, defaults, t_end, gains) is asserted in tests/catalogue.
TEST(MovingSupportPendulumModel, DefaultState) {
  const ModelInfo* info = find_model("moving_support_pendulum");
  ASSERT_NE(info, nullptr);
  // x = L sin(0.3), y = -L cos(0.3), velocity (Xs Ws, 0).
  ASSERT_EQ(info->q0.size(), 2u);
  EXPECT_NEAR(info->q0[0], std::sin(0.3), 1e-16);
  EXPECT_NEAR(info->q0[1], -std::cos(0.3), 1e-16);
  EXPECT_NEAR(info->qd0[0], 0.5, 1e-16);
  EXPECT_EQ(info->qd0[1], 0.0);
}

TEST(MovingSupportPendulumModel, InitialStateFollowsParametersAndIsConsistent) {
  const Params p = {2, 1.3, 9.81, 0.2, 3};
  Vec<double, 2> q, qd;
  Model::initial_state(p.data(), q, qd);
  EXPECT_NEAR(q[0], 1.3 * std::sin(0.3), 1e-15);
  EXPECT_NEAR(q[1], -1.3 * std::cos(0.3), 1e-15);
  EXPECT_NEAR(qd[0], 0.6, 1e-15);
  EXPECT_EQ(qd[1], 0.0);
  EXPECT_TRUE(on_constraint_set<Model>(q, qd, 0.0, p.data(), 1e-15, 1e-15));
}

// Second-order form by hand: A = [2 (x - xs), 2 y],
// b = -2 (xd - xsd)^2 - 2 yd^2 + 2 (x - xs) xsdd with xs = Xs sin(Ws t).
TEST(MovingSupportPendulumModel, ReferenceConstraintForm) {
  UniformRandom u(61);
  for (int trial = 0; trial < 20; ++trial) {
    const Params p = {1, 1 + 0.3 * u(), 9.81, 0.1 + 0.05 * u(), 5 + 2 * u()};
    const Vec<double, 2> q{{u(), u()}}, qd{{3 * u(), 3 * u()}};
    const double t = 5 + 5 * u();
    const double xs = p[3] * std::sin(p[4] * t), xsd = p[3] * p[4] * std::cos(p[4] * t);
    const double xsdd = -p[3] * p[4] * p[4] * std::sin(p[4] * t);
    const auto f = constraint_form<Model, double>(Model{}, q, qd, t, p.data());
    EXPECT_NEAR(f.A(0, 0), 2 * (q[0] - xs), 1e-14);
    EXPECT_NEAR(f.A(0, 1), 2 * q[1], 1e-15);
    const double b =
        -2 * (qd[0] - xsd) * (qd[0] - xsd) - 2 * qd[1] * qd[1] + 2 * (q[0] - xs) * xsdd;
    EXPECT_NEAR(f.b[0], b, 1e-12 * (1 + std::abs(b)));
    EXPECT_NEAR(f.value[0], (q[0] - xs) * (q[0] - xs) + q[1] * q[1] - p[1] * p[1], 1e-14);
    EXPECT_NEAR(f.rate[0], 2 * (q[0] - xs) * (qd[0] - xsd) + 2 * q[1] * qd[1], 1e-13);
  }
}

// Must hold: the angle from the support, th = atan2(x - xs, -y), follows
//   thdd = -(g/L) sin th + (Xs Ws^2 sin(Ws t) / L) cos th   (integrated here by RK4).
TEST(MovingSupportPendulumModel, AngleMatchesReducedEquation) {
  const SystemRun run = run_default_system("moving_support_pendulum", Method::kDopri5, 1e-12, 2001);
  ASSERT_TRUE(ran_to_end(run));
  const BatchResults& r = run.results;
  ASSERT_EQ(r.t[0], 10.0);

  const double L = 1, g = 9.81, Xs = 0.1, Ws = 5;
  auto f = [&](double t, const std::array<double, 2>& y) {
    return std::array<double, 2>{
        y[1], -(g / L) * std::sin(y[0]) + Xs * Ws * Ws * std::sin(Ws * t) / L * std::cos(y[0])};
  };
  const auto ref = rk4_reference_samples(f, 0.0, 10.0, std::array<double, 2>{0.3, 0.0}, r.samples,
                                         /*steps_per_sample=*/20);
  double dev = 0, rate_dev = 0, th_max = 0;
  for (int k = 0; k < r.samples; ++k) {
    const std::array<double, 2>& y = ref[std::size_t(k)];
    const double t = 10.0 * k / (r.samples - 1);
    const double xs = Xs * std::sin(Ws * t), xsd = Xs * Ws * std::cos(Ws * t);
    const double dx = r.traj_q_at(0, k, 0) - xs, yy = r.traj_q_at(0, k, 1);
    const double dxd = r.traj_qd_at(0, k, 0) - xsd, yyd = r.traj_qd_at(0, k, 1);
    const double th = std::atan2(dx, -yy);
    const double thd = (-yy * dxd + dx * yyd) / (dx * dx + yy * yy);  // d/dt atan2(dx, -y)
    dev = std::max(dev, std::abs(std::remainder(th - y[0], 2 * kPi)));
    rate_dev = std::max(rate_dev, std::abs(thd - y[1]));
    th_max = std::max(th_max, std::abs(y[0]));
  }
  std::printf(
      "moving_support_pendulum: max |th - th_reduced| = %.3e, max |thd - thd_reduced| = %.3e, "
      "max |th| = %.3f, max |phi| = %.3e\n",
      dev, rate_dev, th_max, r.residual_at(0, 0));
  EXPECT_LT(dev, 1e-8);
  EXPECT_LT(rate_dev, 1e-7);
}

}  // namespace
}  // namespace ukes
