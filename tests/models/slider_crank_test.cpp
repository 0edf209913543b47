// slider_crank (docs/MODELS.md sec. 8): crank, connecting rod and slider in coordinates (th, ph,
// x).
#include "kernels/models/slider_crank.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "kernels/ensemble/ensemble.hpp"
#include "kernels/uk/constraint_form.hpp"
#include "support/model_test_support.hpp"

namespace ukes {
namespace {

using Model = models::SliderCrank;
using namespace ukes::testing;
constexpr double kPi = 3.14159265358979323846;

struct P {
  double a = 0.1, l = 0.3, m1 = 1, m2 = 1, m3 = 0.5, g = 9.81, tau = 0, Fx = 0;
};

// The catalogue metadata (names, defaults, t_end, gains) is asserted in tests/catalogue.

// The default IC built here from the geometry (th = pi/6, ph = asin(a sin th / l), x closing the
// loop; thd = 10, phd and xd solving A [thd, phd, xd] = 0 by Cramer's rule on the Jacobian
// columns of ph and x) equals the catalogue's listed numbers, and the model's own IC.
TEST(SliderCrankModel, DefaultInitialConditionFromGeometry) {
  const P p;
  const double th = kPi / 6, thd = 10;
  const double ph = std::asin(p.a * std::sin(th) / p.l);
  const double x = p.a * std::cos(th) + p.l * std::cos(ph);
  // Rows of the Jacobian: d phi1 = [-a s_th, -l s_ph, -1], d phi2 = [a c_th, -l c_ph, 0].
  const double J[2][3] = {{-p.a * std::sin(th), -p.l * std::sin(ph), -1.0},
                          {p.a * std::cos(th), -p.l * std::cos(ph), 0.0}};
  const double r0 = -J[0][0] * thd, r1 = -J[1][0] * thd;
  const double det = J[0][1] * J[1][2] - J[0][2] * J[1][1];
  const double phd = (r0 * J[1][2] - J[0][2] * r1) / det;
  const double xd = (J[0][1] * r1 - r0 * J[1][1]) / det;

  // The listed catalogue numbers (docs/MODELS.md).
  const double q0[] = {0.523598775598299, 0.167448079219689, 0.382406529533425};
  const double qd0[] = {10, 2.9277002188456, -0.64638501094228};
  EXPECT_NEAR(th, q0[0], 1e-14);
  EXPECT_NEAR(ph, q0[1], 1e-14);
  EXPECT_NEAR(x, q0[2], 1e-14);
  EXPECT_NEAR(phd, qd0[1], 1e-12);
  EXPECT_NEAR(xd, qd0[2], 1e-13);

  const ModelInfo* info = find_model("slider_crank");
  ASSERT_NE(info, nullptr);
  ASSERT_EQ(info->q0.size(), 3u);
  for (int j = 0; j < 3; ++j) {
    EXPECT_NEAR(info->q0[j], q0[j], 1e-14) << j;
    EXPECT_NEAR(info->qd0[j], qd0[j], 1e-12) << j;
  }
}

TEST(SliderCrankModel, InitialStateFollowsParameters) {
  const double p[] = {0.15, 0.4, 1, 1, 0.5, 9.81, 0, 0};
  Vec<double, 3> q, qd;
  Model::initial_state(p, q, qd);
  EXPECT_NEAR(q[0], kPi / 6, 1e-15);
  EXPECT_EQ(qd[0], 10.0);
  EXPECT_TRUE(on_constraint_set<Model>(q, qd, 0.0, p, 1e-15, 1e-14));
}

// phi1 = a cos th + l cos ph - x, phi2 = a sin th - l sin ph differentiated twice by hand:
// A = [[-a s_th, -l s_ph, -1], [a c_th, -l c_ph, 0]],
// b = [a c_th thd^2 + l c_ph phd^2, a s_th thd^2 - l s_ph phd^2].
TEST(SliderCrankModel, ConstraintFormMatchesHandDerivation) {
  UniformRandom u(23);
  for (int trial = 0; trial < 20; ++trial) {
    const double a = 0.1 + 0.05 * u(), l = 0.3 + 0.1 * u();
    const double p[] = {a, l, 1, 1, 0.5, 9.81, 0, 0};
    Vec<double, 3> q, qd;
    q[0] = kPi * u(), q[1] = u(), q[2] = 0.4 * u();
    qd[0] = 10 * u(), qd[1] = 5 * u(), qd[2] = u();
    const auto f = constraint_form<Model, double>(Model{}, q, qd, 0.0, p);
    const double st = std::sin(q[0]), ct = std::cos(q[0]), sp = std::sin(q[1]), cp = std::cos(q[1]);
    const double A[2][3] = {{-a * st, -l * sp, -1.0}, {a * ct, -l * cp, 0.0}};
    const double b[2] = {a * ct * qd[0] * qd[0] + l * cp * qd[1] * qd[1],
                         a * st * qd[0] * qd[0] - l * sp * qd[1] * qd[1]};
    for (int r = 0; r < 2; ++r) {
      for (int j = 0; j < 3; ++j) EXPECT_NEAR(f.A(r, j), A[r][j], 1e-15);
      EXPECT_NEAR(f.b[r], b[r], 1e-13 * (1 + std::abs(b[r])));
    }
  }
}

// Kinetic energy from the bodies' velocities (not from the model's M): crank about its pivot,
// rod = centre of mass + spin, slider; potential from the heights of the centres of mass.
double energy(const P& p, double th, double ph, double thd, double phd, double xd) {
  const double vx = -p.a * std::sin(th) * thd - 0.5 * p.l * std::sin(ph) * phd;
  const double vy = p.a * std::cos(th) * thd - 0.5 * p.l * std::cos(ph) * phd;
  const double kin = 0.5 * (p.m1 * p.a * p.a / 3) * thd * thd + 0.5 * p.m2 * (vx * vx + vy * vy) +
                     0.5 * (p.m2 * p.l * p.l / 12) * phd * phd + 0.5 * p.m3 * xd * xd;
  const double pot = p.m1 * p.g * 0.5 * p.a * std::sin(th) +
                     p.m2 * p.g * (p.a * std::sin(th) - 0.5 * p.l * std::sin(ph));
  return kin + pot;
}

// Must hold: total energy (kinetic + gravity) conserved to 1e-8 relative with tau = Fx = 0 at
// rtol = atol = 1e-10.
TEST(SliderCrankModel, EnergyConserved) {
  const SystemRun run = run_default_system("slider_crank", Method::kDopri5, 1e-10, 2001);
  ASSERT_TRUE(ran_to_end(run));
  const BatchResults& r = run.results;
  ASSERT_EQ(r.t[0], 2.0);
  const P p;
  auto e_at = [&](int k) {
    return energy(p, r.traj_q_at(0, k, 0), r.traj_q_at(0, k, 1), r.traj_qd_at(0, k, 0),
                  r.traj_qd_at(0, k, 1), r.traj_qd_at(0, k, 2));
  };
  const double e0 = e_at(0);
  const double rel_drift = max_rel_deviation(r.samples, e_at, e0);  // max |E - E0| / |E0|
  double th_min = 1e300, th_max = -1e300;
  for (int k = 0; k < r.samples; ++k) {
    th_min = std::min(th_min, r.traj_q_at(0, k, 0));
    th_max = std::max(th_max, r.traj_q_at(0, k, 0));
  }
  std::printf(
      "slider_crank: E0 = %.12g, max |E - E0| / |E0| = %.3g, crank angle range [%.3f, %.3f], "
      "max |phi| = %.3g, %.3g\n",
      e0, rel_drift, th_min, th_max, r.residual_at(0, 0), r.residual_at(1, 0));
  EXPECT_LT(rel_drift, 1e-8);
  // The mechanism really runs. On the constraint set sin ph = (a / l) sin th, so the potential is
  // V = (m1 + m2) g a sin(th) / 2, at most 0.981 J < E0: the crank turns full revolutions.
  const double v_max = (p.m1 + p.m2) * p.g * p.a / 2;
  EXPECT_GT(e0, v_max);
  EXPECT_GT(th_max - th_min, 2 * kPi);
}

}  // namespace
}  // namespace ukes
