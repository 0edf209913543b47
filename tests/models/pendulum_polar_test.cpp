// pendulum_polar (docs/MODELS.md sec. 7): planar pendulum in polar coordinates, rod as r = L.
#include "kernels/models/pendulum_polar.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <vector>

#include "kernels/ensemble/ensemble.hpp"
#include "kernels/uk/constraint_form.hpp"
#include "kernels/uk/dynamics.hpp"
#include "support/model_test_support.hpp"

namespace ukes {
namespace {

using Model = models::PendulumPolar;
using namespace ukes::testing;
constexpr double kPi = 3.14159265358979323846;

// The catalogue metadata (names, defaults, t_end, gains) is asserted in tests/catalogue.
TEST(PendulumPolarModel, DefaultInitialCondition) {
  const ModelInfo* info = find_model("pendulum_polar");
  ASSERT_NE(info, nullptr);
  ASSERT_EQ(info->q0.size(), 2u);
  EXPECT_EQ(info->q0[0], 1.0);
  EXPECT_NEAR(info->q0[1], kPi / 3, 1e-15);
  EXPECT_EQ(info->qd0, (std::vector<double>{0, 0}));
  // r = L follows the parameter.
  const double p[] = {1.0, 2.5, 9.81, 0.0};
  Vec<double, 2> q, qd;
  Model::initial_state(p, q, qd);
  EXPECT_EQ(q[0], 2.5);
}

TEST(PendulumPolarModel, ConstraintFormIsTheRodRow) {
  UniformRandom u(2);
  for (int trial = 0; trial < 10; ++trial) {
    const double p[] = {1.0, 1.0 + 0.5 * u(), 9.81, 0.0};
    Vec<double, 2> q, qd;
    q[0] = 1.0 + 0.3 * u(), q[1] = 3.0 * u();
    qd[0] = u(), qd[1] = 4.0 * u();
    const auto f = constraint_form<Model, double>(Model{}, q, qd, 0.0, p);
    // phi = r - L: A = [1, 0], b = 0, phid = rd.
    EXPECT_EQ(f.A(0, 0), 1.0);
    EXPECT_EQ(f.A(0, 1), 0.0);
    EXPECT_EQ(f.b[0], 0.0);
    EXPECT_EQ(f.value[0], q[0] - p[1]);
    EXPECT_EQ(f.rate[0], qd[0]);
  }
}

double tension(double m, double L, double g, double fx, double th, double thd) {
  return m * L * thd * thd + m * g * std::cos(th) + fx * std::sin(th);
}

// Must hold (part): the constraint force is Qc = [-T, 0] with the rod tension
// T = m L thd^2 + m g cos th + fx sin th; here at random states on the constraint set.
TEST(PendulumPolarModel, ConstraintForceIsRodTensionAtRandomStates) {
  UniformRandom u(13);
  for (int trial = 0; trial < 50; ++trial) {
    const double m = 1.0 + 0.5 * u(), L = 1.0 + 0.5 * u(), g = 9.81, fx = 3.0 * u();
    const double p[] = {m, L, g, fx};
    Vec<double, 2> q, qd;
    q[0] = L, q[1] = kPi * u();
    qd[0] = 0.0, qd[1] = 5.0 * u();
    const auto e = evaluate_dynamics<Model, double>(Model{}, q, qd, 0.0, p, {});
    ASSERT_TRUE(e.mass_ok);
    const double T = tension(m, L, g, fx, q[1], qd[1]);
    EXPECT_NEAR(e.Qc[0], -T, 1e-12 * (1 + std::abs(T)));
    EXPECT_NEAR(e.Qc[1], 0.0, 1e-12 * (1 + std::abs(T)));
    // And the angular acceleration is the reduced pendulum's.
    EXPECT_NEAR(e.qdd[1], -(g / L) * std::sin(q[1]) + fx * std::cos(q[1]) / (m * L), 1e-12 * 20);
    EXPECT_NEAR(e.qdd[0], 0.0, 1e-12 * 20);
  }
}

// Must hold: th(t) matches the reduced pendulum thdd = -(g/L) sin th + fx cos th / (m L), and the
// constraint force along the run is [-T, 0]. Two systems: the default (fx = 0) and fx = 2 with
// m = 1.5, L = 0.8 (per-system parameter overrides).
TEST(PendulumPolarModel, FollowsReducedPendulumAndRodTension) {
  const ModelInfo* info = find_model("pendulum_polar");
  ASSERT_NE(info, nullptr);
  Batch batch = Batch::defaults(*info, 2);
  batch.param(0, 1) = 1.5;  // m
  batch.param(1, 1) = 0.8;  // L
  batch.param(3, 1) = 2.0;  // fx
  batch.q(0, 1) = 0.8;      // r = L
  EnsembleSettings s = EnsembleSettings::for_model(*info);
  s.method = Method::kDopri5;
  s.rtol = s.atol = 1e-11;
  s.samples = 1001;
  BatchResults r;
  run_ensemble_cpu(batch, s, r, {0, 1});

  for (int sys = 0; sys < 2; ++sys) {
    ASSERT_EQ(r.status[sys], 0);
    ASSERT_EQ(r.t[sys], 10.0);
    const double m = batch.param(0, sys), L = batch.param(1, sys), g = batch.param(2, sys),
                 fx = batch.param(3, sys);
    // Independent reduced ODE, classical RK4 with h = 1e-4.
    auto f = [&](double, const std::array<double, 2>& y) {
      return std::array<double, 2>{y[1], -(g / L) * std::sin(y[0]) + fx * std::cos(y[0]) / (m * L)};
    };
    const auto ref = rk4_reference_samples(f, s.t0, s.t_end, std::array<double, 2>{kPi / 3, 0.0},
                                           s.samples, /*steps_per_sample=*/100);
    double th_err = 0, force_err = 0, r_err = 0;
    for (int k = 0; k < s.samples; ++k) {
      const double th = ref[std::size_t(k)][0];
      th_err = std::max(th_err, std::abs(r.traj_q_at(sys, k, 1) - th));
      r_err = std::max(r_err, std::abs(r.traj_q_at(sys, k, 0) - L));
      const double T = tension(m, L, g, fx, r.traj_q_at(sys, k, 1), r.traj_qd_at(sys, k, 1));
      force_err = std::max(force_err, std::abs(r.traj_force_at(sys, k, 0) + T) / (1 + std::abs(T)));
      force_err = std::max(force_err, std::abs(r.traj_force_at(sys, k, 1)) / (1 + std::abs(T)));
    }
    std::printf(
        "pendulum_polar[fx = %g]: max |th - th_reduced| = %.3g, max |r - L| = %.3g, "
        "max rel |Qc - [-T, 0]| = %.3g\n",
        fx, th_err, r_err, force_err);
    EXPECT_LT(th_err, 1e-8);
    EXPECT_LT(r_err, 1e-9);
    EXPECT_LT(force_err, 1e-8);
  }
}

}  // namespace
}  // namespace ukes
