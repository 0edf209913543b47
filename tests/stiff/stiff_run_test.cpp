// Runs with `integrator.method: "rosenbrock"` through the one run path (parse_run_spec, execute):
// the friction ring through sticking against SciPy's Radau on the reduced equation
// (tests/stiff/data/friction_ring_stick.json, written by scripts/friction_ring_reference.py), its
// step count against DOPRI5's at the same accuracy, every catalogue model against DOPRI5 at tight
// tolerances, a user model against its built-in, control and projection, and the spec's refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "service/engine/engine.hpp"
#include "service/runspec/run_spec.hpp"
#include "support/example_models.hpp"
#include "support/spec_run.hpp"

namespace ukes {
namespace {

using nlohmann::json;

json reference() {
  std::ifstream in(std::string(UKES_SOURCE_DIR) + "/tests/stiff/data/friction_ring_stick.json");
  return json::parse(in);
}

// The catalogue's friction ring with the friction law's regularization speed eps = 1e-6, the
// reference's parameters, to t = 10 (the bead sticks at about 3.5 s).
json sticking_ring(const char* method, double tol, const char* precision = "fp64") {
  return {{"model", "friction_ring"},
          {"device", "cpu"},
          {"precision", precision},
          {"params", {{"eps", 1e-6}}},
          {"integrator",
           {{"method", method},
            {"rtol", tol},
            {"atol", tol},
            {"t_end", 10.0},
            {"max_steps", 50000000}}},
          {"output", {{"samples", 11}, {"trajectories", "all"}}}};
}

// The largest |th - th_ref| over the reference's samples, th = atan2(y, x).
double angle_error(const RunOutcome& out) {
  const json ref = reference();
  double worst = 0;
  for (int k = 0; k < 11; ++k) {
    const double x = out.results.traj_q_at(0, k, 0), y = out.results.traj_q_at(0, k, 1);
    worst = std::max(worst, std::abs(std::atan2(y, x) - ref["th"][k].get<double>()));
  }
  return worst;
}

TEST(StiffRun, TheFrictionRingSticksAsTheRadauReferenceDoes) {
  const RunOutcome out = run_spec(sticking_ring("rosenbrock", 1e-10));
  ASSERT_EQ(out.results.status[0], static_cast<int>(Status::kOk));
  EXPECT_LT(angle_error(out), 1e-7);
  // Stuck: the bead creeps at about eps.
  EXPECT_LT(std::hypot(out.results.qd_at(0, 0), out.results.qd_at(1, 0)), 1e-5);
}

// DOPRI5 is held to the stability bound of the stuck bead's eigenvalue (about -mu g / eps =
// -2e6 per second): millions of steps where the L-stable method takes a few hundred.
TEST(StiffRun, TakesFiftyTimesFewerStepsThanDopri5AtTheSameAccuracy) {
  const RunOutcome stiff = run_spec(sticking_ring("rosenbrock", 1e-8));
  const RunOutcome explicit_ = run_spec(sticking_ring("dopri5", 1e-8));
  ASSERT_EQ(stiff.results.status[0], static_cast<int>(Status::kOk));
  ASSERT_EQ(explicit_.results.status[0], static_cast<int>(Status::kOk));
  const double stiff_error = angle_error(stiff), explicit_error = angle_error(explicit_);
  EXPECT_LT(stiff_error, 1e-6);
  EXPECT_LT(explicit_error, 1e-6);
  const auto stiff_steps = stiff.results.steps[0] + stiff.results.rejected[0];
  const auto explicit_steps = explicit_.results.steps[0] + explicit_.results.rejected[0];
  EXPECT_GE(explicit_steps, 50 * stiff_steps)
      << "rosenbrock " << stiff_steps << " steps (error " << stiff_error << "), dopri5 "
      << explicit_steps << " (error " << explicit_error << ")";
}

TEST(StiffRun, InSinglePrecisionTheRingStillSticksWhereTheReferenceDoes) {
  const RunOutcome out = run_spec(sticking_ring("rosenbrock", 1e-5, "fp32"));
  ASSERT_EQ(out.results.status[0], static_cast<int>(Status::kOk));
  EXPECT_LT(angle_error(out), 1e-3);
}

// Non-stiff runs: the stiff method's final states agree with DOPRI5's, both at tolerances far
// below the comparison's, over two seconds (or the model's own end time, when shorter).
TEST(StiffRun, EveryCatalogueModelAgreesWithDopri5) {
  int checked = 0;
  for (const ModelInfo& info : catalogue_info()) {
    const double t_end = std::min(2.0, info.t_end);
    const auto spec = [&](const char* method, double tol) {
      return json{
          {"model", info.name},
          {"device", "cpu"},
          {"integrator", {{"method", method}, {"rtol", tol}, {"atol", tol}, {"t_end", t_end}}}};
    };
    const RunOutcome stiff = run_spec(spec("rosenbrock", 1e-11));
    const RunOutcome reference = run_spec(spec("dopri5", 1e-13));
    ASSERT_EQ(stiff.results.status[0], static_cast<int>(Status::kOk)) << info.name;
    ASSERT_EQ(reference.results.status[0], static_cast<int>(Status::kOk)) << info.name;
    for (int j = 0; j < info.n; ++j) {
      const double q = reference.results.q_at(j, 0), qd = reference.results.qd_at(j, 0);
      EXPECT_NEAR(stiff.results.q_at(j, 0), q, 1e-7 * (1 + std::abs(q))) << info.name << " q" << j;
      EXPECT_NEAR(stiff.results.qd_at(j, 0), qd, 1e-7 * (1 + std::abs(qd)))
          << info.name << " qd" << j;
    }
    ++checked;
  }
  EXPECT_EQ(checked, 15);
}

// The friction ring's definition file, run as a user model (its interpreter on the CPU), follows
// the same steps as the built-in generated from it.
TEST(StiffRun, AUserModelRunsAsItsBuiltIn) {
  json built_in = sticking_ring("rosenbrock", 1e-9);
  built_in["params"]["eps"] = 1e-5;
  json user = built_in;
  user["model"] = json::parse(example_definition_text("friction_ring"));
  const RunOutcome a = run_spec(built_in), b = run_spec(user);
  ASSERT_EQ(b.results.status[0], static_cast<int>(Status::kOk));
  EXPECT_EQ(a.results.steps[0], b.results.steps[0]);
  for (int j = 0; j < 2; ++j) {
    EXPECT_NEAR(a.results.q_at(j, 0), b.results.q_at(j, 0), 1e-10);
    EXPECT_NEAR(a.results.qd_at(j, 0), b.results.qd_at(j, 0), 1e-10);
  }
}

// A controller on a mismatched plant (the payload study of docs/CONTROL.md) and the step
// projection: the stiff method's runs agree with DOPRI5's, at the sample times (maxima over
// accepted states depend on where each method's steps fall, so they are not compared).
TEST(StiffRun, ControlAndProjectionAgreeWithDopri5) {
  const auto compare = [](json spec) {
    spec["device"] = "cpu";
    spec["output"] = {{"samples", 11}, {"trajectories", "all"}};
    spec["integrator"]["method"] = "rosenbrock";
    spec["integrator"]["rtol"] = spec["integrator"]["atol"] = 1e-11;
    const RunOutcome stiff = run_spec(spec);
    spec["integrator"]["method"] = "dopri5";
    spec["integrator"]["rtol"] = spec["integrator"]["atol"] = 1e-13;
    const RunOutcome reference = run_spec(spec);
    ASSERT_EQ(stiff.results.status[0], static_cast<int>(Status::kOk)) << spec.dump();
    for (int j = 0; j < stiff.results.n; ++j)
      EXPECT_NEAR(stiff.results.q_at(j, 0), reference.results.q_at(j, 0), 1e-7) << spec.dump();
    // Every sample's residuals and control force.
    ASSERT_EQ(stiff.results.traj_residual.size(), reference.results.traj_residual.size());
    for (std::size_t k = 0; k < stiff.results.traj_residual.size(); ++k)
      EXPECT_NEAR(stiff.results.traj_residual[k], reference.results.traj_residual[k], 1e-7);
    ASSERT_EQ(stiff.results.traj_control.size(), reference.results.traj_control.size());
    for (std::size_t k = 0; k < stiff.results.traj_control.size(); ++k)
      EXPECT_NEAR(stiff.results.traj_control[k], reference.results.traj_control[k],
                  1e-6 * (1 + std::abs(reference.results.traj_control[k])));
  };
  compare({{"model", "scara"},
           {"params", {{"m4", 0.8}}},
           {"control", {{"params", {{"m4", 0.5}}}}},
           {"integrator", {{"t_end", 1.0}}}});
  compare({{"model", "four_bar"},
           {"stabilization", {{"projection", true}}},
           {"integrator", {{"t_end", 1.0}}}});
}

std::string refusal(const json& spec) {
  try {
    parse_run_spec(spec);
  } catch (const SpecError& e) {
    return e.field() + ": " + e.reason();
  }
  return "accepted";
}

TEST(StiffRun, TheSpecRefusesWhatTheMethodCannotDo) {
  EXPECT_EQ(
      refusal(
          {{"model", "scara"}, {"integrator", {{"method", "rosenbrock"}}}, {"gpu_path", "warp"}}),
      "gpu_path: the rosenbrock method takes the fused GPU path: give auto or fused");
  const std::string degree =
      refusal({{"model", "flexible_joint"},
               {"integrator", {{"method", "rosenbrock"}}},
               {"control", {{"actuation", {"m1ang", "m2ang"}}, {"relative_degree", 3}}}});
  EXPECT_EQ(degree.rfind("integrator.method: rows of a higher relative degree", 0), 0) << degree;
  EXPECT_EQ(refusal({{"model", "scara"}, {"integrator", {{"method", "rosenbrock"}, {"dt", -1}}}}),
            "integrator.dt: rosenbrock first trial step must be >= 0 (0: automatic), got -1");
  const std::string unknown = refusal({{"model", "scara"}, {"integrator", {{"method", "radau"}}}});
  EXPECT_NE(unknown.find("rosenbrock"), std::string::npos) << unknown;
}

}  // namespace
}  // namespace ukes
