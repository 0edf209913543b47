// duffing (docs/MODELS.md sec. 4): coupled Duffing oscillators with a rheonomic constraint.
#include "kernels/models/duffing.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

#include "kernels/ensemble/ensemble.hpp"
#include "kernels/uk/constraint_form.hpp"
#include "kernels/uk/dynamics.hpp"
#include "support/model_test_support.hpp"

namespace ukes {
namespace {

using Model = models::Duffing;
using namespace ukes::testing;
constexpr double kPi = 3.14159265358979323846;

// docs/MODELS.md defaults: m1, m2, k1, k2, k1nl, k2nl, c1, c2, A0, omega, alpha.
struct P {
  double m1 = 2, m2 = 1, k1 = 10, k2 = 12, k1nl = 1, k2nl = 2, c1 = 0.1, c2 = 0.15, A0 = 1,
         omega = 2 * kPi, alpha = 1;
  std::array<double, 11> array() const {
    return {m1, m2, k1, k2, k1nl, k2nl, c1, c2, A0, omega, alpha};
  }
};

// Q = -(K x + Cd xd + gnl) as docs/MODELS.md writes it (matrices, not the model's expanded form).
std::array<double, 2> applied(const P& p, double x1, double x2, double x1d, double x2d) {
  const double K[2][2] = {{p.k1, -p.k1}, {-p.k1, p.k1 + p.k2}};
  const double Cd[2][2] = {{p.c1, -p.c1}, {-p.c1, p.c1 + p.c2}};
  const double d3 = std::pow(x1 - x2, 3);
  const double gnl[2] = {p.k1nl * d3, p.k2nl * x2 * x2 * x2 - p.k1nl * d3};
  const double x[2] = {x1, x2}, xd[2] = {x1d, x2d};
  std::array<double, 2> Q{};
  for (int i = 0; i < 2; ++i)
    Q[i] = -(K[i][0] * x[0] + K[i][1] * x[1] + Cd[i][0] * xd[0] + Cd[i][1] * xd[1] + gnl[i]);
  return Q;
}

// The reference b of docs/MODELS.md (the second derivative of the prescribed separation, negated).
double reference_b(const P& p, double t) {
  const double w = p.omega, al = p.alpha;
  return -p.A0 * std::exp(-al * t) *
         (w * w * std::sin(w * t) + 2 * w * al * std::cos(w * t) - al * al * std::sin(w * t));
}

// The catalogue metadata (names, defaults, t_end, gains) is asserted in tests/catalogue.
TEST(DuffingModel, DefaultInitialCondition) {
  const ModelInfo* info = find_model("duffing");
  ASSERT_NE(info, nullptr);
  // Default IC: x1 = x2 = 1, x2d = 2, x1d = A0 omega + 2.
  ASSERT_EQ(info->q0.size(), 2u);
  EXPECT_EQ(info->q0[0], 1.0);
  EXPECT_EQ(info->q0[1], 1.0);
  EXPECT_NEAR(info->qd0[0], 2 * kPi + 2, 1e-14);
  EXPECT_EQ(info->qd0[1], 2.0);
}

TEST(DuffingModel, InitialStateFollowsParameters) {
  P p;
  p.A0 = 0.7;
  p.omega = 3.0;
  const auto pa = p.array();
  Vec<double, 2> q, qd;
  Model::initial_state(pa.data(), q, qd);
  EXPECT_EQ(q[0], 1.0);
  EXPECT_EQ(q[1], 1.0);
  EXPECT_NEAR(qd[0], 0.7 * 3.0 + 2, 1e-15);
  EXPECT_EQ(qd[1], 2.0);
  // Consistent with the constraint: phi(0) = 0 and phid(0) = x1d - x2d - A0 omega = 0.
  EXPECT_TRUE(on_constraint_set<Model>(q, qd, 0.0, pa.data(), 1e-15, 1e-14));
}

TEST(DuffingModel, ReferenceConstraintForm) {
  UniformRandom u(11, -2.0, 2.0);
  for (int trial = 0; trial < 20; ++trial) {
    P p;
    p.A0 = 1 + 0.5 * u();
    p.omega = 2 * kPi + u();
    p.alpha = 1 + 0.4 * u();
    const auto pa = p.array();
    const Vec<double, 2> q{{u(), u()}}, qd{{3 * u(), 3 * u()}};
    const double t = 2.5 + 1.25 * u();
    const auto f = constraint_form<Model, double>(Model{}, q, qd, t, pa.data());
    EXPECT_EQ(f.A(0, 0), 1.0);
    EXPECT_EQ(f.A(0, 1), -1.0);
    const double b = reference_b(p, t);
    EXPECT_NEAR(f.b[0], b, 1e-12 * (1 + std::abs(b)));
    const double s = p.A0 * std::exp(-p.alpha * t) * std::sin(p.omega * t);
    EXPECT_NEAR(f.value[0], q[0] - q[1] - s, 1e-14);
    const double sd = p.A0 * std::exp(-p.alpha * t) *
                      (p.omega * std::cos(p.omega * t) - p.alpha * std::sin(p.omega * t));
    EXPECT_NEAR(f.rate[0], qd[0] - qd[1] - sd, 1e-13);
  }
}

// Thesis eq. 68: Fc = m1 m2 / (m1 + m2) [1, -1] (b - a1 + a2), a = M^-1 Q.
TEST(DuffingModel, ConstraintForceMatchesThesisEq68) {
  UniformRandom u(12, -2.0, 2.0);
  for (int trial = 0; trial < 20; ++trial) {
    P p;
    p.m1 = 2 + 0.9 * u();
    p.m2 = 1 + 0.4 * u();
    const auto pa = p.array();
    const Vec<double, 2> q{{u(), u()}}, qd{{3 * u(), 3 * u()}};
    const double t = 2.5 + 1.25 * u();
    const auto Q = applied(p, q[0], q[1], qd[0], qd[1]);
    const double a1 = Q[0] / p.m1, a2 = Q[1] / p.m2;
    const double lam = p.m1 * p.m2 / (p.m1 + p.m2) * (reference_b(p, t) - a1 + a2);
    const auto e =
        evaluate_dynamics<Model, double>(Model{}, q, qd, t, pa.data(), DynamicsSettings<double>{});
    ASSERT_TRUE(e.mass_ok);
    const double scale = 1 + std::abs(lam);
    EXPECT_NEAR(e.Qc[0], lam, 1e-12 * scale);
    EXPECT_NEAR(e.Qc[1], -lam, 1e-12 * scale);
    // And the acceleration is M^-1 (Q + Qc).
    EXPECT_NEAR(e.qdd[0], (Q[0] + lam) / p.m1, 1e-12 * scale);
    EXPECT_NEAR(e.qdd[1], (Q[1] - lam) / p.m2, 1e-12 * scale);
  }
}

// Must hold: |phi| < 1e-9 over [0, 5] at rtol = atol = 1e-12. Also compared with the reduced
// one-coordinate equation x1 = x2 + s(t): (m1 + m2) x2dd = Q1 + Q2 - m1 sdd, integrated here by
// RK4.
TEST(DuffingModel, ConstraintHeldAndReducedSolutionMatched) {
  const SystemRun run = run_default_system("duffing", Method::kDopri5, 1e-12, 2001);
  ASSERT_TRUE(ran_to_end(run));
  const BatchResults& r = run.results;
  EXPECT_EQ(r.t[0], 5.0);
  EXPECT_LT(r.residual_at(0, 0), 1e-9);
  const double sampled_max = max_abs_sampled_residual(r, 0);
  EXPECT_LT(sampled_max, 1e-9);
  std::printf("duffing: max|phi| = %.3e (steps), %.3e (samples), max|phid| = %.3e\n",
              r.residual_at(0, 0), sampled_max, r.residual_at(1, 0));

  // Reduced coordinate y = (x2, x2d).
  const P p;
  auto sep = [&](double t, double& sv, double& sd, double& sdd) {
    const double e = p.A0 * std::exp(-p.alpha * t), w = p.omega, al = p.alpha;
    sv = e * std::sin(w * t);
    sd = e * (w * std::cos(w * t) - al * std::sin(w * t));
    sdd = reference_b(p, t);
  };
  auto rhs = [&](double t, const std::array<double, 2>& y) {
    double sv, sd, sdd;
    sep(t, sv, sd, sdd);
    const auto Q = applied(p, y[0] + sv, y[0], y[1] + sd, y[1]);
    return std::array<double, 2>{y[1], (Q[0] + Q[1] - p.m1 * sdd) / (p.m1 + p.m2)};
  };
  const auto ref = rk4_reference_samples(rhs, 0.0, 5.0, std::array<double, 2>{1.0, 2.0}, r.samples,
                                         /*steps_per_sample=*/20);
  double max_err = 0;
  for (int k = 0; k < r.samples; ++k) {
    const std::array<double, 2>& y = ref[std::size_t(k)];
    const double t = 5.0 * k / (r.samples - 1);
    double sv, sd, sdd;
    sep(t, sv, sd, sdd);
    max_err = std::max(max_err, std::abs(r.traj_q_at(0, k, 1) - y[0]));
    max_err = std::max(max_err, std::abs(r.traj_q_at(0, k, 0) - (y[0] + sv)));
    max_err = std::max(max_err, std::abs(r.traj_qd_at(0, k, 1) - y[1]));
  }
  std::printf("duffing: max deviation from the reduced solution = %.3e\n", max_err);
  EXPECT_LT(max_err, 1e-8);
}

}  // namespace
}  // namespace ukes
