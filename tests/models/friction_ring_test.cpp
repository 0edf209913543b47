// friction_ring (docs/MODELS.md sec. 11): bead on a vertical ring with Coulomb friction, a
// non-ideal constraint.
#include "kernels/models/friction_ring.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <vector>

#include "kernels/ensemble/ensemble.hpp"
#include "kernels/uk/constraint_form.hpp"
#include "kernels/uk/dynamics.hpp"
#include "kernels/uk/uk_solver.hpp"
#include "support/model_test_support.hpp"

namespace ukes {
namespace {

using Model = models::FrictionRing;
using namespace ukes::testing;
constexpr double kPi = 3.14159265358979323846;

// m, R, g, mu, eps.
using Params = std::array<double, 5>;

// Normal force of the ring by hand: Qc_ideal = A^T (A M^-1 A^T)^-1 (b - A a) with A = [2x, 2y],
// b = -2 |v|^2, a = (0, -g), M = m I, i.e. m (g y - |v|^2) / r^2 (x, y).
std::array<double, 2> normal_force(const Params& p, double x, double y, double xd, double yd) {
  const double r2 = x * x + y * y;
  const double s = p[0] * (p[2] * y - (xd * xd + yd * yd)) / r2;
  return {s * x, s * y};
}

// Regularized Coulomb law: C = -mu |N| v / sqrt(|v|^2 + eps^2).
std::array<double, 2> friction(const Params& p, const std::array<double, 2>& N, double xd,
                               double yd) {
  const double n = std::hypot(N[0], N[1]);
  const double s = -p[3] * n / std::sqrt(xd * xd + yd * yd + p[4] * p[4]);
  return {s * xd, s * yd};
}

// The catalogue metadata (names, defaults, non-ideal flag, t_end, gains) is asserted in
// tests/catalogue.
TEST(FrictionRingModel, DefaultState) {
  const ModelInfo* info = find_model("friction_ring");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->q0, (std::vector<double>{1, 0}));
  EXPECT_EQ(info->qd0, (std::vector<double>{0, 3}));
  // (R, 0) follows the radius.
  const Params p = {1, 1.5, 9.81, 0.2, 1e-3};
  Vec<double, 2> q, qd;
  Model::initial_state(p.data(), q, qd);
  EXPECT_EQ(q[0], 1.5);
  EXPECT_EQ(q[1], 0.0);
}

TEST(FrictionRingModel, ReferenceConstraintForm) {
  UniformRandom u(41);
  for (int trial = 0; trial < 20; ++trial) {
    const Params p = {1 + 0.5 * u(), 1 + 0.5 * u(), 9.81, 0.2, 1e-3};
    const Vec<double, 2> q{{2 * u(), 2 * u()}}, qd{{3 * u(), 3 * u()}};
    const auto f = constraint_form<Model, double>(Model{}, q, qd, 0.0, p.data());
    EXPECT_NEAR(f.A(0, 0), 2 * q[0], 1e-15);
    EXPECT_NEAR(f.A(0, 1), 2 * q[1], 1e-15);
    const double b = -2 * (qd[0] * qd[0] + qd[1] * qd[1]);
    EXPECT_NEAR(f.b[0], b, 1e-13 * (1 + std::abs(b)));
    EXPECT_NEAR(f.value[0], q[0] * q[0] + q[1] * q[1] - p[1] * p[1], 1e-14);
    EXPECT_NEAR(f.rate[0], 2 * (q[0] * qd[0] + q[1] * qd[1]), 1e-14);
  }
}

// Must hold: the total constraint force does work w^T C on any virtual displacement w (A w = 0);
// Qc_ideal and Qc_nonideal are M-orthogonal. Random states, on and off the ring, with velocities
// that need not be tangent.
TEST(FrictionRingModel, VirtualWorkAndMOrthogonality) {
  UniformRandom u(42);
  for (int trial = 0; trial < 50; ++trial) {
    const Params p = {1 + 0.5 * u(), 1 + 0.3 * u(), 9.81, 0.2 + 0.1 * u(), trial % 2 ? 1e-3 : 0.1};
    const double th = kPi * u(), rad = p[1] * (1 + 0.01 * u());
    const Vec<double, 2> q{{rad * std::cos(th), rad * std::sin(th)}};
    const double speed = 3 * u();
    Vec<double, 2> qd{{-speed * std::sin(th), speed * std::cos(th)}};
    if (trial % 3 == 0) {  // not tangent
      qd[0] += 0.5 * u();
      qd[1] += 0.5 * u();
    }
    const double t = 0.0;

    // The two parts through uk_solve.
    Mat<double, 2, 2> M;
    Vec<double, 2> Q;
    Model::mass(q, t, p.data(), M);
    Model::force(q, qd, t, p.data(), Q);
    const auto form = constraint_form<Model, double>(Model{}, q, qd, t, p.data());
    const Vec<double, 1> b{{form.b[0]}};
    const auto s =
        uk_solve(M, Q, form.A, b, ModelNonIdealForce<Model, double>{Model{}, q, qd, t, p.data()});
    ASSERT_TRUE(s.mass_ok);

    // Normal force and friction by hand.
    const auto N = normal_force(p, q[0], q[1], qd[0], qd[1]);
    const double nscale = 1 + std::hypot(N[0], N[1]);
    EXPECT_NEAR(s.Qc_ideal[0], N[0], 1e-12 * nscale);
    EXPECT_NEAR(s.Qc_ideal[1], N[1], 1e-12 * nscale);
    const auto C = friction(p, N, qd[0], qd[1]);
    const double cscale = 1 + std::hypot(C[0], C[1]);

    // Total force from the dynamics evaluation the integrator uses.
    const auto e =
        evaluate_dynamics<Model, double>(Model{}, q, qd, t, p.data(), DynamicsSettings<double>{});
    ASSERT_TRUE(e.mass_ok);
    const Vec<double, 2> w{{-q[1], q[0]}};  // A w = 2 (-x y + y x) = 0
    EXPECT_NEAR(form.A(0, 0) * w[0] + form.A(0, 1) * w[1], 0.0, 1e-15);
    const double work = w[0] * e.Qc[0] + w[1] * e.Qc[1];
    const double work_c = w[0] * C[0] + w[1] * C[1];
    EXPECT_NEAR(work, work_c, 1e-12 * cscale * rad);

    // M-orthogonality: Qc_ideal^T M^-1 Qc_nonideal = 0.
    const double inner =
        (s.Qc_ideal[0] * s.Qc_nonideal[0] + s.Qc_ideal[1] * s.Qc_nonideal[1]) / p[0];
    EXPECT_NEAR(inner, 0.0, 1e-13 * nscale * cscale / p[0]);
    // And the non-ideal part is the tangential projection of C.
    const double tx = w[0] / rad, ty = w[1] / rad;
    const double ct = C[0] * tx + C[1] * ty;
    EXPECT_NEAR(s.Qc_nonideal[0], ct * tx, 1e-12 * cscale);
    EXPECT_NEAR(s.Qc_nonideal[1], ct * ty, 1e-12 * cscale);
  }
}

// Must hold: th = atan2(y, x) follows
//   m R thdd = -m g cos th - mu |m R thd^2 - m g sin th| R thd / sqrt(R^2 thd^2 + eps^2);
// energy never increases; th(10) = -1.585814 (the bead sticks near the bottom at t = 3.53 s).
TEST(FrictionRingModel, AngleFollowsScalarEquationAndEnergyDecreases) {
  const SystemRun run = run_default_system("friction_ring", Method::kDopri5, 1e-10, 2001);
  ASSERT_TRUE(ran_to_end(run));
  const BatchResults& r = run.results;
  ASSERT_EQ(r.t[0], 10.0);

  const double m = 1, R = 1, g = 9.81, mu = 0.2, eps = 1e-3;
  auto f = [&](double, const std::array<double, 2>& y) {
    const double th = y[0], w = y[1];
    const double n = std::abs(m * R * w * w - m * g * std::sin(th));
    return std::array<double, 2>{
        w,
        (-m * g * std::cos(th) - mu * n * R * w / std::sqrt(R * R * w * w + eps * eps)) / (m * R)};
  };
  // Classical RK4 with h = 5e-5 (|d thdd / d thd| <= mu g / eps ~ 2e3: h lambda <= 0.1).
  const auto ref = rk4_reference_samples(f, 0.0, 10.0, std::array<double, 2>{0.0, 3.0 / R},
                                         r.samples, /*steps_per_sample=*/100);
  double th_dev = 0, thd_dev = 0, e_rise = 0;
  auto energy = [&](int k) {
    const double yy = r.traj_q_at(0, k, 1), xd = r.traj_qd_at(0, k, 0), yd = r.traj_qd_at(0, k, 1);
    return 0.5 * m * (xd * xd + yd * yd) + m * g * yy;
  };
  double e_prev = energy(0);
  double stick_time = 0;  // from here on |thd| < 1e-3 (passing a turning point does not count)
  for (int k = 0; k < r.samples; ++k) {
    const std::array<double, 2>& y = ref[std::size_t(k)];
    const double x = r.traj_q_at(0, k, 0), yy = r.traj_q_at(0, k, 1);
    const double xd = r.traj_qd_at(0, k, 0), yd = r.traj_qd_at(0, k, 1);
    const double th = std::atan2(yy, x);
    const double thd = (x * yd - yy * xd) / (x * x + yy * yy);
    // Unwrap: the bead stays within (-pi, pi) here (it goes up to about 1.2 rad and back down).
    th_dev = std::max(th_dev, std::abs(th - y[0]));
    thd_dev = std::max(thd_dev, std::abs(thd - y[1]));
    const double e = energy(k);
    e_rise = std::max(e_rise, e - e_prev);
    e_prev = e;
    const double t = 10.0 * k / (r.samples - 1);
    if (std::abs(thd) >= 1e-3) stick_time = t + 10.0 / (r.samples - 1);
  }
  const double th_end = std::atan2(r.q_at(1, 0), r.q_at(0, 0));
  const std::array<double, 2>& y = ref.back();
  std::printf(
      "friction_ring: steps = %lld, rejected = %lld, max |th - th_ode| = %.3e, max |thd - "
      "thd_ode| = %.3e\n  th(10) = %.9f (ODE %.9f), largest sampled energy rise = %.3e, stick at "
      "t = %.3f, max |phi| = %.3e\n",
      static_cast<long long>(r.steps[0]), static_cast<long long>(r.rejected[0]), th_dev, thd_dev,
      th_end, y[0], e_rise, stick_time, r.residual_at(0, 0));
  EXPECT_LT(th_dev, 1e-7);
  EXPECT_LT(thd_dev, 1e-6);
  // docs/MODELS.md: th(10) = -1.585814 (6 decimals given; the integration error is far below 1e-7).
  EXPECT_NEAR(th_end, -1.585814, 1e-6);
  EXPECT_NEAR(y[0], -1.585814, 1e-6);
  // Energy never increases (beyond the integration tolerance).
  EXPECT_LT(e_rise, 1e-9);
  EXPECT_GE(stick_time, 3.52);
  EXPECT_LE(stick_time, 3.54);
}

}  // namespace
}  // namespace ukes
