// Run-spec parsing: defaults of the docs/RUNSPEC.md contract, batches built from params / systems /
// sweeps, and every invalid field reported as a SpecError naming that field.
#include "service/runspec/run_spec.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <string>

#include "service/runspec/printable_text.hpp"
#include "service/runspec/spec_text.hpp"
#include "tests/support/example_models.hpp"

namespace ukes {
namespace {

using json = nlohmann::json;

constexpr double kTwoPi = 6.283185307179586;

RunSpec parse(const char* text, const ParseOptions& options = {}) {
  return parse_run_spec(parse_spec_text(text), options);
}

// The field a spec is rejected for ("" when it is accepted).
std::string rejected_field(const std::string& text, const ParseOptions& options = {}) {
  try {
    parse_run_spec(parse_spec_text(text), options);
  } catch (const LimitError& e) {
    return "LIMIT " + e.field();
  } catch (const SpecError& e) {
    EXPECT_EQ(std::string(e.what()), e.field() + ": " + e.reason());
    EXPECT_FALSE(e.reason().empty());
    return e.field();
  }
  return "";
}

// ------------------------------------------------------------------ defaults

TEST(RunSpecDefaults, DuffingMinimalSpec) {
  const RunSpec s = parse(R"({"model": "duffing"})");
  ASSERT_NE(s.model, nullptr);
  EXPECT_EQ(s.model->name, "duffing");
  // One system at the model's defaults (docs/MODELS.md sec. 4).
  ASSERT_EQ(s.batch.count, 1);
  EXPECT_EQ(s.batch.model, s.model);
  Batch b = s.batch;
  EXPECT_EQ(b.param(s.model->param_index("m1"), 0), 2.0);
  EXPECT_EQ(b.param(s.model->param_index("k2"), 0), 12.0);
  EXPECT_EQ(b.param(s.model->param_index("omega"), 0), kTwoPi);
  EXPECT_EQ(b.q(0, 0), 1.0);
  EXPECT_EQ(b.q(1, 0), 1.0);
  EXPECT_DOUBLE_EQ(b.qd(0, 0), 1.0 * kTwoPi + 2.0);  // x1d = A0 omega + 2
  EXPECT_EQ(b.qd(1, 0), 2.0);
  // Integrator defaults (docs/RUNSPEC.md): dopri5, t0 = 0, t_end = the model's (5), rtol = atol =
  // 1e-9.
  const EnsembleSettings& e = s.settings;
  EXPECT_EQ(e.method, Method::kDopri5);
  EXPECT_EQ(e.t0, 0.0);
  EXPECT_EQ(e.t_end, 5.0);
  EXPECT_EQ(e.dt, 0.0);  // dopri5: automatic first step
  EXPECT_EQ(e.rtol, 1e-9);
  EXPECT_EQ(e.atol, 1e-9);
  EXPECT_EQ(e.max_steps, 1000000);
  EXPECT_EQ(e.alpha, 0.0);  // duffing has no default stabilization
  EXPECT_EQ(e.beta, 0.0);
  EXPECT_FALSE(e.projection);
  EXPECT_FALSE(e.assemble);
  EXPECT_EQ(e.precision, Precision::kFp64);
  EXPECT_EQ(e.samples, 101);
  EXPECT_EQ(s.device, Device::kAuto);
  EXPECT_EQ(s.device_resolved, Device::kCpu);
  EXPECT_EQ(s.output.samples, 101);
  EXPECT_EQ(s.output.trajectories, TrajectoryMode::kNone);
  EXPECT_TRUE(s.output.trajectory_ids.empty());
  EXPECT_TRUE(s.output.q && s.output.qd && s.output.residual && s.output.force);
  EXPECT_FALSE(s.sweep.has_value());
  EXPECT_FALSE(s.explicit_systems);
}

TEST(RunSpecDefaults, StabilizationAndEndTimeComeFromTheModel) {
  // docs/MODELS.md: scara alpha = 30, beta = 225, t_end = 10; swarm alpha = 5, t_end = 20;
  // flexible_joint alpha = 2, t_end = 10.
  const RunSpec scara = parse(R"({"model": "scara"})");
  EXPECT_EQ(scara.settings.alpha, 30.0);
  EXPECT_EQ(scara.settings.beta, 225.0);
  EXPECT_EQ(scara.settings.t_end, 10.0);
  const RunSpec swarm = parse(R"({"model": "swarm"})");
  EXPECT_EQ(swarm.settings.alpha, 5.0);
  EXPECT_EQ(swarm.settings.beta, 0.0);
  EXPECT_EQ(swarm.settings.t_end, 20.0);
  const RunSpec fj = parse(R"({"model": "flexible_joint"})");
  EXPECT_EQ(fj.settings.alpha, 2.0);
  EXPECT_EQ(fj.settings.t_end, 10.0);
  // Given gains replace the model's.
  const RunSpec g = parse(R"({"model": "scara", "stabilization": {"alpha": 0.5, "beta": 200}})");
  EXPECT_EQ(g.settings.alpha, 0.5);
  EXPECT_EQ(g.settings.beta, 200.0);
}

TEST(RunSpecDefaults, Rk4StepDefaultsToAThousandthOfTheInterval) {
  const RunSpec s =
      parse(R"({"model": "duffing", "integrator": {"method": "rk4", "t0": 1, "t_end": 3}})");
  EXPECT_EQ(s.settings.method, Method::kRk4);
  EXPECT_EQ(s.settings.t0, 1.0);
  EXPECT_EQ(s.settings.t_end, 3.0);
  EXPECT_DOUBLE_EQ(s.settings.dt, 0.002);
  const RunSpec d = parse(R"({"model": "duffing", "integrator": {"method": "rk4", "dt": 0.01}})");
  EXPECT_EQ(d.settings.dt, 0.01);
}

TEST(RunSpecDefaults, EveryFieldGiven) {
  const RunSpec s = parse(R"({
    "model": "duffing", "description": "all fields",
    "params": {"k1": 11.0},
    "assemble": true,
    "integrator": {"method": "dopri5", "t0": 0.5, "t_end": 4.0, "dt": 1e-3,
                   "rtol": 1e-10, "atol": 1e-11, "max_steps": 1e6},
    "stabilization": {"alpha": 3, "beta": 2, "projection": true,
                      "inconsistency_tol": 1e-5, "projection_tol": 1e-12},
    "precision": "fp32", "device": "cpu",
    "output": {"samples": 7, "trajectories": "all", "fields": ["qd", "force"]}})");
  const EnsembleSettings& e = s.settings;
  EXPECT_EQ(s.batch.params[static_cast<std::size_t>(s.model->param_index("k1"))], 11.0);
  EXPECT_TRUE(e.assemble);
  EXPECT_EQ(e.t0, 0.5);
  EXPECT_EQ(e.t_end, 4.0);
  EXPECT_EQ(e.dt, 1e-3);
  EXPECT_EQ(e.rtol, 1e-10);
  EXPECT_EQ(e.atol, 1e-11);
  EXPECT_EQ(e.max_steps, 1000000);  // an integral floating-point number is accepted
  EXPECT_EQ(e.alpha, 3.0);
  EXPECT_EQ(e.beta, 2.0);
  EXPECT_TRUE(e.projection);
  EXPECT_EQ(e.inconsistency_tol, 1e-5);
  EXPECT_EQ(e.projection_tol, 1e-12);
  EXPECT_EQ(e.precision, Precision::kFp32);
  EXPECT_EQ(s.device, Device::kCpu);
  EXPECT_EQ(e.samples, 7);
  EXPECT_EQ(s.output.trajectories, TrajectoryMode::kAll);
  EXPECT_EQ(s.output.trajectory_ids, std::vector<std::int32_t>{0});
  EXPECT_FALSE(s.output.q);
  EXPECT_TRUE(s.output.qd);
  EXPECT_FALSE(s.output.residual);
  EXPECT_TRUE(s.output.force);
}

// ------------------------------------------------------------------ batches

TEST(RunSpecBatch, SharedParamsReachTheDefaultInitialCondition) {
  // x1d(0) = A0 omega + 2 is evaluated at the overridden parameters.
  const RunSpec s = parse(R"({"model": "duffing", "params": {"omega": 3.0, "A0": 0.5}})");
  Batch b = s.batch;
  EXPECT_EQ(b.param(s.model->param_index("omega"), 0), 3.0);
  EXPECT_DOUBLE_EQ(b.qd(0, 0), 0.5 * 3.0 + 2.0);
  EXPECT_EQ(s.params[static_cast<std::size_t>(s.model->param_index("A0"))], 0.5);
}

TEST(RunSpecBatch, ExplicitSystems) {
  const RunSpec s = parse(R"({"model": "duffing", "params": {"k1": 10.5},
    "systems": [
      {"params": {"m1": 2.1}, "q0": [1.0, 1.0], "qd0": [8.283185307179586, 2.0]},
      {"params": {"A0": 2.0}},
      {"q0": [0.5, 0.25]}
    ],
    "output": {"trajectories": [2, 0]}})");
  Batch b = s.batch;
  ASSERT_EQ(b.count, 3);
  EXPECT_TRUE(s.explicit_systems);
  const int m1 = s.model->param_index("m1"), k1 = s.model->param_index("k1");
  const int a0 = s.model->param_index("A0");
  EXPECT_EQ(b.param(m1, 0), 2.1);
  EXPECT_EQ(b.param(m1, 1), 2.0);
  EXPECT_EQ(b.param(m1, 2), 2.0);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(b.param(k1, i), 10.5);  // shared override
  EXPECT_EQ(b.param(a0, 1), 2.0);
  EXPECT_EQ(b.qd(0, 0), 8.283185307179586);
  // System 1: default IC at A0 = 2.
  EXPECT_EQ(b.q(0, 1), 1.0);
  EXPECT_DOUBLE_EQ(b.qd(0, 1), 2.0 * kTwoPi + 2.0);
  EXPECT_EQ(b.qd(1, 1), 2.0);
  // System 2: given q0, default qd0.
  EXPECT_EQ(b.q(0, 2), 0.5);
  EXPECT_EQ(b.q(1, 2), 0.25);
  EXPECT_DOUBLE_EQ(b.qd(0, 2), kTwoPi + 2.0);
  EXPECT_EQ(s.output.trajectories, TrajectoryMode::kList);
  EXPECT_EQ(s.output.trajectory_ids, (std::vector<std::int32_t>{2, 0}));
}

TEST(RunSpecBatch, SweepFillsEverySystem) {
  const RunSpec s = parse(R"({"model": "duffing", "params": {"k1": 10.0},
    "sweep": {"count": 200, "seed": 7, "sampler": "random",
              "vary": {"q0[0]": {"normal": [1.0, 0.01]}, "params.m1": {"uniform": [1.5, 2.5]},
                       "params.A0": {"values": [0.5, 1.5]}}},
    "output": {"trajectories": "first:500"}})");
  ASSERT_TRUE(s.sweep.has_value());
  Batch b = s.batch;
  ASSERT_EQ(b.count, 200);
  EXPECT_EQ(s.sweep->seed, 7u);
  EXPECT_EQ(s.sweep->sampler, Sampler::kRandom);
  // Dimension d is the d-th target name in sorted order.
  ASSERT_EQ(s.sweep->dimensions.size(), 3u);
  EXPECT_EQ(s.sweep->dimensions[0].name, "params.A0");
  EXPECT_EQ(s.sweep->dimensions[1].name, "params.m1");
  EXPECT_EQ(s.sweep->dimensions[2].name, "q0[0]");
  EXPECT_EQ(s.sweep->dimensions[2].target.kind, SweepTarget::Kind::kQ0);
  EXPECT_EQ(s.sweep->dimensions[2].target.index, 0);
  const int m1 = s.model->param_index("m1"), a0 = s.model->param_index("A0");
  const int omega = s.model->param_index("omega");
  std::set<double> a0_values;
  double q_mean = 0;
  for (int i = 0; i < b.count; ++i) {
    // Each swept value is the sampler's value for (seed, sampler, i, count, d).
    for (int d = 0; d < 3; ++d) {
      const SweepDimension& dim = s.sweep->dimensions[static_cast<std::size_t>(d)];
      const double expect =
          distribution_value(dim.distribution, sweep_unit_sample(Sampler::kRandom, 7, i, 200, d));
      const double got = d == 0 ? b.param(a0, i) : d == 1 ? b.param(m1, i) : b.q(0, i);
      EXPECT_EQ(got, expect) << "system " << i << " dimension " << d;
    }
    EXPECT_GE(b.param(m1, i), 1.5);
    EXPECT_LE(b.param(m1, i), 2.5);
    a0_values.insert(b.param(a0, i));
    q_mean += b.q(0, i) / b.count;
    EXPECT_EQ(b.param(s.model->param_index("k1"), i), 10.0);
    // Components not swept: the default IC at this system's parameters (x1d = A0 omega + 2).
    EXPECT_EQ(b.q(1, i), 1.0);
    EXPECT_DOUBLE_EQ(b.qd(0, i), b.param(a0, i) * b.param(omega, i) + 2.0);
    EXPECT_EQ(b.qd(1, i), 2.0);
  }
  EXPECT_EQ(a0_values, (std::set<double>{0.5, 1.5}));
  EXPECT_NEAR(q_mean, 1.0, 5 * 0.01 / std::sqrt(200.0));
  // first:N with N above the count records every system.
  EXPECT_EQ(s.output.trajectories, TrajectoryMode::kFirst);
  ASSERT_EQ(s.output.trajectory_ids.size(), 200u);
  EXPECT_EQ(s.output.trajectory_ids[199], 199);
}

TEST(RunSpecBatch, SweepSamplersAndDefaults) {
  const RunSpec lhs = parse(R"({"model": "duffing",
    "sweep": {"count": 10, "sampler": "lhs", "vary": {"qd0[1]": {"lognormal": [0, 0.1]}}}})");
  EXPECT_EQ(lhs.sweep->sampler, Sampler::kLhs);
  EXPECT_EQ(lhs.sweep->seed, 0u);
  EXPECT_EQ(lhs.sweep->dimensions[0].target.kind, SweepTarget::Kind::kQd0);
  Batch b = lhs.batch;
  for (int i = 0; i < 10; ++i) {
    EXPECT_GT(b.qd(1, i), 0.0);  // lognormal
    EXPECT_DOUBLE_EQ(b.qd(0, i), kTwoPi + 2.0);
  }
  const RunSpec sobol = parse(R"({"model": "duffing",
    "sweep": {"count": 4, "seed": 18446744073709551615, "sampler": "sobol"}})");
  EXPECT_EQ(sobol.sweep->sampler, Sampler::kSobol);
  EXPECT_EQ(sobol.sweep->seed, std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(sobol.batch.count, 4);  // no dimensions: copies of the default system
}

TEST(RunSpecBatch, StructuralParameterAtItsOwnValueIsAccepted) {
  const RunSpec s = parse(R"({"model": "swarm", "params": {"N": 5}})");
  EXPECT_EQ(s.model->n, 10);
}

TEST(RunSpecBatch, ExampleSpecsParse) {
  // The shipped examples stay valid (they are data for users).
  for (const char* name : {"duffing_sweep.json", "scara_montecarlo.json"}) {
    const std::string path = std::string(UKES_SOURCE_DIR) + "/client/examples/" + name;
    std::FILE* f = std::fopen(path.c_str(), "rb");
    ASSERT_NE(f, nullptr) << path;
    std::string text;
    char buf[4096];
    std::size_t got;
    while ((got = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, got);
    std::fclose(f);
    EXPECT_NO_THROW(parse_run_spec(parse_spec_text(text))) << name;
  }
}

// ------------------------------------------------------------------ invalid specs

struct BadSpec {
  const char* spec;
  const char* field;
};

class RunSpecInvalid : public ::testing::TestWithParam<BadSpec> {};

TEST_P(RunSpecInvalid, NamesTheField) {
  EXPECT_EQ(rejected_field(GetParam().spec), GetParam().field) << GetParam().spec;
}

INSTANTIATE_TEST_SUITE_P(
    AllFields, RunSpecInvalid,
    ::testing::Values(
        // the document and unknown keys anywhere
        BadSpec{R"([1, 2])", "spec"}, BadSpec{R"({"model": "duffing", "modle": 1})", "modle"},
        BadSpec{R"({"model": "duffing", "integrator": {"rtoll": 1e-9}})", "integrator.rtoll"},
        BadSpec{R"({"model": "duffing", "stabilization": {"gamma": 1}})", "stabilization.gamma"},
        BadSpec{R"({"model": "duffing", "output": {"sample": 3}})", "output.sample"},
        BadSpec{R"({"model": "duffing", "sweep": {"count": 2, "seeds": 1}})", "sweep.seeds"},
        BadSpec{R"({"model": "duffing", "systems": [{}, {"q": [1, 1]}]})", "systems[1].q"},
        // model
        BadSpec{R"({"params": {"k1": 1}})", "model"}, BadSpec{R"({"model": "dufing"})", "model"},
        BadSpec{R"({"model": 4})", "model"},
        // parameters
        BadSpec{R"({"model": "duffing", "params": {"k9": 1}})", "params.k9"},
        BadSpec{R"({"model": "duffing", "params": {"k1": "10"}})", "params.k1"},
        BadSpec{R"({"model": "duffing", "params": [1]})", "params"},
        BadSpec{R"({"model": "swarm", "params": {"N": 6}})", "params.N"},
        BadSpec{R"({"model": "swarm", "systems": [{}, {"params": {"N": 4}}]})",
                "systems[1].params.N"},
        BadSpec{R"({"model": "duffing", "systems": [{"params": {"mass": 1}}]})",
                "systems[0].params.mass"},
        // systems
        BadSpec{R"({"model": "duffing", "systems": []})", "systems"},
        BadSpec{R"({"model": "duffing", "systems": [{}, {}, {}, {"q0": [1, 2, 3]}]})",
                "systems[3].q0"},
        BadSpec{R"({"model": "duffing", "systems": [{"qd0": [1]}]})", "systems[0].qd0"},
        BadSpec{R"({"model": "duffing", "systems": [{"qd0": [1, "x"]}]})", "systems[0].qd0[1]"},
        BadSpec{R"({"model": "duffing", "systems": [3]})", "systems[0]"},
        BadSpec{R"({"model": "duffing", "systems": [{}], "sweep": {"count": 1}})", "sweep"},
        // sweep
        BadSpec{R"({"model": "duffing", "sweep": {"seed": 1}})", "sweep.count"},
        BadSpec{R"({"model": "duffing", "sweep": {"count": 0}})", "sweep.count"},
        BadSpec{R"({"model": "duffing", "sweep": {"count": 2.5}})", "sweep.count"},
        BadSpec{R"({"model": "duffing", "sweep": {"count": 2, "seed": -1}})", "sweep.seed"},
        BadSpec{R"({"model": "duffing", "sweep": {"count": 2, "sampler": "halton"}})",
                "sweep.sampler"},
        BadSpec{
            R"({"model": "duffing", "sweep": {"count": 2, "vary": {"q0[7]": {"uniform": [0, 1]}}}})",
            "sweep.vary.q0[7]"},
        BadSpec{
            R"({"model": "duffing", "sweep": {"count": 2, "vary": {"qd0[-1]": {"uniform": [0, 1]}}}})",
            "sweep.vary.qd0[-1]"},
        BadSpec{
            R"({"model": "duffing", "sweep": {"count": 2, "vary": {"q0[01]": {"uniform": [0, 1]}}}})",
            "sweep.vary.q0[01]"},
        BadSpec{
            R"({"model": "duffing", "sweep": {"count": 2, "vary": {"params.m9": {"uniform": [0, 1]}}}})",
            "sweep.vary.params.m9"},
        BadSpec{
            R"({"model": "duffing", "sweep": {"count": 2, "vary": {"m1": {"uniform": [0, 1]}}}})",
            "sweep.vary.m1"},
        BadSpec{
            R"({"model": "swarm", "sweep": {"count": 2, "vary": {"params.N": {"values": [5]}}}})",
            "sweep.vary.params.N"},
        BadSpec{
            R"({"model": "duffing", "sweep": {"count": 2, "vary": {"params.m1": {"uniform": [2.5, 1.5]}}}})",
            "sweep.vary.params.m1.uniform"},
        BadSpec{
            R"({"model": "duffing", "sweep": {"count": 2, "vary": {"params.m1": {"uniform": [1.5]}}}})",
            "sweep.vary.params.m1.uniform"},
        BadSpec{
            R"({"model": "duffing", "sweep": {"count": 2, "vary": {"params.m1": {"normal": [1, -0.1]}}}})",
            "sweep.vary.params.m1.normal"},
        BadSpec{
            R"({"model": "duffing", "sweep": {"count": 2, "vary": {"params.m1": {"lognormal": [0, -1]}}}})",
            "sweep.vary.params.m1.lognormal"},
        BadSpec{
            R"({"model": "duffing", "sweep": {"count": 2, "vary": {"params.m1": {"values": []}}}})",
            "sweep.vary.params.m1.values"},
        BadSpec{
            R"({"model": "duffing", "sweep": {"count": 2, "vary": {"params.m1": {"values": [1, null]}}}})",
            "sweep.vary.params.m1.values[1]"},
        BadSpec{
            R"({"model": "duffing", "sweep": {"count": 2, "vary": {"params.m1": {"beta": [1, 2]}}}})",
            "sweep.vary.params.m1.beta"},
        BadSpec{R"({"model": "duffing", "sweep": {"count": 2, "vary": {"params.m1": {}}}})",
                "sweep.vary.params.m1"},
        BadSpec{
            R"({"model": "duffing", "sweep": {"count": 2, "vary": {"params.m1": {"uniform": [1, 2], "normal": [1, 2]}}}})",
            "sweep.vary.params.m1"},
        // assemble
        BadSpec{R"({"model": "duffing", "assemble": 1})", "assemble"},
        // integrator
        BadSpec{R"({"model": "duffing", "integrator": {"method": "euler"}})", "integrator.method"},
        BadSpec{R"({"model": "duffing", "integrator": {"t0": 5}})", "integrator.t_end"},
        BadSpec{R"({"model": "duffing", "integrator": {"t0": 1, "t_end": 0.5}})",
                "integrator.t_end"},
        BadSpec{R"({"model": "duffing", "integrator": {"rtol": 0}})", "integrator.rtol"},
        BadSpec{R"({"model": "duffing", "integrator": {"atol": -1e-9}})", "integrator.atol"},
        BadSpec{R"({"model": "duffing", "integrator": {"method": "rk4", "dt": 0}})",
                "integrator.dt"},
        BadSpec{R"({"model": "duffing", "integrator": {"method": "rk4", "dt": -0.1}})",
                "integrator.dt"},
        BadSpec{R"({"model": "duffing", "integrator": {"dt": -0.1}})", "integrator.dt"},
        BadSpec{R"({"model": "duffing", "integrator": {"max_steps": 0}})", "integrator.max_steps"},
        BadSpec{R"({"model": "duffing", "integrator": {"max_steps": 10.5}})",
                "integrator.max_steps"},
        BadSpec{R"({"model": "duffing", "integrator": {"t_end": "5"}})", "integrator.t_end"},
        BadSpec{R"({"model": "duffing", "integrator": 5})", "integrator"},
        // stabilization
        BadSpec{R"({"model": "duffing", "stabilization": {"alpha": -1}})", "stabilization.alpha"},
        BadSpec{R"({"model": "duffing", "stabilization": {"beta": -1}})", "stabilization.beta"},
        BadSpec{R"({"model": "duffing", "stabilization": {"projection": "yes"}})",
                "stabilization.projection"},
        BadSpec{R"({"model": "duffing", "stabilization": {"inconsistency_tol": 0}})",
                "stabilization.inconsistency_tol"},
        // precision and device
        BadSpec{R"({"model": "duffing", "precision": "fp16"})", "precision"},
        BadSpec{R"({"model": "duffing", "device": "tpu"})", "device"},
        BadSpec{R"({"model": "duffing", "device": "gpu"})", "device"},
        // output
        BadSpec{R"({"model": "duffing", "output": {"samples": 1}})", "output.samples"},
        BadSpec{R"({"model": "duffing", "output": {"samples": "many"}})", "output.samples"},
        BadSpec{R"({"model": "duffing", "output": {"trajectories": "some"}})",
                "output.trajectories"},
        BadSpec{R"({"model": "duffing", "output": {"trajectories": "first:x"}})",
                "output.trajectories"},
        BadSpec{R"({"model": "duffing", "output": {"trajectories": [0, 1]}})",
                "output.trajectories[1]"},
        BadSpec{R"({"model": "duffing", "systems": [{}, {}], "output": {"trajectories": [1, 1]}})",
                "output.trajectories[1]"},
        BadSpec{R"({"model": "duffing", "sweep": {"count": 4}, "output": {"trajectories": [-1]}})",
                "output.trajectories[0]"},
        BadSpec{R"({"model": "duffing", "output": {"fields": ["q", "velocity"]}})",
                "output.fields[1]"},
        BadSpec{R"({"model": "duffing", "output": {"fields": ["q", "q"]}})", "output.fields[1]"},
        BadSpec{R"({"model": "duffing", "output": {"fields": []}})", "output.fields"}));

TEST(RunSpecInvalidText, SyntaxErrorsAndDuplicateKeys) {
  EXPECT_EQ(rejected_field(R"({"model": "duffing",)"), "spec");
  EXPECT_EQ(rejected_field(R"({"model": "duffing", "model": "spiral"})"), "model");
  EXPECT_EQ(rejected_field(R"({"model": "duffing", "integrator": {"rtol": 1, "rtol": 2}})"),
            "integrator.rtol");
  EXPECT_EQ(
      rejected_field(R"({"model": "duffing", "systems": [{}, {"params": {"m1": 1, "m1": 2}}]})"),
      "systems[1].params.m1");
  EXPECT_EQ(rejected_field(R"({"model": "duffing", "systems": [{"q0": [1, 2]}, {"q0": [1, 2],)"
                           R"( "q0": [3, 4]}]})"),
            "systems[1].q0");
}

// The rest of a document after a NUL byte used to be ignored (nlohmann stops there), so
// `{"model": "duffing"}\0garbage` ran.
TEST(RunSpecInvalidText, NulBytesAreRefused) {
  const std::string text = std::string(R"({"model": "duffing"})") + '\0' + "garbage";
  EXPECT_EQ(rejected_field(text), "spec");
  try {
    parse_spec_text(text);
  } catch (const SpecError& e) {
    EXPECT_NE(e.reason().find("offset 20"), std::string::npos) << e.reason();
  }
}

// Numbers beyond double's range are the value's error, named by its field.
TEST(RunSpecInvalidText, OverflowingNumbersNameTheirField) {
  EXPECT_EQ(rejected_field(R"({"model": "duffing", "integrator": {"t_end": 1e999}})"),
            "integrator.t_end");
  EXPECT_EQ(rejected_field(R"({"model": "duffing", "systems": [{}, {"q0": [1, -1e400]}]})"),
            "systems[1].q0[1]");
}

// t_end - t0 overflowed to infinity and every sample time but the ends was NaN.
TEST(RunSpecInvalidNumbers, AnIntervalBeyondDoublesRangeIsRefused) {
  EXPECT_EQ(rejected_field(R"({"model": "duffing", "integrator": {"t0": -1e308, "t_end": 1e308}})"),
            "integrator.t_end");
  EXPECT_EQ(rejected_field(R"({"model": "duffing", "integrator": {"t0": -1e307, "t_end": 1e307}})"),
            "");
}

TEST(RunSpecInvalidNumbers, NonFiniteValuesAreRejected) {
  // JSON text cannot carry NaN or infinity, but a programmatically built document (a server
  // request) can.
  json j = {{"model", "duffing"}, {"integrator", {{"rtol", std::nan("")}}}};
  EXPECT_THROW(
      {
        try {
          parse_run_spec(j);
        } catch (const SpecError& e) {
          EXPECT_EQ(e.field(), "integrator.rtol");
          throw;
        }
      },
      SpecError);
  j = {{"model", "duffing"}, {"params", {{"m1", std::numeric_limits<double>::infinity()}}}};
  EXPECT_THROW(parse_run_spec(j), SpecError);
  j = {{"model", "duffing"},
       {"systems", {{{"q0", {1.0, -std::numeric_limits<double>::infinity()}}}}}};
  try {
    parse_run_spec(j);
    ADD_FAILURE() << "accepted an infinite q0";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.field(), "systems[0].q0[1]");
  }
}

TEST(RunSpecGpu, GpuIsAcceptedOnlyWhenABackendExists) {
  ParseOptions with_gpu;
  with_gpu.gpu_available = true;
  EXPECT_EQ(parse(R"({"model": "duffing", "device": "gpu"})", with_gpu).device, Device::kGpu);
  EXPECT_EQ(rejected_field(R"({"model": "duffing", "device": "gpu"})"), "device");
}

TEST(RunSpecGpu, AutoResolvesToTheGpuOnlyWhereOneIsUsable) {
  ParseOptions with_gpu;
  with_gpu.gpu_available = true;
  EXPECT_EQ(parse(R"({"model": "duffing"})", with_gpu).device_resolved, Device::kGpu);
  EXPECT_EQ(parse(R"({"model": "duffing", "device": "cpu"})", with_gpu).device_resolved,
            Device::kCpu);
  EXPECT_EQ(parse(R"({"model": "duffing"})").device_resolved, Device::kCpu);
}

TEST(RunSpecGpu, TheRefusalCarriesTheReason) {
  ParseOptions without;
  without.gpu_unavailable_reason = "no CUDA device found";
  try {
    parse(R"({"model": "duffing", "device": "gpu"})", without);
    ADD_FAILURE() << "accepted";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.field(), "device");
    EXPECT_NE(std::string(e.what()).find("no CUDA device found"), std::string::npos) << e.what();
  }
}

TEST(RunSpecGpu, GpuPathIsAutoFusedWarpOrCusolver) {
  EXPECT_EQ(parse(R"({"model": "duffing"})").settings.gpu_path, GpuPath::kAuto);
  EXPECT_EQ(parse(R"({"model": "duffing", "gpu_path": "fused"})").settings.gpu_path,
            GpuPath::kFused);
  EXPECT_EQ(parse(R"({"model": "duffing", "gpu_path": "cusolver"})").settings.gpu_path,
            GpuPath::kCusolver);
  EXPECT_EQ(parse(R"({"model": "duffing", "gpu_path": "warp"})").settings.gpu_path, GpuPath::kWarp);
  EXPECT_EQ(rejected_field(R"({"model": "duffing", "gpu_path": "block"})"), "gpu_path");
  EXPECT_EQ(rejected_field(R"({"model": "duffing", "gpu_path": 1})"), "gpu_path");
}

TEST(RunSpecGpu, DeviceIdsNameGpusOfThisMachineOnce) {
  ParseOptions two;
  two.gpu_available = true;
  two.gpu_devices = 2;
  EXPECT_TRUE(parse(R"({"model": "duffing"})", two).device_ids.empty());  // every usable GPU
  EXPECT_EQ(parse(R"({"model": "duffing", "device_ids": [1, 0]})", two).device_ids,
            (std::vector<int>{1, 0}));
  EXPECT_EQ(rejected_field(R"({"model": "duffing", "device_ids": [0, 2]})", two), "device_ids[1]");
  EXPECT_EQ(rejected_field(R"({"model": "duffing", "device_ids": [1, 1]})", two), "device_ids[1]");
  EXPECT_EQ(rejected_field(R"({"model": "duffing", "device_ids": [-1]})", two), "device_ids[0]");
  EXPECT_EQ(rejected_field(R"({"model": "duffing", "device_ids": [0.5]})", two), "device_ids[0]");
  EXPECT_EQ(rejected_field(R"({"model": "duffing", "device_ids": []})", two), "device_ids");
  EXPECT_EQ(rejected_field(R"({"model": "duffing", "device_ids": 0})", two), "device_ids");
  EXPECT_EQ(rejected_field(R"({"model": "duffing", "device": "cpu", "device_ids": [0]})", two),
            "device_ids");
  // An auto run that lands on the CPU has no GPUs to check them against.
  EXPECT_EQ(parse(R"({"model": "duffing", "device_ids": [5]})").device_resolved, Device::kCpu);
}

// A user model of 20 free particles on a line: bucket 32, which has no GPU code.
std::string twenty_coordinate_spec(const char* device) {
  std::string coordinates, mass, force;
  for (int i = 0; i < 20; ++i) {
    const std::string sep = i == 0 ? "" : ", ";
    coordinates += sep + "\"x" + std::to_string(i) + "\"";
    mass += sep + "1";
    force += sep + "0";
  }
  return R"({"device": ")" + std::string(device) + R"(", "model": {"name": "line20",
    "coordinates": [)" +
         coordinates + R"(], "mass": {"diagonal": [)" + mass + R"(]},
    "force": [)" +
         force + "]}}";
}

TEST(RunSpecGpu, UserModelsPastTheLargestGpuBucketRunOnTheCpu) {
  ParseOptions gpu;
  gpu.gpu_available = true;
  const RunSpec automatic = parse_run_spec(parse_spec_text(twenty_coordinate_spec("auto")), gpu);
  EXPECT_EQ(automatic.model->user->bucket, 32);
  EXPECT_EQ(automatic.device_resolved, Device::kCpu);
  EXPECT_EQ(automatic.cpu_reason,
            "user models with more than 16 coordinates or constraint rows run on the CPU only");
  EXPECT_EQ(rejected_field(twenty_coordinate_spec("gpu"), gpu), "device");
  // A catalogue model and a small user model still take the GPU.
  EXPECT_EQ(parse(R"({"model": "duffing"})", gpu).device_resolved, Device::kGpu);
  const std::string small = R"({"model": )" + example_definition_text("duffing") + "}";
  EXPECT_EQ(parse_run_spec(parse_spec_text(small), gpu).device_resolved, Device::kGpu);
}

TEST(RunSpecGpu, UserModelsTakeTheFusedPathOnly) {
  const std::string model = example_definition_text("duffing");
  const auto spec = [&](const char* path) {
    return R"({"model": )" + model + R"(, "gpu_path": ")" + path + R"("})";
  };
  EXPECT_EQ(rejected_field(spec("auto")), "");
  EXPECT_EQ(rejected_field(spec("fused")), "");
  EXPECT_EQ(rejected_field(spec("warp")), "gpu_path");
  EXPECT_EQ(rejected_field(spec("cusolver")), "gpu_path");
}

// ------------------------------------------------------------------ limits

TEST(RunSpecLimits, ViolatedLimitsAreReportedDistinctly) {
  ParseOptions o;
  o.limits.max_systems = 10;
  o.limits.max_samples = 50;
  o.limits.max_trajectory_bytes = 6000;
  EXPECT_EQ(rejected_field(
                R"({"model": "duffing", "sweep": {"count": 10}, "output": {"samples": 50}})", o),
            "");
  EXPECT_EQ(rejected_field(R"({"model": "duffing", "sweep": {"count": 11}})", o),
            "LIMIT sweep.count");
  EXPECT_EQ(
      rejected_field(R"({"model": "duffing", "systems": [{},{},{},{},{},{},{},{},{},{},{}]})", o),
      "LIMIT systems");
  EXPECT_EQ(rejected_field(R"({"model": "duffing", "output": {"samples": 50}})", o), "");
  EXPECT_EQ(rejected_field(R"({"model": "duffing", "output": {"samples": 51}})", o),
            "LIMIT output.samples");
  // duffing: n = 2, 2 residual slots -> q, qd, force, control and residual: 10 doubles = 80 bytes
  // per sample and system.
  EXPECT_EQ(trajectory_bytes(*find_model("duffing"), 3, 50), 3 * 50 * 80);
  EXPECT_EQ(rejected_field(R"({"model": "duffing", "sweep": {"count": 3},
                               "output": {"samples": 50, "trajectories": "all"}})",
                           o),
            "LIMIT output.trajectories");
  EXPECT_EQ(rejected_field(R"({"model": "duffing", "sweep": {"count": 3},
                               "output": {"samples": 50, "trajectories": "first:1"}})",
                           o),
            "");
  EXPECT_EQ(rejected_field(R"({"model": "duffing", "sweep": {"count": 3},
                               "output": {"samples": 50, "trajectories": [0, 2]}})",
                           o),
            "LIMIT output.trajectories");
  EXPECT_EQ(rejected_field(R"({"model": "duffing", "sweep": {"count": 3},
                               "output": {"samples": 50, "trajectories": "first:3"}})",
                           o),
            "LIMIT output.trajectories");
  // Invalid fields are reported as such even when a limit is also exceeded elsewhere.
  EXPECT_EQ(rejected_field(R"({"model": "duffing", "sweep": {"count": 11},
                               "integrator": {"rtol": -1}})",
                           o),
            "integrator.rtol");
  // The default limits are sane: a million systems pass, ten billion do not.
  EXPECT_EQ(rejected_field(R"({"model": "duffing", "sweep": {"count": 10000000000}})"),
            "LIMIT sweep.count");
  const SpecLimits d;
  EXPECT_GE(d.max_systems, 1000000);
  EXPECT_LE(d.max_systems, std::numeric_limits<std::int32_t>::max());
}

// The server builds a job's inputs a slice at a time: every slice must hold exactly what the
// whole batch holds for those systems, for explicit systems and for every sampler.
TEST(RunSpecBatch, SlicesEqualTheWholeBatch) {
  const char* specs[] = {
      R"({"model": "scara", "sweep": {"count": 97, "seed": 5, "sampler": "lhs",
          "vary": {"params.m4": {"uniform": [0.1, 2]}, "q0[1]": {"normal": [0.5, 0.1]}}}})",
      R"({"model": "duffing", "sweep": {"count": 50, "sampler": "sobol",
          "vary": {"params.m1": {"uniform": [1, 2]}, "qd0[0]": {"values": [0, 1, 2]}}}})",
      R"({"model": "duffing", "systems": [{}, {"params": {"m1": 3}}, {"q0": [0.5, 0.25]},
          {"qd0": [1, 2]}, {"params": {"k1": 2}}]})",
      R"({"model": "pendulum_polar", "params": {"L": 2}})",
  };
  for (const char* text : specs) {
    SCOPED_TRACE(text);
    const RunSpec whole = parse(text);
    ParseOptions lazy;
    lazy.build_batch = false;
    const RunSpec spec = parse_run_spec(parse_spec_text(text), lazy);
    ASSERT_EQ(spec.batch.count, whole.batch.count);
    const int count = whole.batch.count;
    for (int first = 0; first < count; first += 7) {
      const int n = std::min(7, count - first);
      const Batch part = batch_slice(spec, first, n);
      ASSERT_EQ(part.count, n);
      for (std::size_t k = 0; k < whole.model->params.size(); ++k)
        for (int i = 0; i < n; ++i)
          EXPECT_EQ(part.params[k * n + i], whole.batch.params[k * count + first + i]);
      for (int j = 0; j < whole.model->n; ++j)
        for (int i = 0; i < n; ++i) {
          EXPECT_EQ(part.q0[j * n + i], whole.batch.q0[j * count + first + i]);
          EXPECT_EQ(part.qd0[j * n + i], whole.batch.qd0[j * count + first + i]);
        }
    }
  }
}

TEST(PrintableText, EscapesEverythingOutsidePrintableAscii) {
  EXPECT_EQ(printable_text("params.m1", 64), "params.m1");
  EXPECT_EQ(printable_text("m\xc3\xb6"
                           "del",
                           64),
            R"(m\xc3\xb6del)");
  EXPECT_EQ(printable_text(std::string("a\0\t\n\x7f\\b", 7), 64), R"(a\x00\x09\x0a\x7f\\b)");
  std::string all;
  for (int c = 0; c < 256; ++c) all += static_cast<char>(c);
  for (const char c : printable_text(all, 4096)) EXPECT_TRUE(c >= 0x20 && c <= 0x7e) << int(c);
}

TEST(PrintableText, CutsAtTheLimitAndSaysHowMuchIsLeft) {
  EXPECT_EQ(printable_text("abcdef", 4), "abcd...(2 more bytes)");
  // An escape is never cut in half.
  EXPECT_EQ(printable_text("ab\xff", 5), R"(ab...(1 more bytes))");
  EXPECT_LE(printable_text(std::string(1 << 20, '\x01'), 100).size(), 132u);
}

TEST(PrintableText, SpecErrorsKeepOnlyPrintableBoundedText) {
  const SpecError e(std::string(10000, '\xe4'), std::string(10000, '\n'));
  EXPECT_LE(e.field().size(), kMaxQuotedFieldBytes + 32);
  EXPECT_LE(e.reason().size(), kMaxQuotedReasonBytes + 32);
  EXPECT_EQ(std::string(e.what()), e.field() + ": " + e.reason());
  EXPECT_EQ(rejected_field(R"({"model": "duffing", "\u00e9": 1})"), R"(\xc3\xa9)");
}

}  // namespace
}  // namespace ukes
