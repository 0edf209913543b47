// Servo rows of a higher relative degree (kernels/uk/servo_derivatives.hpp, docs/CONTROL.md,
// "Relative degree"), against closed forms of their error dynamics: without mismatch the controller
// makes a row of relative degree r obey p(d/dt) e = 0, p(s) = p_o(s) (s + alpha)^(r - o), a linear
// ODE whose solution follows from e and its first r - 1 derivatives at t0, computed here from the
// model's equations as docs/MODELS.md states them:
//   - the catalogue's flexible joint with torques on its motors alone and its link-velocity row
//     (relative degree 3);
//   - a link driven through a spring by a motor, its position servoed (relative degree 4), beside
//     a directly driven mass whose row keeps its own order (2): both at once, each its closed form.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <nlohmann/json.hpp>
#include <vector>

#include "control/run_support.hpp"
#include "service/engine/engine.hpp"
#include "service/results/results_json.hpp"
#include "service/runspec/run_spec.hpp"

namespace ukes {
namespace {

using control_test::run;
using nlohmann::json;

// The flexible joint (docs/MODELS.md sec. 3, default parameters) at its default initial state:
// every angle 0, th1d = 1, th2d = -0.1, motors at rest. There the link force
// Q_l = -C thd - G - K (th - mang) vanishes (h = 0, sin 0 = 0, no spring stretch), so thdd = 0,
// psi' = [1 1] D^-1 Q_l = 0 and psi'' = [1 1] D^-1 dQ_l/dt with
//   dQ_l/dt = -(dC/dt) thd - dG/dt - K (thd - mangd),  dh/dt = m2 l1 lc2 cos(th2) th2d.
struct FlexibleJointStart {
  double psi = 0.9, psi_rate = 0.0, psi_accel = 0.0;
  FlexibleJointStart() {
    const double m1 = 1, m2 = 1, l1 = 1, lc1 = 0.5, lc2 = 0.5, I1 = 1, I2 = 1, K = 1, g = 9.81;
    const double th1d = 1.0, th2d = -0.1;
    const double hd = m2 * l1 * lc2 * th2d;
    const double dC1 = -hd * th2d * (2 * th1d + th2d), dC2 = hd * th1d * th1d;
    const double dG1 = (m1 * lc1 + m2 * l1) * g * th1d + m2 * lc2 * g * (th1d + th2d);
    const double dG2 = m2 * lc2 * g * (th1d + th2d);
    const double dQ1 = -dC1 - dG1 - K * th1d, dQ2 = -dC2 - dG2 - K * th2d;
    const double d11 = m2 * (l1 * l1 + lc2 * lc2 + 2 * l1 * lc2) + m1 * lc1 * lc1 + I1 + I2;
    const double d12 = m2 * (lc2 * lc2 + l1 * lc2) + I2, d22 = m2 * lc2 * lc2 + I2;
    const double det = d11 * d22 - d12 * d12;
    psi_accel = ((d22 - d12) * dQ1 + (d11 - d12) * dQ2) / det;  // [1 1] D^-1 dQ
  }
  // (d/dt + alpha)^3 psi = 0: psi = e^(-alpha t) (c0 + c1 t + c2 t^2).
  double at(double t, double alpha) const {
    const double c0 = psi, c1 = psi_rate + alpha * psi;
    const double c2 = (psi_accel + 2 * alpha * psi_rate + alpha * alpha * psi) / 2;
    return std::exp(-alpha * t) * (c0 + c1 * t + c2 * t * t);
  }
};

json motor_torques_on_the_link_row(const char* precision) {
  return {{"model", "flexible_joint"},
          {"device", "cpu"},
          {"precision", precision},
          {"control", {{"actuation", {"m1ang", "m2ang"}}, {"relative_degree", 3}}},
          {"integrator", {{"method", "dopri5"}, {"t_end", 6.0}, {"rtol", 1e-12}, {"atol", 1e-12}}},
          {"output", {{"samples", 61}, {"trajectories", "all"}}}};
}

TEST(RelativeDegree, MotorTorquesMakeTheFlexibleJointsLinkRowFollowItsThirdOrderClosedForm) {
  const json spec = motor_torques_on_the_link_row("fp64");
  const RunOutcome out = run(spec);
  const BatchResults& r = out.results;
  ASSERT_EQ(r.status[0], 0);
  const FlexibleJointStart start;
  const double alpha = 2.0;  // the model's Baumgarte gain (docs/MODELS.md)
  const std::vector<double> times = sample_times(parse_run_spec(spec).settings);
  double worst = 0;
  for (int s = 0; s < r.samples; ++s)
    worst = std::max(worst, std::abs(r.traj_residual_at(0, s, 0) - start.at(times[s], alpha)));
  EXPECT_LT(worst, 1e-8);
  EXPECT_LT(std::abs(r.traj_residual_at(0, r.samples - 1, 0)), 1e-3) << "psi has converged";
  EXPECT_GT(r.control_effort_max[0], 1.0) << "the motors do the work";
  for (int s = 0; s < r.samples; ++s) {
    const std::size_t at = static_cast<std::size_t>(s) * 4;
    EXPECT_EQ(r.traj_control[at], 0.0) << "no torque on the links";
    EXPECT_EQ(r.traj_control[at + 1], 0.0);
  }
  // Results say how the rows were followed.
  EXPECT_EQ(results_header_json(parse_run_spec(spec), out)["control"]["relative_degree"],
            json::array({3}));
}

TEST(RelativeDegree, Fp32FollowsTheSameClosedForm) {
  json spec = motor_torques_on_the_link_row("fp32");
  spec["integrator"] = {{"method", "rk4"}, {"t_end", 6.0}, {"dt", 1e-3}};
  const RunOutcome out = run(spec);
  const BatchResults& r = out.results;
  ASSERT_EQ(r.status[0], 0);
  const FlexibleJointStart start;
  const std::vector<double> times = sample_times(parse_run_spec(spec).settings);
  for (int s = 0; s < r.samples; ++s)
    EXPECT_NEAR(r.traj_residual_at(0, s, 0), start.at(times[s], 2.0), 2e-4) << times[s];
}

// The largest |psi| over t in [5, 10] when the plant's motor inertias and spring stiffnesses are
// (1 + e) times the controller's.
double late_error_with_mismatch(double e) {
  json spec = motor_torques_on_the_link_row("fp64");
  spec["params"] = {{"J1", 1 + e}, {"J2", 1 + e}, {"K1", 1 + e}, {"K2", 1 + e}};
  spec["integrator"] = {{"method", "dopri5"}, {"t_end", 10.0}, {"rtol", 1e-10}, {"atol", 1e-10}};
  spec["output"]["samples"] = 201;
  const RunOutcome out = run(spec);
  const BatchResults& r = out.results;
  EXPECT_EQ(r.status[0], 0);
  const std::vector<double> times = sample_times(parse_run_spec(spec).settings);
  double worst = 0;
  for (int s = 0; s < r.samples; ++s)
    if (times[s] >= 5.0 - 1e-9) worst = std::max(worst, std::abs(r.traj_residual_at(0, s, 0)));
  return worst;
}

TEST(RelativeDegree, AMismatchedPlantLeavesAnErrorOfTheMismatchsOrder) {
  // The controller cancels spring torques it believes to be K (th - mang): a plant whose springs
  // and motors differ by a fraction e leaves a torque of order e behind, and the row an error of
  // order e that does not die out (the links keep swinging under gravity). For small e the error
  // is first order in e; without mismatch it is the closed form's (2.1e-3 at t = 5).
  const double exact = late_error_with_mismatch(0.0);
  const double small = late_error_with_mismatch(0.01), twice = late_error_with_mismatch(0.02);
  EXPECT_NEAR(exact, FlexibleJointStart().at(5.0, 2.0), 1e-9);
  EXPECT_GT(small, 10 * exact) << "the mismatch shows";
  EXPECT_NEAR(twice / small, 2.0, 0.2) << "first order in the mismatch";
}

// A link (mass ml) pulled through a spring k by a motor (mass mm, the only actuated coordinate),
// its position servoed to sin t, and a mass mc driven directly, servoed to 0.1 sin t.
json spring_driven_link() {
  return json::parse(R"json({
    "format": "ukes-model/1", "name": "spring_driven_link",
    "coordinates": ["xl", "xm", "xc"],
    "parameters": [{"name": "ml", "value": 1.0}, {"name": "mm", "value": 0.5},
                   {"name": "mc", "value": 2.0}, {"name": "k", "value": 20.0}],
    "mass": {"diagonal": ["ml", "mm", "mc"]},
    "force": ["k * (xm - xl)", "-k * (xm - xl)", "0"],
    "position_constraints": ["xl - sin(t)", "xc - 0.1 * sin(t)"],
    "initial_state": {"q": ["0.2", "0", "0.3"], "qd": ["0", "0", "0"]},
    "t_end": 4.0,
    "baumgarte": {"alpha": 3.0, "beta": 2.0}
  })json");
}

TEST(RelativeDegree, ASpringDrivenLinkFollowsItsFourthOrderClosedFormBesideARowOfItsOwnOrder) {
  const json spec = {{"model", spring_driven_link()},
                     {"device", "cpu"},
                     {"control", {{"actuation", {"xm", "xc"}}, {"relative_degree", {4, 2}}}},
                     {"integrator", {{"method", "dopri5"}, {"rtol", 1e-12}, {"atol", 1e-12}}},
                     {"output", {{"samples", 41}, {"trajectories", "all"}}}};
  const RunOutcome out = run(spec);
  const BatchResults& r = out.results;
  ASSERT_EQ(r.status[0], 0);
  // phi = xl - sin t: phi' = xl' - cos t, phi'' = (k / ml)(xm - xl) + sin t,
  // phi''' = (k / ml)(xm' - xl') + cos t, at t = 0: 0.2, -1, -4, 1. With alpha = 3, beta = 2,
  // p(s) = (s + 1)(s + 2)(s + 3)^2: phi = A e^-t + B e^-2t + (C + D t) e^-3t.
  Eigen::Matrix4d V;
  V << 1, 1, 1, 0,    //
      -1, -2, -3, 1,  //
      1, 4, 9, -6,    //
      -1, -8, -27, 27;
  const Eigen::Vector4d coef = V.partialPivLu().solve(Eigen::Vector4d(0.2, -1.0, -4.0, 1.0));
  // The directly driven row keeps phi'' + 3 phi' + 2 phi = 0 from phi = 0.3, phi' = -0.1.
  const double a2 = 0.5, b2 = -0.2;
  const std::vector<double> times = sample_times(parse_run_spec(spec).settings);
  double worst_link = 0, worst_direct = 0;
  for (int s = 0; s < r.samples; ++s) {
    const double t = times[s];
    const double link = coef[0] * std::exp(-t) + coef[1] * std::exp(-2 * t) +
                        (coef[2] + coef[3] * t) * std::exp(-3 * t);
    const double direct = a2 * std::exp(-t) + b2 * std::exp(-2 * t);
    // Residual slots: phi of both rows, then their phid (batch_layout.hpp).
    worst_link = std::max(worst_link, std::abs(r.traj_residual_at(0, s, 0) - link));
    worst_direct = std::max(worst_direct, std::abs(r.traj_residual_at(0, s, 1) - direct));
  }
  EXPECT_LT(worst_link, 1e-8);
  EXPECT_LT(worst_direct, 1e-8);
}

}  // namespace
}  // namespace ukes
