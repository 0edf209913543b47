// projectile_polar (docs/MODELS.md sec. 12): unconstrained particle in polar coordinates.
#include "kernels/models/projectile_polar.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "kernels/ensemble/ensemble.hpp"
#include "kernels/uk/dynamics.hpp"
#include "support/model_test_support.hpp"

namespace ukes {
namespace {

using Model = models::ProjectilePolar;
constexpr double kPi = 3.14159265358979323846;
constexpr double kG = 9.81;

// The catalogue metadata (no rows, names, defaults, t_end, gains) is asserted in tests/catalogue.
TEST(ProjectilePolarModel, DefaultState) {
  const ModelInfo* info = find_model("projectile_polar");
  ASSERT_NE(info, nullptr);
  ASSERT_EQ(info->q0.size(), 2u);
  EXPECT_EQ(info->q0[0], 1.0);
  EXPECT_NEAR(info->q0[1], kPi / 4, 1e-16);
  EXPECT_EQ(info->qd0, (std::vector<double>{1, 0}));
}

// With no rows the UK equation is M qdd = Q: the polar form of (0, -g) in Cartesian coordinates.
TEST(ProjectilePolarModel, AccelerationIsGravityInPolarForm) {
  const double p[1] = {kG};
  const Vec<double, 2> q{{1.7, 0.4}}, qd{{-0.3, 1.1}};
  const auto e =
      evaluate_dynamics<Model, double>(Model{}, q, qd, 0.0, p, DynamicsSettings<double>{});
  ASSERT_TRUE(e.mass_ok);
  EXPECT_EQ(e.Qc[0], 0.0);
  EXPECT_EQ(e.Qc[1], 0.0);
  // Cartesian acceleration from (r, th): xdd = (rdd - r thd^2) cos th - (r thdd + 2 rd thd) sin th.
  const double r = q[0], th = q[1], rd = qd[0], thd = qd[1];
  const double ar = e.qdd[0] - r * thd * thd, at = r * e.qdd[1] + 2 * rd * thd;
  EXPECT_NEAR(ar * std::cos(th) - at * std::sin(th), 0.0, 1e-14);
  EXPECT_NEAR(ar * std::sin(th) + at * std::cos(th), -kG, 1e-14);
}

// Must hold: (r cos th, r sin th) follows the projectile parabola; zero rows are accepted.
TEST(ProjectilePolarModel, FollowsParabola) {
  const ModelInfo* info = find_model("projectile_polar");
  ASSERT_NE(info, nullptr);
  Batch batch = Batch::defaults(*info, 2);
  // A second system with angular velocity: r = 2, th = 0.3, rd = -0.5, thd = 0.8.
  batch.q(0, 1) = 2.0;
  batch.q(1, 1) = 0.3;
  batch.qd(0, 1) = -0.5;
  batch.qd(1, 1) = 0.8;
  for (Method method : {Method::kDopri5, Method::kRk4}) {
    EnsembleSettings s = EnsembleSettings::for_model(*info);
    s.method = method;
    s.rtol = s.atol = 1e-12;
    s.dt = 1e-4;  // RK4 step (DOPRI5: first trial step)
    s.samples = 501;
    BatchResults r;
    run_ensemble_cpu(batch, s, r, {0, 1});
    double worst = 0;
    for (int i = 0; i < 2; ++i) {
      ASSERT_EQ(r.status[i], 0);
      EXPECT_EQ(r.t[i], 0.5);
      EXPECT_EQ(r.force_max[i], 0.0);
      const double r0 = batch.q(0, i), th0 = batch.q(1, i);
      const double rd0 = batch.qd(0, i), thd0 = batch.qd(1, i);
      const double x0 = r0 * std::cos(th0), y0 = r0 * std::sin(th0);
      const double vx = rd0 * std::cos(th0) - r0 * thd0 * std::sin(th0);
      const double vy = rd0 * std::sin(th0) + r0 * thd0 * std::cos(th0);
      for (int k = 0; k < s.samples; ++k) {
        const double t = 0.5 * k / (s.samples - 1);
        const double rr = r.traj_q_at(i, k, 0), th = r.traj_q_at(i, k, 1);
        worst = std::max(worst, std::abs(rr * std::cos(th) - (x0 + vx * t)));
        worst = std::max(worst, std::abs(rr * std::sin(th) - (y0 + vy * t - 0.5 * kG * t * t)));
        EXPECT_EQ(r.traj_force_at(i, k, 0), 0.0);
        EXPECT_EQ(r.traj_force_at(i, k, 1), 0.0);
      }
    }
    std::printf("projectile_polar (%s): max distance from the parabola = %.3e\n",
                method == Method::kRk4 ? "rk4" : "dopri5", worst);
    EXPECT_LT(worst, 1e-10);
  }
}

}  // namespace
}  // namespace ukes
