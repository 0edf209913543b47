// swarm (docs/MODELS.md sec. 2): five mobile robots with an interaction (servo) constraint.
#include "kernels/models/swarm.hpp"

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

using Model = models::Swarm;
using namespace ukes::testing;
constexpr int kRobots = 5;
constexpr int kN = 2 * kRobots;
using State = std::array<double, kN>;

// sum_{j != i} grad_{q_i} G_ij = sum_j (q_i - q_j) (1 - a / |q_i - q_j|), written independently
// of the model (plain doubles, robot-major loops).
State grad_sum(const State& q, double a) {
  State g{};
  for (int i = 0; i < kRobots; ++i)
    for (int j = 0; j < kRobots; ++j) {
      if (i == j) continue;
      const double dx = q[2 * i] - q[2 * j], dy = q[2 * i + 1] - q[2 * j + 1];
      const double w = 1.0 - a / std::hypot(dx, dy);
      g[2 * i] += dx * w;
      g[2 * i + 1] += dy * w;
    }
  return g;
}

// Seed eq. 62: b_i = -(d/dt) sum_j grad G_ij, with
// d/dt [d (1 - a/|d|)] = dd (1 - a/|d|) + a d (d . dd) / |d|^3,  d = q_i - q_j, dd = qd_i - qd_j.
State reference_b(const State& q, const State& qd, double a) {
  State b{};
  for (int i = 0; i < kRobots; ++i)
    for (int j = 0; j < kRobots; ++j) {
      if (i == j) continue;
      const double dx = q[2 * i] - q[2 * j], dy = q[2 * i + 1] - q[2 * j + 1];
      const double vx = qd[2 * i] - qd[2 * j], vy = qd[2 * i + 1] - qd[2 * j + 1];
      const double rr = std::hypot(dx, dy), dv = dx * vx + dy * vy;
      b[2 * i] -= vx * (1.0 - a / rr) + a * dx * dv / (rr * rr * rr);
      b[2 * i + 1] -= vy * (1.0 - a / rr) + a * dy * dv / (rr * rr * rr);
    }
  return b;
}

const State kPositions = {0, 0, 4, 1, -3, 2, 2, -4, -1, -3};

// The catalogue metadata (names, defaults, structural N, t_end, gains) is asserted in
// tests/catalogue.
TEST(SwarmModel, DefaultInitialCondition) {
  const ModelInfo* info = find_model("swarm");
  ASSERT_NE(info, nullptr);
  ASSERT_EQ(info->q0.size(), 10u);
  for (int j = 0; j < kN; ++j) {
    EXPECT_EQ(info->q0[j], kPositions[j]) << j;
    EXPECT_EQ(info->qd0[j], 0.0) << j;
  }
  // Off the velocity rows on purpose: |psi(0)| = 34.04.
  const double p[] = {5.0, 2.0, 0.5};
  Vec<double, kN> q, qd;
  for (int j = 0; j < kN; ++j) {
    q[j] = info->q0[j];
    qd[j] = info->qd0[j];
  }
  const auto f = constraint_form<Model, double>(Model{}, q, qd, 0.0, p);
  double norm = 0;
  for (int r = 0; r < kN; ++r) norm += f.value[r] * f.value[r];
  norm = std::sqrt(norm);
  std::printf("swarm: |psi(0)| = %.10g\n", norm);
  EXPECT_NEAR(norm, 34.04, 0.005);
}

TEST(SwarmModel, ConstraintFormMatchesReference) {
  UniformRandom u(7);
  for (int trial = 0; trial < 20; ++trial) {
    const double a = 0.5 + 0.4 * u();
    const double p[] = {5.0, 2.0, a};
    State qs, qds;
    Vec<double, kN> q, qd;
    for (int j = 0; j < kN; ++j) {
      qs[j] = kPositions[j] + 0.8 * u();  // robots stay well apart
      qds[j] = 3.0 * u();
      q[j] = qs[j];
      qd[j] = qds[j];
    }
    const auto f = constraint_form<Model, double>(Model{}, q, qd, 0.3, p);
    const State g = grad_sum(qs, a), b = reference_b(qs, qds, a);
    for (int r = 0; r < kN; ++r) {
      for (int j = 0; j < kN; ++j) EXPECT_EQ(f.A(r, j), r == j ? 1.0 : 0.0) << r << "," << j;
      EXPECT_NEAR(f.b[r], b[r], 1e-12 * (1 + std::abs(b[r])));
      EXPECT_NEAR(f.value[r], qds[r] + g[r], 1e-12 * (1 + std::abs(g[r])));
    }
  }
}

// Must hold: |psi(t)| = |psi(0)| e^{-5t}; each |psi_i| < 0.01 from t = 1.5 s; the robots never
// collide (minimum pair distance over [0, 20] about 0.294 > 0.25).
// psi_i are the ten scalar velocity rows (x1, y1, ..., y5). Per robot, the 2-vector norm
// |(psi_x, psi_y)| of robot 3 is 20.17 e^{-5t} = 0.0112 at t = 1.5 s and falls below 0.01 only at
// t = 1.522 s; the rows themselves are at most 16.44 e^{-5t} = 0.0091 there.
TEST(SwarmModel, ServoConstraintDecaysAndRobotsKeepApart) {
  // 4001 samples: every 5 ms.
  const SystemRun run = run_default_system("swarm", Method::kDopri5, 1e-10, 4001);
  ASSERT_TRUE(ran_to_end(run));
  const BatchResults& r = run.results;
  ASSERT_EQ(r.t[0], 20.0);
  const std::vector<double>& times = run.times;

  const double a = 0.5;
  const State g0 = grad_sum(kPositions, a);  // psi(0), since qd(0) = 0
  double norm0 = 0;
  for (double v : g0) norm0 += v * v;
  norm0 = std::sqrt(norm0);

  double decay_err = 0, abs_err = 0, late_max = 0, dmin = 1e300, t_dmin = 0;
  for (int k = 0; k < r.samples; ++k) {
    const double t = times[k];
    const double expect = norm0 * std::exp(-5.0 * t);
    double norm = 0, comp_err = 0;
    for (int row = 0; row < kN; ++row) {
      const double psi = r.traj_residual_at(0, k, row);
      norm += psi * psi;
      comp_err = std::max(comp_err, std::abs(psi - g0[row] * std::exp(-5.0 * t)));
      if (t >= 1.5) late_max = std::max(late_max, std::abs(psi));
    }
    norm = std::sqrt(norm);
    // Relative to the decaying value while it is large; once it is below the integration
    // tolerance the absolute error (about atol) is what is left.
    decay_err = std::max(decay_err, std::abs(norm - expect) / std::max(expect, 1e-3));
    abs_err = std::max(abs_err, std::abs(norm - expect));
    ASSERT_LT(comp_err, 1e-6 * expect + 1e-9) << "t = " << t;
    // The psi the engine reports is the psi of the sampled state, recomputed here.
    State q, qd;
    for (int j = 0; j < kN; ++j) {
      q[j] = r.traj_q_at(0, k, j);
      qd[j] = r.traj_qd_at(0, k, j);
    }
    const State g = grad_sum(q, a);
    for (int row = 0; row < kN; ++row)
      ASSERT_NEAR(r.traj_residual_at(0, k, row), qd[row] + g[row], 1e-12 * (1 + std::abs(g[row])));
    for (int i = 0; i < kRobots; ++i)
      for (int j = i + 1; j < kRobots; ++j) {
        const double d = std::hypot(q[2 * i] - q[2 * j], q[2 * i + 1] - q[2 * j + 1]);
        if (d < dmin) {
          dmin = d;
          t_dmin = t;
        }
      }
  }
  std::printf(
      "swarm: |psi(t)| vs %.6g e^{-5t}: max rel error (scale max(value, 1e-3)) %.3g, max abs "
      "error %.3g; max |psi_i| for t >= 1.5 = %.5g; min pair distance %.6f at t = %.3f\n",
      norm0, decay_err, abs_err, late_max, dmin, t_dmin);
  EXPECT_LT(decay_err, 1e-6);
  EXPECT_LT(abs_err, 1e-8);
  EXPECT_LT(late_max, 0.01);
  EXPECT_GT(dmin, 0.25);
  EXPECT_NEAR(dmin, 0.294, 0.01);
}

// The positions themselves against an independent reduced formulation: with A = I the velocity
// rows decay exactly, psi(t) = psi(0) e^{-5t}, so qd = -sum grad G + psi(0) e^{-5t}, a first-order
// ODE in q alone, integrated here by classical RK4 with a small fixed step.
TEST(SwarmModel, TrajectoryMatchesReducedFirstOrderSystem) {
  const SystemRun run = run_default_system("swarm", Method::kDopri5, 1e-11, 11,
                                           [](EnsembleSettings& s) { s.t_end = 5.0; });
  ASSERT_TRUE(ran_to_end(run));
  const BatchResults& r = run.results;

  const double a = 0.5;
  const State psi0 = grad_sum(kPositions, a);
  auto rhs = [&](double t, const State& q) {
    State d = grad_sum(q, a);
    for (int j = 0; j < kN; ++j) d[j] = -d[j] + psi0[j] * std::exp(-5.0 * t);
    return d;
  };
  // h = 0.5 / 1000 between the samples every 0.5 s.
  const auto ref =
      rk4_reference_samples(rhs, 0.0, 5.0, kPositions, r.samples, /*steps_per_sample=*/1000);
  double err = 0;
  for (int k = 1; k < r.samples; ++k) {
    const State& q = ref[std::size_t(k)];
    for (int j = 0; j < kN; ++j) err = std::max(err, std::abs(r.traj_q_at(0, k, j) - q[j]));
  }
  std::printf("swarm: max |q_UK - q_reduced| over [0, 5] = %.3g\n", err);
  EXPECT_LT(err, 1e-7);
}

}  // namespace
}  // namespace ukes
