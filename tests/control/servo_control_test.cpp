// Constraint-following control under uncertainty (kernels/uk/servo_control.hpp,
// docs/CONTROL.md), against formulations of its own:
//   - without mismatch every catalogue model moves as the UK equation moves it;
//   - physical rows beside servo rows, without mismatch, give the UK motion of all rows;
//   - a 1-DOF mass with a wrong mass estimate: the tracking error obeys a linear ODE whose
//     solution is known in closed form;
//   - the robust term keeps the sliding variable inside the ultimate bound of its scalar ODE,
//     a bound that shrinks as the gain grows;
//   - a two-link arm with a payload mismatch (links physical, joint angles servoed) against a
//     reduced-coordinate computed-torque formulation;
//   - scara with a wrong payload settles at its vertical axis's static error;
//   - listed actuation with A M^-1 B of full row rank tracks exactly;
//   - an actuation matrix of expressions: the two-link arm driven by joint torques B(q) against
//     the reduced computed-torque formulation, a mismatched actuator gain against its error's
//     closed form, and columns of I against the listed coordinates;
//   - a spec's control section is checked field by field, its relative degrees row by row
//     (tests/control/relative_degree_test.cpp follows such rows).
#include "kernels/uk/servo_control.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <nlohmann/json.hpp>
#include <string>

#include "control/run_support.hpp"
#include "kernels/models/scara.hpp"
#include "kernels/models/user/user_model.hpp"
#include "service/engine/engine.hpp"
#include "service/results/results_json.hpp"
#include "service/runspec/run_spec.hpp"

namespace ukes {
namespace {

using control_test::run;
using nlohmann::json;

// |a - b| <= tol (1 + |b|).
bool near(double a, double b, double tol) { return std::abs(a - b) <= tol * (1.0 + std::abs(b)); }

TEST(Control, WithoutMismatchEveryCatalogueModelMovesAsTheUkEquation) {
  int models = 0;
  for (const ModelInfo& m : catalogue_info()) {
    if (m.rows() == 0) continue;
    ++models;
    json spec = {{"model", m.name},
                 {"device", "cpu"},
                 {"assemble", true},
                 {"integrator", {{"method", "rk4"}, {"t_end", 0.3}, {"dt", 1e-3}}},
                 {"output", {{"samples", 2}}}};
    const RunOutcome exact = run(spec);
    spec["control"] = json::object();  // every row a servo row, the controller's model exact
    const RunOutcome controlled = run(spec);
    const BatchResults& a = exact.results;
    const BatchResults& b = controlled.results;
    ASSERT_EQ(b.status[0], a.status[0]) << m.name;
    // The friction ring's law acts along the velocity, whose normal part is the constraint drift
    // (about 1e-11 here): the UK equation projects that part away, a controlled plant feels it
    // (docs/CONTROL.md, "The plant").
    const double tol = m.name == "friction_ring" ? 1e-9 : 1e-12;
    for (int j = 0; j < m.n; ++j) {
      EXPECT_PRED3(near, b.q_at(j, 0), a.q_at(j, 0), tol) << m.name << " q" << j;
      EXPECT_PRED3(near, b.qd_at(j, 0), a.qd_at(j, 0), tol) << m.name << " qd" << j;
    }
    // The control force is the UK force: as large as the uncontrolled run's constraint force
    // (the friction ring's non-ideal part stays a constraint force of the plant).
    EXPECT_GT(b.control_effort_max[0], 0.0) << m.name;
    if (m.name != "friction_ring") {
      EXPECT_PRED3(near, b.control_effort_max[0], a.force_max[0], 1e-9) << m.name;
      EXPECT_EQ(b.force_max[0], 0.0) << m.name << ": no physical rows, no constraint force";
    }
  }
  EXPECT_GE(models, 10);
}

// A particle in the plane on a ring x^2 + y^2 = r^2 (a physical row), its height servoed to
// y = 0.5 sin(w t) (a servo row). Parameters m (mass), r, w and d, a vertical disturbance force
// the plant feels and the nominal model leaves out.
json bead_model() {
  return json::parse(R"json({
    "format": "ukes-model/1", "name": "servo_bead",
    "coordinates": ["x", "y"],
    "parameters": [{"name": "m", "value": 1.0}, {"name": "r", "value": 1.0},
                   {"name": "w", "value": 1.0}, {"name": "d", "value": 0.0}],
    "mass": {"diagonal": ["m", "m"]},
    "force": ["0", "-9.81 * m + d"],
    "position_constraints": ["x * x + y * y - r * r", "y - 0.5 * sin(w * t)"],
    "initial_state": {"q": ["r", "0"], "qd": ["0", "0.5 * w"]},
    "t_end": 2.0,
    "baumgarte": {
  "alpha" : 10.0, "beta" : 25.0}
  })json");
}

TEST(Control, PhysicalRowsBesideServoRowsGiveTheUkMotionOfAllRows) {
  json spec = {{"model", bead_model()},
               {"device", "cpu"},
               {"integrator", {{"method", "rk4"}, {"t_end", 2.0}, {"dt", 1e-3}}},
               {"output", {{"samples", 2}}}};
  const RunOutcome exact = run(spec);
  spec["control"] = {{"rows", {1}}};
  const RunOutcome controlled = run(spec);
  for (int j = 0; j < 2; ++j) {
    EXPECT_PRED3(near, controlled.results.q_at(j, 0), exact.results.q_at(j, 0), 1e-12);
    EXPECT_PRED3(near, controlled.results.qd_at(j, 0), exact.results.qd_at(j, 0), 1e-12);
  }
  EXPECT_GT(controlled.results.force_max[0], 0.0) << "the ring carries the bead";
  EXPECT_GT(controlled.results.control_effort_max[0], 0.0);

  // A plant heavier than the controller believes: the ring holds exactly, the servo does not.
  spec["params"] = {{"m", 1.3}};
  const RunOutcome mismatched = run(spec);
  const BatchResults& r = mismatched.results;
  EXPECT_EQ(r.status[0], 0);
  EXPECT_LT(r.residual_at(0, 0), 1e-7) << "|phi| of the ring";
  EXPECT_GT(r.residual_at(1, 0), 1e-3) << "|phi| of the servo row: the mismatch shows";
}

// x tracks sin t; the controller believes the mass is m_hat. With k = m_hat / m the error
// e = x - sin t obeys e'' + k alpha e' + k beta e = (1 - k) sin t (docs/CONTROL.md).
json mass_model() {
  return json::parse(R"json({
    "format": "ukes-model/1", "name": "servo_mass",
    "coordinates": ["x"],
    "parameters": [{"name": "m", "value": 1.0}, {"name": "d", "value": 0.0}],
    "mass": {"diagonal": ["m"]},
    "force": ["d * sin(2 * t)"],
    "position_constraints": ["x - sin(t)"],
    "initial_state": {"q": ["0.2"], "qd": ["0.5"]},
    "t_end": 6.0,
    "baumgarte": {
  "alpha" : 4.0, "beta" : 4.0}
  })json");
}

// The closed form of e'' + c1 e' + c0 e = f sin t with e(0) = e0, e'(0) = v0 (distinct roots).
double error_closed_form(double c1, double c0, double f, double e0, double v0, double t) {
  using C = std::complex<double>;
  const C forced = f / (c0 - 1.0 + C(0, c1));  // particular solution Im(F e^{it})
  const double p0 = forced.imag(), pd0 = forced.real();
  const C disc = std::sqrt(C(c1 * c1 - 4 * c0));
  const C r1 = (-c1 + disc) / 2.0, r2 = (-c1 - disc) / 2.0;
  const C a1 = ((v0 - pd0) - r2 * (e0 - p0)) / (r1 - r2);
  const C a2 = (e0 - p0) - a1;
  const C homogeneous = a1 * std::exp(r1 * t) + a2 * std::exp(r2 * t);
  return homogeneous.real() + (forced * std::exp(C(0, t))).imag();
}

// servo_mass's tracking error (system 0 of `r`, sampled) against the closed form of
// e'' + K alpha e' + K beta e = (1 - K) sin t from its initial state, e(0) = 0.2, e'(0) = 0.5 - 1,
// K the ratio of the force applied to the force the controller's model needs.
void expect_the_closed_form_error(const json& spec, const BatchResults& r, double K, double alpha,
                                  double beta) {
  const std::vector<double> times = sample_times(parse_run_spec(spec).settings);
  double worst = 0.0;
  for (int s = 0; s < r.samples; ++s) {
    const double t = times[static_cast<std::size_t>(s)];
    const double e = error_closed_form(K * alpha, K * beta, 1.0 - K, 0.2, 0.5 - 1.0, t);
    worst = std::max(worst, std::abs(r.traj_residual_at(0, s, 0) - e));
  }
  EXPECT_LT(worst, 1e-8);
  EXPECT_GT(r.residual_at(0, 0), 0.1) << "the error is the mismatch's, not rounding";
}

TEST(Control, OneDofTrackingErrorFollowsItsLinearOde) {
  const double m = 1.0, m_hat = 2.0, alpha = 4.0, beta = 4.0;
  const json spec = {{"model", mass_model()},
                     {"device", "cpu"},
                     {"params", {{"m", m}}},
                     {"control", {{"params", {{"m", m_hat}}}}},
                     {"integrator", {{"method", "dopri5"}, {"rtol", 1e-12}, {"atol", 1e-12}}},
                     {"output", {{"samples", 61}, {"trajectories", "all"}}}};
  const RunOutcome out = run(spec);
  const BatchResults& r = out.results;
  ASSERT_EQ(r.status[0], 0);
  expect_the_closed_form_error(spec, r, m_hat / m, alpha, beta);
  const std::vector<double> times = sample_times(parse_run_spec(spec).settings);
  for (int s = 0; s < r.samples; ++s) {
    // The force applied: m_hat (b - alpha e' - beta e), b = -sin t (the row's e'' = x'' + sin t).
    const double t = times[static_cast<std::size_t>(s)];
    const double phi = r.traj_residual_at(0, s, 0), phid = r.traj_residual_at(0, s, 1);
    const double u = m_hat * (-std::sin(t) - alpha * phid - beta * phi);
    EXPECT_NEAR(r.traj_control[static_cast<std::size_t>(s)], u, 1e-9 * (1 + std::abs(u))) << t;
  }
}

// Disturbance d sin 2t the controller does not know; alpha = 2, beta = 1 make lambda = 1 and
// sigma = e' + e obey sigma' = -sigma - g sigma / (|sigma| + eps) + d sin 2t, whose ultimate bound
// solves s + g s / (s + eps) = d.
double ultimate_bound(double gain, double eps, double d) {
  const double b = eps + gain - d;
  return (-b + std::sqrt(b * b + 4 * d * eps)) / 2;
}

TEST(Control, RobustTermKeepsTheErrorInsideABoundThatShrinksWithTheGain) {
  const double d = 1.0, eps = 0.01;
  json model = mass_model();
  model["initial_state"] = {{"q", {"0"}}, {"qd", {"1"}}};  // on the path: sigma(0) = 0
  model["baumgarte"] = {{"alpha", 2.0}, {"beta", 1.0}};
  double previous = INFINITY;
  for (double gain : {0.0, 2.0, 10.0, 50.0}) {
    const json spec = {
        {"model", model},
        {"device", "cpu"},
        {"params", {{"d", d}}},
        {"control", {{"robust", {{"gain", gain}, {"epsilon", eps}}}}},
        {"integrator", {{"method", "dopri5"}, {"t_end", 12.0}, {"rtol", 1e-10}, {"atol", 1e-12}}},
        {"output", {{"samples", 1201}, {"trajectories", "all"}}}};
    const RunOutcome out = run(spec);
    const BatchResults& r = out.results;
    ASSERT_EQ(r.status[0], 0) << "gain " << gain;
    double sigma_max = 0.0;
    for (int s = 0; s < r.samples; ++s)
      sigma_max =
          std::max(sigma_max, std::abs(r.traj_residual_at(0, s, 1) + r.traj_residual_at(0, s, 0)));
    const double bound = ultimate_bound(gain, eps, d);
    EXPECT_LE(sigma_max, bound * (1 + 1e-6)) << "gain " << gain;
    EXPECT_GT(sigma_max, 0.3 * bound) << "gain " << gain << ": the bound is not vacuous";
    EXPECT_LT(sigma_max, previous) << "gain " << gain;
    previous = sigma_max;
  }
}

// scara's vertical axis carries the payload alone (M(3, 3) = m4, Q(3) = -m4 g, no coupling), and
// its servo row phi3 = q4 + l0 - vz t asks for a constant speed. A controller that believes the
// payload is m4_hat applies u4 = m4_hat (-alpha phi3' - beta phi3 + g), so the plant's error obeys
// m4 phi3'' + m4_hat (alpha phi3' + beta phi3) = (m4_hat - m4) g and settles at
// (m4_hat - m4) g / (m4_hat beta): the payload study's vertical error in closed form.
TEST(Control, ScaraPayloadMismatchSettlesAtTheStaticErrorOfItsVerticalAxis) {
  const json spec = {{"model", "scara"},
                     {"device", "cpu"},
                     {"assemble", true},
                     {"systems", {{{"params", {{"m4", 0.8}}}}, {{"params", {{"m4", 0.3}}}}}},
                     {"control", {{"params", {{"m4", 0.5}}}}},
                     {"integrator", {{"method", "dopri5"}, {"rtol", 1e-11}, {"atol", 1e-11}}},
                     {"output", {{"samples", 3}, {"trajectories", "all"}}}};
  const RunSpec parsed = parse_run_spec(spec);
  const RunOutcome out = run(spec);
  const BatchResults& r = out.results;
  const double m4_hat = 0.5, g = 9.81, beta = parsed.settings.beta;
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(r.status[static_cast<std::size_t>(i)], 0);
    const double m4 = i == 0 ? 0.8 : 0.3;
    const double settled = (m4_hat - m4) * g / (m4_hat * beta);
    EXPECT_NEAR(r.traj_residual_at(i, r.samples - 1, 3), settled, 1e-7 * std::abs(settled)) << i;
  }
}

TEST(Control, ListedActuationWithFullRowRankTracksExactly) {
  // scara's four rows fix its four coordinates; actuating three of four leaves A M^-1 B of rank
  // three: least squares. Its end effector alone (rows 0 and 1, say) through q1 and q2 is 2 x 2.
  const json spec = {{"model", "scara"},
                     {"device", "cpu"},
                     {"assemble", true},
                     {"control", {{"rows", {0, 1}}, {"actuation", {"q1", "q2"}}}},
                     {"integrator", {{"method", "rk4"}, {"t_end", 0.5}, {"dt", 1e-3}}},
                     {"output", {{"samples", 11}, {"trajectories", "all"}}}};
  const RunOutcome out = run(spec);
  const BatchResults& r = out.results;
  ASSERT_EQ(r.status[0], 0);
  EXPECT_LT(r.residual_at(0, 0), 1e-9);
  EXPECT_LT(r.residual_at(1, 0), 1e-9);
  // B u: nothing on q3 and q4 but rounding of the least-norm solve.
  const double scale = 1e-12 * r.control_effort_max[0];
  for (int s = 0; s < r.samples; ++s) {
    EXPECT_LE(std::abs(r.traj_control[static_cast<std::size_t>(s) * 4 + 2]), scale) << s;
    EXPECT_LE(std::abs(r.traj_control[static_cast<std::size_t>(s) * 4 + 3]), scale) << s;
  }
}

// A planar two-link arm as two point masses in Cartesian coordinates: the links are physical rows,
// the links' absolute angles theta_i are servoed to theta_id(t) = -pi/2 + A_i sin(w t) through
// rows l_i sin(theta_i - theta_id) (written in x, y). The payload m2 of the plant differs from
// the controller's.
json two_link_model() {
  return json::parse(R"json({
    "format": "ukes-model/1", "name": "two_link_servo",
    "coordinates": ["x1", "y1", "x2", "y2"],
    "parameters": [{"name": "m1", "value": 1.0}, {"name": "m2", "value": 1.0},
                   {"name": "l1", "value": 1.0}, {"name": "l2", "value": 0.8},
                   {"name": "g", "value": 9.81}, {"name": "A1", "value": 0.5},
                   {"name": "A2", "value": 0.8}, {"name": "w", "value": 2.0}],
    "mass": {"diagonal": ["m1", "m1", "m2", "m2"]},
    "force": ["0", "-m1 * g", "0", "-m2 * g"],
    "position_constraints": [
      "x1 * x1 + y1 * y1 - l1 * l1",
      "(x2 - x1) * (x2 - x1) + (y2 - y1) * (y2 - y1) - l2 * l2",
      "x1 * sin(-1.5707963267948966 + A1 * sin(w * t)) - y1 * cos(-1.5707963267948966 + A1 * sin(w * t))",
      "(x2 - x1) * sin(-1.5707963267948966 + A2 * sin(w * t)) - (y2 - y1) * cos(-1.5707963267948966 + A2 * sin(w * t))"],
    "initial_state": {"q": ["0", "-l1", "0", "-l1 - l2"],
                      "qd": ["l1 * A1 * w", "0", "l1 * A1 * w + l2 * A2 * w", "0"]},
    "t_end": 3.0,
    "baumgarte": {
  "alpha" : 10.0, "beta" : 25.0}
  })json");
}

// The same arm in reduced coordinates (absolute link angles) under computed torque: the
// controller's torque tau = M^(theta) theta''_des - Q^(theta, theta'), theta''_des making each
// servo row phi_i = -l_i sin(e_i), e_i = theta_i - theta_id, obey phi'' + alpha phi' + beta phi =
// 0; the plant M(theta) theta'' = Q(theta, theta') + tau. Integrated by classical RK4.
struct TwoLink {
  double m1 = 1, m2, m2_hat, l1 = 1, l2 = 0.8, g = 9.81, A1 = 0.5, A2 = 0.8, w = 2;
  double alpha = 10, beta = 25;

  // M and Q of the arm with payload m.
  void dynamics(double m, const double* th, const double* thd, double M[2][2], double Q[2]) const {
    const double c = std::cos(th[1] - th[0]), s = std::sin(th[1] - th[0]);
    M[0][0] = (m1 + m) * l1 * l1;
    M[0][1] = M[1][0] = m * l1 * l2 * c;
    M[1][1] = m * l2 * l2;
    Q[0] = -(m1 + m) * g * l1 * std::cos(th[0]) + m * l1 * l2 * s * thd[1] * thd[1];
    Q[1] = -m * g * l2 * std::cos(th[1]) - m * l1 * l2 * s * thd[0] * thd[0];
  }

  // x = (theta1, theta2, theta1', theta2') -> x'.
  void rhs(double t, const double* x, double* dx) const {
    const double amp[2] = {A1, A2};
    double acc_des[2];
    for (int i = 0; i < 2; ++i) {
      const double ref = -M_PI / 2 + amp[i] * std::sin(w * t);
      const double ref_d = amp[i] * w * std::cos(w * t);
      const double ref_dd = -amp[i] * w * w * std::sin(w * t);
      const double e = x[i] - ref, ed = x[2 + i] - ref_d;
      const double edd =
          (std::sin(e) * ed * ed - alpha * std::cos(e) * ed - beta * std::sin(e)) / std::cos(e);
      acc_des[i] = ref_dd + edd;
    }
    double Mh[2][2], Qh[2], M[2][2], Q[2];
    dynamics(m2_hat, x, x + 2, Mh, Qh);
    dynamics(m2, x, x + 2, M, Q);
    double f[2];
    for (int i = 0; i < 2; ++i) f[i] = Q[i] + Mh[i][0] * acc_des[0] + Mh[i][1] * acc_des[1] - Qh[i];
    const double det = M[0][0] * M[1][1] - M[0][1] * M[1][0];
    dx[0] = x[2];
    dx[1] = x[3];
    dx[2] = (M[1][1] * f[0] - M[0][1] * f[1]) / det;
    dx[3] = (M[0][0] * f[1] - M[1][0] * f[0]) / det;
  }

  // theta(t_end) from theta(0) on the path.
  void integrate(double t_end, int steps, double* x) const {
    x[0] = x[1] = -M_PI / 2;
    x[2] = A1 * w;
    x[3] = A2 * w;
    const double h = t_end / steps;
    for (int k = 0; k < steps; ++k) {
      const double t = k * h;
      double k1[4], k2[4], k3[4], k4[4], y[4];
      rhs(t, x, k1);
      for (int j = 0; j < 4; ++j) y[j] = x[j] + 0.5 * h * k1[j];
      rhs(t + 0.5 * h, y, k2);
      for (int j = 0; j < 4; ++j) y[j] = x[j] + 0.5 * h * k2[j];
      rhs(t + 0.5 * h, y, k3);
      for (int j = 0; j < 4; ++j) y[j] = x[j] + h * k3[j];
      rhs(t + h, y, k4);
      for (int j = 0; j < 4; ++j) x[j] += h / 6 * (k1[j] + 2 * k2[j] + 2 * k3[j] + k4[j]);
    }
  }
};

// The controlled arm's final state (system 0 of `r`) against the reduced computed-torque arm.
void expect_the_final_state_of_computed_torque(const BatchResults& r, double m2, double m2_hat,
                                               double t_end) {
  TwoLink arm;
  arm.m2 = m2;
  arm.m2_hat = m2_hat;
  double x[4];
  arm.integrate(t_end, 30000, x);
  const double x1 = arm.l1 * std::cos(x[0]), y1 = arm.l1 * std::sin(x[0]);
  const double x2 = x1 + arm.l2 * std::cos(x[1]), y2 = y1 + arm.l2 * std::sin(x[1]);
  EXPECT_NEAR(r.q_at(0, 0), x1, 1e-8);
  EXPECT_NEAR(r.q_at(1, 0), y1, 1e-8);
  EXPECT_NEAR(r.q_at(2, 0), x2, 1e-8);
  EXPECT_NEAR(r.q_at(3, 0), y2, 1e-8);
}

TEST(Control, TwoLinkArmWithPayloadMismatchMatchesReducedComputedTorque) {
  const double m2 = 1.5, m2_hat = 1.0, t_end = 3.0;
  const json spec = {{"model", two_link_model()},
                     {"device", "cpu"},
                     {"params", {{"m2", m2}}},
                     {"control", {{"rows", {2, 3}}, {"params", {{"m2", m2_hat}}}}},
                     {"integrator", {{"method", "dopri5"}, {"rtol", 1e-12}, {"atol", 1e-12}}}};
  const RunOutcome out = run(spec);
  const BatchResults& r = out.results;
  ASSERT_EQ(r.status[0], 0);
  expect_the_final_state_of_computed_torque(r, m2, m2_hat, t_end);
  // The mismatch is visible: the servo rows' errors are far above rounding, the links exact.
  EXPECT_GT(r.residual_at(2, 0), 1e-3);
  EXPECT_LT(r.residual_at(0, 0), 1e-8);
  EXPECT_LT(r.residual_at(1, 0), 1e-8);
}

// The arm driven by joint torques: a shoulder torque on theta1 and an elbow torque on theta2 -
// theta1 (theta_i the links' absolute angles) act on the Cartesian coordinates through
// B(q) = [grad theta1, grad theta2 - grad theta1], the gradients of theta1 = atan2(y1, x1) and
// theta2 = atan2(y2 - y1, x2 - x1).
json joint_torques() {
  const std::string r1 = "(x1 * x1 + y1 * y1)";
  const std::string r2 = "((x2 - x1) * (x2 - x1) + (y2 - y1) * (y2 - y1))";
  return json::array({json::array({"-y1 / " + r1, "(y2 - y1) / " + r2 + " + y1 / " + r1}),
                      json::array({"x1 / " + r1, "-(x2 - x1) / " + r2 + " - x1 / " + r1}),
                      json::array({"0", "-(y2 - y1) / " + r2}),
                      json::array({"0", "(x2 - x1) / " + r2})});
}

TEST(Control, JointTorquesThroughAnActuationMatrixMatchReducedComputedTorque) {
  // With the links physical and the two angle rows servoed, A M^-1 B is 2 x 2 and invertible:
  // the controller meets its nominal servo dynamics exactly, as computed torque does in reduced
  // coordinates, so both plants move alike.
  const double m2 = 1.5, m2_hat = 1.0, t_end = 3.0;
  const json spec = {
      {"model", two_link_model()},
      {"device", "cpu"},
      {"params", {{"m2", m2}}},
      {"control", {{"rows", {2, 3}}, {"params", {{"m2", m2_hat}}}, {"actuation", joint_torques()}}},
      {"integrator", {{"method", "dopri5"}, {"rtol", 1e-12}, {"atol", 1e-12}}},
      {"output", {{"samples", 31}, {"trajectories", "all"}}}};
  const RunOutcome out = run(spec);
  const BatchResults& r = out.results;
  ASSERT_EQ(r.status[0], 0);
  expect_the_final_state_of_computed_torque(r, m2, m2_hat, t_end);
  EXPECT_GT(r.residual_at(2, 0), 1e-3);
  // Joint torques do no work when a link stretches with both angles fixed: B u is a combination
  // of the angle gradients, so it is orthogonal to (x1, y1, x1, y1) (link 1 longer, the second
  // mass carried along) and to (0, 0, x2 - x1, y2 - y1) (link 2 longer).
  for (int s = 0; s < r.samples; ++s) {
    const auto at = [&](int j) { return r.traj_q[static_cast<std::size_t>(s) * 4 + j]; };
    const auto force = [&](int j) { return r.traj_control[static_cast<std::size_t>(s) * 4 + j]; };
    const double along1 = at(0) * (force(0) + force(2)) + at(1) * (force(1) + force(3));
    const double along2 = (at(2) - at(0)) * force(2) + (at(3) - at(1)) * force(3);
    EXPECT_NEAR(along1, 0.0, 1e-9 * (1 + r.control_effort_max[0])) << s;
    EXPECT_NEAR(along2, 0.0, 1e-9 * (1 + r.control_effort_max[0])) << s;
  }
}

// Only user models compile the actuation matrix's code (kernels/uk/servo_control.hpp).
static_assert(kHasActuationMatrix<UserModel<4>, double>);
static_assert(!kHasActuationMatrix<models::Scara, double>);

TEST(Control, AMismatchedActuatorGainGivesTheClosedFormError) {
  // B = [k]: the controller believes k^ = 1, the plant's actuator has k. The applied force is
  // (k / k^) m^ (b - alpha e' - beta e), so e'' + K alpha e' + K beta e = (1 - K) sin t with
  // K = k m^ / (k^ m).
  json model = mass_model();
  model["parameters"].push_back({{"name", "k"}, {"value", 1.0}});
  const double k = 1.5, alpha = 4.0, beta = 4.0;
  const json spec = {{"model", model},
                     {"device", "cpu"},
                     {"params", {{"k", k}}},
                     {"control", {{"actuation", json::array({json::array({"k"})})}}},
                     {"integrator", {{"method", "dopri5"}, {"rtol", 1e-12}, {"atol", 1e-12}}},
                     {"output", {{"samples", 61}, {"trajectories", "all"}}}};
  const RunOutcome out = run(spec);
  ASSERT_EQ(out.results.status[0], 0);
  expect_the_closed_form_error(spec, out.results, k, alpha, beta);
}

TEST(Control, AMatrixOfColumnsOfTheIdentityIsTheListedCoordinates) {
  json spec = {{"model", two_link_model()},
               {"device", "cpu"},
               {"params", {{"m2", 1.2}}},
               {"control", {{"rows", {2, 3}}, {"actuation", {"x1", "y2"}}}},
               {"integrator", {{"method", "rk4"}, {"t_end", 1.0}, {"dt", 1e-3}}}};
  const RunOutcome listed = run(spec);
  spec["control"]["actuation"] = json::array({json::array({"1", "0"}), json::array({"0", "0"}),
                                              json::array({"0", "0"}), json::array({"0", "1"})});
  const RunOutcome matrix = run(spec);
  ASSERT_EQ(listed.results.status[0], 0);
  ASSERT_EQ(matrix.results.status[0], 0);
  for (int j = 0; j < 4; ++j)
    EXPECT_NEAR(matrix.results.q_at(j, 0), listed.results.q_at(j, 0), 1e-13) << j;
  EXPECT_NEAR(matrix.results.control_effort_max[0], listed.results.control_effort_max[0],
              1e-12 * listed.results.control_effort_max[0]);
  // Results record the matrix as given; the model keeps its definition's content id.
  const RunSpec parsed = parse_run_spec(spec);
  EXPECT_EQ(results_header_json(parsed, matrix)["control"]["actuation"],
            spec["control"]["actuation"]);
  EXPECT_EQ(parsed.model->user->definition.content_id,
            parse_run_spec({{"model", two_link_model()}}).model->user->definition.content_id);
}

TEST(Control, MotorTorquesBehindTheSpringsDoNotReachALinkVelocityRow) {
  // docs/CONTROL.md, "Limits": the flexible joint's mass matrix is block diagonal (links, motors)
  // and its row acts on the links, so A M^-1 B = 0 for B on the motors: no control at all, and
  // the row's error is the uncontrolled plant's.
  const json spec = {{"model", "flexible_joint"},
                     {"device", "cpu"},
                     {"control", {{"actuation", {"m1ang", "m2ang"}}}},
                     {"integrator", {{"method", "rk4"}, {"t_end", 1.0}, {"dt", 1e-3}}}};
  const RunOutcome out = run(spec);
  ASSERT_EQ(out.results.status[0], 0);
  EXPECT_EQ(out.results.control_effort_max[0], 0.0);
  EXPECT_GT(out.results.residual_at(0, 0), 0.5) << "psi(0) = 0.9 is left to itself";
}

TEST(Control, TheControllerParametersCanBeSwept) {
  const json spec = {
      {"model", mass_model()},
      {"device", "cpu"},
      {"control", json::object()},
      {"assemble", true},
      {"sweep", {{"count", 8}, {"vary", {{"control.params.m", {{"values", {1.0, 1.5}}}}}}}},
      {"integrator", {{"method", "rk4"}, {"t_end", 1.0}, {"dt", 1e-3}}}};
  const RunSpec parsed = parse_run_spec(spec);
  ASSERT_EQ(parsed.batch.control_params.size(), 2u * 8);
  const RunOutcome out = run(spec);
  for (int i = 0; i < 8; ++i) {
    const double m_hat = parsed.batch.control_params[static_cast<std::size_t>(i)];
    EXPECT_EQ(parsed.batch.params[static_cast<std::size_t>(i)], 1.0) << "the plant's m";
    if (m_hat == 1.0) {
      EXPECT_LT(out.results.residual_at(0, i), 1e-9) << i;
    } else {
      EXPECT_GT(out.results.residual_at(0, i), 1e-3) << i;
    }
  }
}

void expect_field_error(const json& spec, const std::string& field) {
  try {
    parse_run_spec(spec);
    ADD_FAILURE() << "accepted; expected an error at " << field;
  } catch (const SpecError& e) {
    EXPECT_EQ(e.field(), field) << e.reason();
  }
}

TEST(Control, TheSpecIsCheckedFieldByField) {
  const json base = {{"model", "scara"}, {"device", "cpu"}};
  const auto with = [&](const json& patch) {
    json s = base;
    s.merge_patch(patch);
    return s;
  };
  expect_field_error(with({{"control", {{"rows", {0, 7}}}}}), "control.rows[1]");
  expect_field_error(with({{"control", {{"rows", {1, 1}}}}}), "control.rows[1]");
  expect_field_error(with({{"control", {{"rows", "some"}}}}), "control.rows");
  expect_field_error(with({{"control", {{"params", {{"mass", 1}}}}}}), "control.params.mass");
  expect_field_error(with({{"control", {{"actuation", {"q9"}}}}}), "control.actuation[0]");
  expect_field_error(with({{"control", {{"robust", {{"epsilon", 0}}}}}}), "control.robust.epsilon");
  expect_field_error(with({{"control", {{"gain", 1}}}}), "control.gain");
  expect_field_error(with({{"control", json::object()}, {"stabilization", {{"projection", true}}}}),
                     "stabilization.projection");
  expect_field_error(with({{"control", json::object()}, {"gpu_path", "cusolver"}}), "gpu_path");
  expect_field_error(
      with({{"sweep", {{"count", 2}, {"vary", {{"control.params.m4", {{"values", {1}}}}}}}}}),
      "sweep.vary.control.params.m4");
  expect_field_error(with({{"output", {{"fields", {"q", "control"}}}}}), "output.fields[1]");
  expect_field_error({{"model", "projectile_polar"}, {"control", json::object()}}, "control");

  // Actuation matrices: user models only, n rows of the same k <= n expressions.
  const json matrix = json::array({json::array({"1"})});
  expect_field_error(with({{"control", {{"actuation", matrix}}}}), "control.actuation");
  const auto user = [&](const json& actuation) {
    return json{{"model", mass_model()}, {"control", {{"actuation", actuation}}}};
  };
  const auto row = [](const json& entries) { return json::array({entries}); };
  expect_field_error(user(json::array({json::array({"1"}), json::array({"2"})})),
                     "control.actuation");
  expect_field_error(user(row(json::array({"1", "2"}))), "control.actuation[0]");
  expect_field_error(user(row(json::array())), "control.actuation[0]");
  expect_field_error(user(row(json::array({"x +"}))), "control.actuation[0][0]");
  expect_field_error(user(row(json::array({"mass"}))), "control.actuation[0][0]");
  expect_field_error(user(row(json::array({true}))), "control.actuation[0][0]");
}

TEST(Control, RelativeDegreesAreCheckedRowByRow) {
  // scara: two position rows; the flexible joint: one velocity row.
  const auto scara = [](const json& control) {
    return json{{"model", "scara"}, {"device", "cpu"}, {"control", control}};
  };
  expect_field_error(scara({{"relative_degree", 1}}), "control.relative_degree");
  expect_field_error(scara({{"relative_degree", 5}}), "control.relative_degree");
  expect_field_error(scara({{"relative_degree", {2}}}), "control.relative_degree");
  expect_field_error(scara({{"relative_degree", "high"}}), "control.relative_degree");
  expect_field_error(scara({{"rows", {1, 0}}, {"relative_degree", {2, 1}}}),
                     "control.relative_degree[1]");
  expect_field_error(scara({{"rows", {1}}, {"relative_degree", {4}}}), "control.relative_degree");
  expect_field_error(scara({{"relative_degree", 3}, {"robust", {{"gain", 1}}}}), "control.robust");
  // Rows listed in another order take their degrees in that order.
  const RunSpec listed =
      parse_run_spec(scara({{"rows", {3, 2, 1, 0}}, {"relative_degree", {4, 2, 2, 2}}}));
  EXPECT_EQ(listed.settings.control.higher_degree_rows, 8u);
  EXPECT_EQ(listed.settings.control.relative_degree[3], 4);
  // Degrees equal to the rows' orders change nothing.
  EXPECT_EQ(parse_run_spec(scara({{"relative_degree", 2}})).settings.control.higher_degree_rows,
            0u);

  // The GPU follows them too (in a kernel compiled for the model at run time): `auto` takes it.
  ParseOptions gpu_here;
  gpu_here.gpu_available = true;
  json flexible = {{"model", "flexible_joint"},
                   {"device", "auto"},
                   {"control", {{"actuation", {"m1ang", "m2ang"}}, {"relative_degree", 3}}}};
  EXPECT_EQ(parse_run_spec(flexible, gpu_here).device_resolved, Device::kGpu);
}

}  // namespace
}  // namespace ukes
