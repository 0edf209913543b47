// Events (docs/EVENTS.md) through the one run path (parse_run_spec, execute), against closed
// forms: a pendulum's zero crossings against its period from the complete elliptic integral; a
// particle held in a tilted vertical plane bouncing on a floor (restitution 0.8), its impact
// times from free flight between impacts, and a reset that breaks the plane's velocity row,
// which the velocity projection removes by a closed-form amount; SCARA stopped where its tool
// leaves the workspace, at the time its helix gives. Also: records leave the integration
// untouched, and the spec's refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "service/engine/engine.hpp"
#include "service/runspec/run_spec.hpp"
#include "support/spec_run.hpp"

namespace ukes {
namespace {

using nlohmann::json;

// The complete elliptic integral of the first kind K(k), by the arithmetic-geometric mean.
double elliptic_k(double k) {
  double a = 1, b = std::sqrt(1 - k * k);
  for (int i = 0; i < 40 && std::abs(a - b) > 1e-16 * a; ++i) {
    const double next = 0.5 * (a + b);
    b = std::sqrt(a * b);
    a = next;
  }
  return M_PI / (2 * a);
}

double event_t(const BatchResults& r, int e, int k, int i = 0) {
  return r.event_t[static_cast<std::size_t>(e * r.event_records + k) * r.count + i];
}
double event_qd(const BatchResults& r, int e, int k, int j, int i = 0) {
  return r.event_qd[static_cast<std::size_t>((e * r.event_records + k) * r.n + j) * r.count + i];
}
std::int64_t event_count(const BatchResults& r, int e, int i = 0) {
  return r.event_count[static_cast<std::size_t>(e) * r.count + i];
}

// pendulum_polar released at rest from th0 = pi/3: th crosses zero at T/4 + k T/2, falling first,
// with T = 4 sqrt(L/g) K(sin(th0/2)); |thd| there is sqrt(2 g (1 - cos th0) / L).
json pendulum(const char* method, double tol) {
  return {{"model", "pendulum_polar"},
          {"device", "cpu"},
          {"integrator", {{"method", method}, {"rtol", tol}, {"atol", tol}, {"t_end", 10.0}}},
          {"events",
           {{{"name", "crossing"}, {"condition", "th"}, {"max", 32}},
            {{"name", "leftward"}, {"condition", "th"}, {"direction", "falling"}}}}};
}

void expect_pendulum_crossings(const RunOutcome& out, double tol) {
  const BatchResults& r = out.results;
  const double g = 9.81, L = 1.0, th0 = M_PI / 3;
  const double period = 4 * std::sqrt(L / g) * elliptic_k(std::sin(th0 / 2));
  const int crossings = static_cast<int>(std::floor((10.0 - period / 4) / (period / 2))) + 1;
  ASSERT_EQ(event_count(r, 0), crossings);
  ASSERT_EQ(event_count(r, 1), (crossings + 1) / 2);
  const double speed = std::sqrt(2 * g * (1 - std::cos(th0)) / L);
  for (int k = 0; k < crossings; ++k) {
    SCOPED_TRACE(k);
    EXPECT_NEAR(event_t(r, 0, k), period / 4 + k * period / 2, tol);
    EXPECT_NEAR(event_qd(r, 0, k, 1), k % 2 == 0 ? -speed : speed, 10 * tol);
    if (k % 2 == 0) {
      EXPECT_EQ(event_t(r, 1, k / 2), event_t(r, 0, k));
    }
  }
  EXPECT_TRUE(std::isnan(event_t(r, 0, crossings)));  // records past the count stay NaN
  EXPECT_EQ(r.status[0], static_cast<int>(Status::kOk));
}

TEST(EventRun, PendulumZeroCrossingsFollowTheEllipticPeriod) {
  expect_pendulum_crossings(run_spec(pendulum("dopri5", 1e-12)), 1e-8);
}

// RK4 and RODAS4 locate on cubic Hermite interpolants (order 3): as exact as their steps allow.
TEST(EventRun, PendulumZeroCrossingsOnHermiteDenseOutput) {
  json rk4 = pendulum("rk4", 1e-12);
  rk4["integrator"]["dt"] = 1e-3;
  expect_pendulum_crossings(run_spec(rk4), 1e-9);
  expect_pendulum_crossings(run_spec(pendulum("rosenbrock", 1e-11)), 1e-7);
}

TEST(EventRun, RecordsLeaveTheIntegrationUntouched) {
  json without = pendulum("dopri5", 1e-10);
  without.erase("events");
  without["output"] = {{"samples", 21}, {"trajectories", "all"}};
  json with = pendulum("dopri5", 1e-10);
  with["output"] = without["output"];
  const RunOutcome a = run_spec(without), b = run_spec(with);
  EXPECT_EQ(a.results.q, b.results.q);
  EXPECT_EQ(a.results.qd, b.results.qd);
  EXPECT_EQ(a.results.traj_q, b.results.traj_q);
  EXPECT_EQ(a.results.steps, b.results.steps);
}

// A particle of mass m held in the vertical plane x sin b = z cos b (one position row), falling
// from y = 1 and moving along the plane at unit speed; the floor y = 0 reverses y_dot with
// restitution e. Between impacts it flies parabolas: the first impact is at t1 = sqrt(2 / g), and
// impact k + 1 follows impact k after 2 (e^k v1) / g, v1 = sqrt(2 g). The impacts accumulate at
// t1 (1 + e) / (1 - e) (4.06 s for e = 0.8, where t_end = 3 stays well before).
json bouncing(const std::string& reset_x_dot, double restitution = 0.8, double t_end = 3.0) {
  const json model = {{"format", "ukes-model/1"},
                      {"name", "bead_in_a_plane"},
                      {"coordinates", {"x", "y", "z"}},
                      {"parameters",
                       {{{"name", "m"}, {"value", 1.0}},
                        {{"name", "g"}, {"value", 9.81}},
                        {{"name", "b"}, {"value", 0.5}},
                        {{"name", "restitution"}, {"value", restitution}}}},
                      {"mass", {{"diagonal", {"m", "m", "m"}}}},
                      {"force", {0, "-m * g", 0}},
                      {"position_constraints", {"x * sin(b) - z * cos(b)"}},
                      {"initial_state", {{"q", {0, 1, 0}}, {"qd", {"cos(b)", 0, "sin(b)"}}}},
                      {"t_end", t_end},
                      {"baumgarte", {{"alpha", 0.0}, {"beta", 0.0}}}};
  return {{"model", model},
          {"device", "cpu"},
          {"integrator", {{"rtol", 1e-12}, {"atol", 1e-12}}},
          {"events",
           {{{"name", "floor"},
             {"condition", "y"},
             {"direction", "falling"},
             {"action", "reset"},
             {"reset", {{"qd", {reset_x_dot, "-restitution * y_dot", "z_dot"}}}},
             {"max", 64}}}}};
}

// The bead's impacts up to t_end against free flight between them: every one found, at its time
// and with its speed; none past them.
void expect_free_flight_impacts(const BatchResults& r, double restitution, double t_end) {
  const double g = 9.81, t1 = std::sqrt(2 / g), v1 = g * t1;
  double t = t1, v = v1;
  int impacts = 0;
  for (; t < t_end; ++impacts) {
    SCOPED_TRACE(impacts);
    ASSERT_LT(impacts, event_count(r, 0));
    EXPECT_NEAR(event_t(r, 0, impacts), t, 1e-8);
    EXPECT_NEAR(event_qd(r, 0, impacts, 1), -v, 1e-8 * v1);  // y_dot before the reset
    v *= restitution;
    t += 2 * v / g;
  }
  EXPECT_EQ(event_count(r, 0), impacts);
  EXPECT_EQ(r.status[0], static_cast<int>(Status::kOk));
  EXPECT_GE(r.q_at(1, 0), -1e-9);  // above the floor at the end
}

TEST(EventRun, ABouncingParticleHitsTheFloorWhenFreeFlightSays) {
  const RunOutcome out = run_spec(bouncing("x_dot"));
  const BatchResults& r = out.results;
  expect_free_flight_impacts(r, 0.8, 3.0);
  // Along the plane it never stopped moving at unit speed; the row held.
  EXPECT_NEAR(r.q_at(0, 0), 3.0 * std::cos(0.5), 1e-9);
  EXPECT_NEAR(r.q_at(2, 0), 3.0 * std::sin(0.5), 1e-9);
  EXPECT_LT(r.residual_at(0, 0), 1e-12);
}

// Close to the accumulation (2.2045 s for e = 0.66) the flights shrink geometrically while
// DOPRI5, which integrates free flight exactly, takes the longest steps it may: a flight can
// start and end within the step after its impact, where only the scan of that step finds it.
TEST(EventRun, ImpactsCloseToTheirAccumulationAreAllFound) {
  const double restitution = 0.66, t_end = 2.19;
  const RunOutcome out = run_spec(bouncing("x_dot", restitution, t_end));
  expect_free_flight_impacts(out.results, restitution, t_end);
  EXPECT_GE(event_count(out.results, 0), 12);
}

// The reset adds 1 to x_dot, off the plane: the velocity projection (M-weighted least change, M
// = m I) keeps its part along the plane, cos b (cos b, 0, sin b), so the speed along the plane
// grows by cos b at every impact while the impacts keep their times.
TEST(EventRun, AResetThatBreaksARowIsProjectedBackOntoIt) {
  const RunOutcome out = run_spec(bouncing("x_dot + 1"));
  const BatchResults& r = out.results;
  const double b = 0.5, t1 = std::sqrt(2 / 9.81);
  ASSERT_EQ(event_count(r, 0), 6);
  EXPECT_NEAR(event_t(r, 0, 0), t1, 1e-8);
  const double along = 1 + 6 * std::cos(b);
  EXPECT_NEAR(r.qd_at(0, 0), along * std::cos(b), 1e-9);
  EXPECT_NEAR(r.qd_at(2, 0), along * std::sin(b), 1e-9);
  EXPECT_NEAR(r.qd_at(0, 0) * std::sin(b) - r.qd_at(2, 0) * std::cos(b), 0, 1e-12);
  EXPECT_LT(r.residual_at(0, 0), 1e-9);
}

// SCARA's tool follows x = R sin(Omega t) once assembled onto its helix (docs/MODELS.md): the
// terminate event where x passes 0.04 ends it at asin(0.04 / R) / Omega, samples after that NaN.
TEST(EventRun, ScaraStopsWhereItsToolLeavesTheWorkspace) {
  const json spec = {
      {"model", "scara"},
      {"device", "cpu"},
      {"assemble", true},
      {"sweep", {{"count", 3}, {"vary", {{"params.m4", {{"uniform", {0.3, 0.8}}}}}}}},
      {"integrator", {{"rtol", 1e-12}, {"atol", 1e-12}, {"t_end", 2.0}}},
      {"events",
       {{{"name", "leaves_workspace"},
         {"condition", "-l1 * sin(q1) - l2 * sin(q1 + q2) - 0.04"},
         {"direction", "rising"},
         {"action", "terminate"}}}},
      {"output", {{"samples", 5}, {"trajectories", "all"}}}};
  const RunOutcome out = run_spec(spec);
  const BatchResults& r = out.results;
  const double t_stop = std::asin(0.04 / 0.05) / (0.4 * M_PI);
  for (int i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(r.status[i], static_cast<int>(Status::kTerminated));
    EXPECT_EQ(event_count(r, 0, i), 1);
    EXPECT_NEAR(r.t[i], t_stop, 1e-8);
    EXPECT_EQ(event_t(r, 0, 0, i), r.t[i]);
    const double x = -0.2 * std::sin(r.q_at(0, i)) - 0.25 * std::sin(r.q_at(0, i) + r.q_at(1, i));
    EXPECT_NEAR(x, 0.04, 1e-9);
    EXPECT_FALSE(std::isnan(r.traj_q_at(i, 1, 0)));  // t = 0.5, before the stop
    EXPECT_TRUE(std::isnan(r.traj_q_at(i, 2, 0)));   // t = 1.0, after it
  }
  // Terminated systems ended as asked: the statistics summarize them.
  EXPECT_EQ(out.statistics.ok, 3);
  EXPECT_EQ(out.statistics.by_status[static_cast<int>(Status::kTerminated)], 3);
}

TEST(EventRun, FloatPrecisionLocatesToItsRoundoff) {
  json spec = pendulum("dopri5", 1e-6);
  spec["precision"] = "fp32";
  const RunOutcome out = run_spec(spec);
  const double period = 4 * std::sqrt(1 / 9.81) * elliptic_k(0.5);
  ASSERT_GE(event_count(out.results, 0), 1);
  EXPECT_NEAR(event_t(out.results, 0, 0), period / 4, 1e-5);
}

void expect_refused(json spec, const std::string& field, const std::string& why) {
  try {
    parse_run_spec(spec);
    ADD_FAILURE() << "accepted: " << spec.dump();
  } catch (const SpecError& e) {
    EXPECT_EQ(e.field(), field) << e.reason();
    EXPECT_NE(e.reason().find(why), std::string::npos) << e.reason();
  }
}

TEST(EventRun, TheSpecRefusesWhatItCannotLocate) {
  const json base = pendulum("dopri5", 1e-9);
  json spec = base;
  spec["events"][0]["condition"] = "th + phi";
  expect_refused(spec, "events[0].condition", "unknown name");
  spec = base;
  spec["events"][1]["name"] = "crossing";
  expect_refused(spec, "events[1].name", "twice");
  spec = base;
  spec["events"][0]["direction"] = "up";
  expect_refused(spec, "events[0].direction", "rising");
  spec = base;
  spec["events"][0]["action"] = "reset";
  expect_refused(spec, "events[0].reset", "required");
  spec = base;
  spec["events"][0]["reset"] = {{"qd", {"r_dot", "-th_dot"}}};
  expect_refused(spec, "events[0].reset", "only with action");
  spec["events"][0]["action"] = "reset";
  spec["events"][0]["reset"] = {{"qd", {"-th_dot"}}};
  expect_refused(spec, "events[0].reset.qd", "2 expressions");
  spec["events"][0]["reset"] = {{"qd", {"r_dot", "-th_dot +"}}};
  expect_refused(spec, "events[0].reset.qd[1]", "column");
  spec = base;
  spec["events"][0]["max"] = 5000;
  expect_refused(spec, "events[0].max", "at most 1024");
  spec = base;
  spec["gpu_path"] = "warp";
  expect_refused(spec, "gpu_path", "events");
  spec = base;
  for (int k = 2; k < 9; ++k) {
    std::string name = "extra_";
    name += std::to_string(k);
    spec["events"].push_back({{"name", name}, {"condition", "th"}});
  }
  expect_refused(spec, "events", "limit of 8");
  // Two events kept up to 1024 times each: 81,920 bytes of records a system, past the default
  // 4 GiB limit of trajectory memory at 60,000 systems.
  spec = base;
  spec["events"][1]["max"] = 1024;
  spec["sweep"] = {{"count", 60000}};
  expect_refused(spec, "events", "need more than the limit");
}

}  // namespace
}  // namespace ukes
