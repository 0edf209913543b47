// The CPU backend's SIMD lanes (kernels/backend/cpu/simd/, docs/CPU_LANES.md) against the
// per-system path: every catalogue model, RK4 and DOPRI5, on every lane instruction set this CPU
// has; results independent of threads, of which systems share lanes and of whether their RK4
// steps are taken together; lanes the vector solve cannot finish handed to the scalar one; the
// choice of instruction set.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernels/backend/cpu/cpu_backend.hpp"
#include "kernels/backend/cpu/simd/lane_functions.hpp"
#include "kernels/backend/cpu/simd/simd_lanes.hpp"
#include "kernels/ensemble/ensemble.hpp"
#include "kernels/models/catalogue.hpp"
#include "kernels/uk/uk_solver.hpp"
#include "lanes/agreement.hpp"
#include "service/runspec/run_spec.hpp"
#include "support/identical_results.hpp"
#include "support/spec_run.hpp"

namespace ukes {
namespace {

std::vector<CpuIsa> lane_isas_here() {
  std::vector<CpuIsa> isas;
  for (const CpuIsa isa : {CpuIsa::kSse2, CpuIsa::kAvx2, CpuIsa::kAvx512})
    if (cpu_supports(isa)) isas.push_back(isa);
  return isas;
}

// The tests' runs: 0.2 s in steps of 1e-3 (DOPRI5 to 1e-9), 5 samples, the model's own gains.
template <class Model>
RunSettings<double> settings_for(Method method) {
  RunSettings<double> s;
  s.method = method;
  s.t_end = 0.2;
  s.dt = 1e-3;
  s.rtol = s.atol = 1e-9;
  s.samples = 5;
  s.dynamics.alpha = Model::kGains.alpha;
  s.dynamics.beta = Model::kGains.beta;
  return s;
}

template <class Model>
BatchResults run_on(CpuIsa isa, Method method, int first, int count, int threads) {
  const ModelInfo* model = find_model(Model::kName);
  const Batch batch = perturbed_batch(*model, first, count);
  const RunSettings<double> s = settings_for<Model>(method);
  BatchResults results;
  results.allocate(batch, s.samples, {0, 1, count - 1});
  run_batch_cpu<Model, double>(batch.view(), s, results.view(), threads, isa);
  return results;
}

// 37 systems: not a multiple of any lane width, so chunks end with idle lanes.
constexpr int kSystems = 37;

TEST(CpuLanes, EveryCatalogueModelAgreesWithThePerSystemPathOnRk4) {
  ASSERT_FALSE(lane_isas_here().empty()) << "an x86-64 CPU has SSE2 at least";
  for_each_model([]<class Model>() {
    const BatchResults scalar = run_on<Model>(CpuIsa::kScalar, Method::kRk4, 0, kSystems, 2);
    for (const CpuIsa isa : lane_isas_here()) {
      const BatchResults lanes = run_on<Model>(isa, Method::kRk4, 0, kSystems, 2);
      expect_agreement(lanes, scalar, 1e-12, std::string(Model::kName) + " " + cpu_isa_name(isa));
    }
  });
}

// Adaptive steps: each lane's system takes its own steps (the lanes stay full regardless).
TEST(CpuLanes, EveryCatalogueModelAgreesWithThePerSystemPathOnDopri5) {
  for_each_model([]<class Model>() {
    const BatchResults scalar = run_on<Model>(CpuIsa::kScalar, Method::kDopri5, 0, kSystems, 2);
    for (const CpuIsa isa : lane_isas_here()) {
      const BatchResults lanes = run_on<Model>(isa, Method::kDopri5, 0, kSystems, 2);
      expect_agreement(lanes, scalar, 1e-10, std::string(Model::kName) + " " + cpu_isa_name(isa));
    }
  });
}

// Which systems share an evaluation depends on where the batch starts (the engine's slices) and
// how its chunks fall; each system's numbers must not.
TEST(CpuLanes, ResultsAreIdenticalWhateverTheThreadsAndTheSlicing) {
  for (const CpuIsa isa : lane_isas_here()) {
    SCOPED_TRACE(cpu_isa_name(isa));
    const BatchResults one = run_on<models::FourBar>(isa, Method::kDopri5, 0, 150, 1);
    const BatchResults two = run_on<models::FourBar>(isa, Method::kDopri5, 0, 150, 2);
    testing::expect_identical(one, two);
    // Systems 3 .. 149 alone: every lane group differs from the whole batch's.
    const BatchResults tail = run_on<models::FourBar>(isa, Method::kDopri5, 3, 147, 2);
    for (int i = 0; i < 147; ++i) {
      ASSERT_EQ(tail.status[i], one.status[i + 3]);
      ASSERT_EQ(tail.steps[i], one.steps[i + 3]);
      for (int j = 0; j < one.n; ++j) {
        ASSERT_EQ(tail.q_at(j, i), one.q_at(j, i + 3)) << "system " << i + 3;
        ASSERT_EQ(tail.qd_at(j, i), one.qd_at(j, i + 3)) << "system " << i + 3;
      }
    }
  }
}

// Systems `picked` of `batch`, in that order, as a batch of their own.
Batch systems_of(const Batch& batch, const std::vector<int>& picked) {
  Batch out = batch;
  out.count = static_cast<int>(picked.size());
  const auto pick = [&](const auto& from, auto& to) {
    const std::size_t components = from.size() / static_cast<std::size_t>(batch.count);
    to.assign(components * picked.size(), {});
    for (std::size_t k = 0; k < components; ++k)
      for (std::size_t i = 0; i < picked.size(); ++i)
        to[k * picked.size() + i] = from[k * static_cast<std::size_t>(batch.count) + picked[i]];
  };
#define UKES_PICK_INPUT(name, encoding, width, text) pick(batch.name, out.name);
  UKES_SYSTEM_INPUTS(UKES_PICK_INPUT)
#undef UKES_PICK_INPUT
  return out;
}

// Every per-system result of system i of `a` and system j of `b`, bit for bit (NaN equal to NaN).
void expect_same_system(const BatchResults& a, int i, const BatchResults& b, int j) {
  const auto same = [&](const auto& from_a, const auto& from_b, const char* field) {
    const std::size_t components = from_a.size() / static_cast<std::size_t>(a.count);
    for (std::size_t k = 0; k < components; ++k) {
      const auto x = from_a[k * static_cast<std::size_t>(a.count) + i];
      const auto y = from_b[k * static_cast<std::size_t>(b.count) + j];
      EXPECT_TRUE(x == y || (x != x && y != y))
          << field << "[" << k << "] of system " << i << ": " << x << " against " << y;
    }
  };
#define UKES_SAME_RESULT(name, encoding, width, text) same(a.name, b.name, #name);
  UKES_SYSTEM_RESULTS(UKES_SAME_RESULT)
#undef UKES_SAME_RESULT
}

// Runs `mixed` (2 threads) and its systems `healthy` as a batch of their own (1 thread) on each
// lane instruction set: every healthy system's results must be the same in both, bit for bit,
// whatever its lane-mates were, and end `healthy_status`. Returns the results of `mixed` on each
// set.
template <class Model>
std::vector<BatchResults> expect_lane_mates_do_not_show(const Batch& mixed,
                                                        const std::vector<int>& healthy,
                                                        const RunSettings<double>& s,
                                                        Status healthy_status = Status::kOk) {
  const Batch alone = systems_of(mixed, healthy);
  std::vector<BatchResults> mixed_results;
  for (const CpuIsa isa : lane_isas_here()) {
    SCOPED_TRACE(cpu_isa_name(isa));
    BatchResults with_others, by_themselves;
    with_others.allocate(mixed, s.samples, {});
    by_themselves.allocate(alone, s.samples, {});
    run_batch_cpu<Model, double>(mixed.view(), s, with_others.view(), 2, isa);
    run_batch_cpu<Model, double>(alone.view(), s, by_themselves.view(), 1, isa);
    for (std::size_t k = 0; k < healthy.size(); ++k) {
      EXPECT_EQ(by_themselves.status[k], static_cast<std::int32_t>(healthy_status));
      expect_same_system(with_others, healthy[k], by_themselves, static_cast<int>(k));
    }
    mixed_results.push_back(std::move(with_others));
  }
  return mixed_results;
}

// Batch `batch` with parameter `param` set to `value` in systems `picked`; the others' indices.
std::vector<int> set_param_in(Batch& batch, int param, double value,
                              const std::vector<int>& picked) {
  std::vector<int> others;
  for (int i = 0; i < batch.count; ++i) {
    if (std::find(picked.begin(), picked.end(), i) == picked.end()) {
      others.push_back(i);
    } else {
      batch.param(param, i) = value;
    }
  }
  return others;
}

// RK4 systems begun together take their steps together, the stages of all lanes in vectors
// (rk4_steps_in_lanes, kernels/backend/cpu/simd/lane_batch_impl.hpp); a lane whose system ends
// early takes the chunk's next system, and its group evaluates one stage at a time for each system
// again until they begin together once more. Which way a system went must not show in its numbers.
// Here systems of the first batch fail at their start (a four-bar whose ground link is too long
// for the others to close it), and their lane-mates run out of step; the second batch holds the
// other systems alone, in step throughout.
TEST(CpuLanes, Rk4ResultsAreTheSameInStepWithTheOtherLanesOrNot) {
  using Model = models::FourBar;
  constexpr int kGroundLink = 3;  // the parameter d
  const std::vector<int> failing = {2, 9, 21, 22};
  Batch mixed = perturbed_batch(*find_model(Model::kName), 0, 40);
  const std::vector<int> healthy = set_param_in(mixed, kGroundLink, 100.0, failing);
  RunSettings<double> s = settings_for<Model>(Method::kRk4);
  s.assemble = true;
  for (const BatchResults& out : expect_lane_mates_do_not_show<Model>(mixed, healthy, s))
    for (const int i : failing)
      EXPECT_EQ(out.status[i], static_cast<std::int32_t>(Status::kInconsistent)) << i;
}

// Between samples the lanes take runs of plain RK4 steps without handing each step to the state
// machines (SystemKernel, "runs of plain RK4 steps"). A run must end where a state machine does
// more than step: before a sample lands, at a poll for cancellation (every 32 steps), at the step
// budget (here 137 steps, neither), and at the step where a lane-mate fails. Here Duffing
// oscillators whose cubic spring softens (k2nl = -500, so x2'' grows like x2^3) blow up within a
// run, and their rows can no longer be met to working precision. The healthy systems' bits must
// not depend on where their runs ended, and agree with the per-system path; the failing ones must
// fail as there, at the same step (their last numbers are rounding noise on values near 1e10,
// which no two formulations share).
TEST(CpuLanes, RunsOfPlainStepsEndWhereAStateMachineDoesMoreThanStep) {
  using Model = models::Duffing;
  constexpr int kCubicSpring = 5;  // the parameter k2nl
  const std::vector<int> failing = {3, 17, 30};
  Batch mixed = perturbed_batch(*find_model(Model::kName), 0, 40);
  const std::vector<int> healthy = set_param_in(mixed, kCubicSpring, -500.0, failing);
  RunSettings<double> s = settings_for<Model>(Method::kRk4);
  s.max_steps = 137;
  s.dynamics.beta = 1e4;  // the rows' violation oscillates: maxima fall inside runs
  const auto run_scalar = [&](const Batch& batch) {
    BatchResults out;
    out.allocate(batch, s.samples, {0, 1});
    run_batch_cpu<Model, double>(batch.view(), s, out.view(), 1, CpuIsa::kScalar);
    return out;
  };
  const BatchResults scalar = run_scalar(mixed);
  for (const int i : failing) {
    EXPECT_EQ(scalar.status[i], static_cast<std::int32_t>(Status::kInconsistent)) << i;
    EXPECT_GT(scalar.steps[i], 32) << i;
    EXPECT_LT(scalar.steps[i], s.max_steps) << i;
  }
  const std::vector<BatchResults> lanes =
      expect_lane_mates_do_not_show<Model>(mixed, healthy, s, Status::kMaxSteps);
  for (const BatchResults& out : lanes) {
    EXPECT_EQ(out.status, scalar.status);
    EXPECT_EQ(out.steps, scalar.steps);
    EXPECT_EQ(out.t, scalar.t);
  }
  const Batch alone = systems_of(mixed, healthy);
  const BatchResults scalar_alone = run_scalar(alone);
  for (const CpuIsa isa : lane_isas_here()) {
    BatchResults out;
    out.allocate(alone, s.samples, {0, 1});
    run_batch_cpu<Model, double>(alone.view(), s, out.view(), 1, isa);
    expect_agreement(out, scalar_alone, 1e-12, std::string("duffing ") + cpu_isa_name(isa));
  }
}

// A lane whose mass is not positive definite is solved alone on the scalar path, and its
// lane-mates keep the vector solve's numbers: their bits must not depend on which systems share
// their lanes. Here a massless slider (SCARA's m4 = 0, so M(4, 4) = 0): the scalar path solves it
// on the augmented mass M + s A^T A, definite because the constraints fix the slider's height
// (Udwadia & Phohomsiri, Proc. R. Soc. A 462, 2006), and those systems run to the end as well.
TEST(CpuLanes, AMassNotDefiniteInOneLaneLeavesItsLaneMatesAsTheyAre) {
  using Model = models::Scara;
  constexpr int kSliderMass = 3;  // m4
  const std::vector<int> massless = {1, 6, 13, 30};
  Batch mixed = perturbed_batch(*find_model(Model::kName), 0, 40);
  const std::vector<int> massive = set_param_in(mixed, kSliderMass, 0.0, massless);
  for (const Method method : {Method::kRk4, Method::kDopri5}) {
    SCOPED_TRACE(method == Method::kRk4 ? "rk4" : "dopri5");
    const RunSettings<double> s = settings_for<Model>(method);
    for (const BatchResults& out : expect_lane_mates_do_not_show<Model>(mixed, massive, s))
      for (const int i : massless)
        EXPECT_EQ(out.status[i], static_cast<std::int32_t>(Status::kOk)) << i;
  }
}

// The vector solve itself (uk_solve on two SSE2 lanes, compiled here without FMA, so that a lane's
// arithmetic is the scalar solve's): a mass not definite in lane 1 (a massless coordinate, one of
// rounding size, which the factorization takes but the working-precision test does not, a negative
// mass, a NaN) flags lane 1 alone, and lane 0's solution is the scalar solve's, bit for
// bit. M is not diagonal, so the dense triangular solves run.
TEST(CpuLanes, AMassNotDefiniteIsFlaggedInItsLaneAlone) {
  using Lanes = xsimd::batch<double, xsimd::sse2>;
  const auto with_third_mass = []<class T>(T m3, Mat<T, 3, 3>& M, Vec<T, 3>& Q, Mat<T, 1, 3>& A,
                                           Vec<T, 1>& b) {
    M = Mat<T, 3, 3>::zero();
    M(0, 0) = T(2.0), M(1, 1) = T(1.0), M(2, 2) = m3;
    M(0, 1) = M(1, 0) = T(0.3);
    Q[0] = T(-1.0), Q[1] = T(0.25), Q[2] = T(-9.81);
    A(0, 0) = T(1.0), A(0, 1) = T(-0.5), A(0, 2) = T(1.0);
    b[0] = T(0.75);
  };
  for (const double bad : {0.0, 1e-300, -1.0, std::numeric_limits<double>::quiet_NaN()}) {
    SCOPED_TRACE(bad);
    Mat<Lanes, 3, 3> M;
    Vec<Lanes, 3> Q;
    Mat<Lanes, 1, 3> A;
    Vec<Lanes, 1> b;
    with_third_mass(Lanes{0.5, bad}, M, Q, A, b);
    const UkSolution<Lanes, 3> lanes = uk_solve(M, Q, A, b, NoNonIdealForce{});
    bool unsolved[2];
    lanes.unsolved.store_unaligned(unsolved);
    EXPECT_FALSE(unsolved[0]);
    EXPECT_TRUE(unsolved[1]);
    EXPECT_TRUE(lanes.mass_ok);

    Mat<double, 3, 3> M0;
    Vec<double, 3> Q0;
    Mat<double, 1, 3> A0;
    Vec<double, 1> b0;
    with_third_mass(0.5, M0, Q0, A0, b0);
    const UkSolution<double, 3> alone = uk_solve(M0, Q0, A0, b0, NoNonIdealForce{});
    ASSERT_TRUE(alone.mass_ok);
    for (int j = 0; j < 3; ++j) {
      EXPECT_EQ(lane(lanes.qdd[j], 0), alone.qdd[j]) << j;
      EXPECT_EQ(lane(lanes.Qc_ideal[j], 0), alone.Qc_ideal[j]) << j;
    }
    EXPECT_EQ(lane(lanes.inconsistency, 0), alone.inconsistency);
    EXPECT_EQ(lane(lanes.conditioning, 0), alone.conditioning);
  }
}

// A user model (run through the interpreter, op by op across lanes) whose two rows coincide in
// some systems: there QR cannot prove full rank, and those lanes are solved one by one by the
// Jacobi SVD, as the per-system path solves them; the other lanes stay in the lanes. Its
// functions cover the operations whose lanes choose per lane (if, min, max, abs, sign, hypot, pow).
nlohmann::json redundant_rows_spec() {
  nlohmann::json systems = nlohmann::json::array();
  // c = 0 gives two equal rows (rank 1), c = 0.5 two independent ones.
  for (const double c : {0.0, 0.5, 0.0, 0.5, 0.5, 0.0, 0.5, 0.5, 0.0, 0.5, 0.5})
    systems.push_back({{"params", {{"c", c}}}});
  return {{"model",
           {{"format", "ukes-model/1"},
            {"name", "two_rows"},
            {"coordinates", {"x", "y"}},
            {"parameters", {{{"name", "c"}, {"value", 0.0}}}},
            {"mass", {{"diagonal", {"1 + 0.1 * abs(x)", "2 + pow(y * y, 1.5)"}}}},
            {"force",
             {"-x + if(x > 0, 0.1, -0.1) * min(x, y) + sign(y) * 0.01",
              "-y + max(x, y) * 0.05 - hypot(x, y) * 0.01"}},
            {"position_constraints", {"x + y - 1", "c * (x - y) + (1 - c) * (x + y - 1)"}},
            {"initial_state", {{"q", {0.5, 0.5}}, {"qd", {0.1, -0.1}}}},
            {"t_end", 0.5},
            {"baumgarte", {{"alpha", 10.0}, {"beta", 25.0}}}}},
          {"systems", systems},
          {"integrator", {{"method", "rk4"}, {"dt", 1e-3}}},
          {"output", {{"samples", 6}, {"trajectories", "first:11"}}}};
}

RunOutcome run_spec_on(const nlohmann::json& spec, CpuIsa isa) {
  ExecuteOptions options;
  options.threads = 2;
  options.cpu_isa = isa;
  return execute(parse_run_spec(spec), options);
}

TEST(CpuLanes, LanesTheVectorSolveCannotFinishAreSolvedOneByOne) {
  const nlohmann::json spec = redundant_rows_spec();
  const RunOutcome scalar = run_spec_on(spec, CpuIsa::kScalar);
  for (const CpuIsa isa : lane_isas_here()) {
    const RunOutcome lanes = run_spec_on(spec, isa);
    expect_agreement(lanes.results, scalar.results, 1e-12, cpu_isa_name(isa));
  }
  // The systems with equal rows met both (they are one), those without met both too.
  for (int i = 0; i < scalar.results.count; ++i)
    EXPECT_EQ(scalar.results.status[i], static_cast<std::int32_t>(Status::kOk)) << i;
}

// With an event the state machines look for crossings after every step, so the lanes take no
// runs of plain steps; an event that never fires leaves the integration untouched
// (EventRun.RecordsLeaveTheIntegrationUntouched). `spec` on `isa` as it is, and again with such an
// event: runs of plain steps, and steps taken one at a time.
struct RunsAndSteps {
  RunOutcome runs, one_at_a_time;
};
RunsAndSteps run_with_and_without_runs(const nlohmann::json& spec, CpuIsa isa) {
  nlohmann::json with_event = spec;
  with_event["events"] = {{{"name", "never"}, {"condition", "t + 1"}}};
  return {run_spec_on(spec, isa), run_spec_on(with_event, isa)};
}

// The same batch with and without runs of plain steps: every per-system result, bit for bit. The
// batch starts off its rows (its first coordinate moved by 2e-3 to 1e-2); runs end at polls every
// 32 steps and at the step budget (450 steps), and go on through the 7 samples (83.3 steps apart:
// the steps that land are shortened) unless a lane records its trajectory: all do, or only the
// first and last systems' (their lanes' runs end before each sample, the others' do not).
// `beta`: Baumgarte gains (0, beta) in place of the model's.
void expect_runs_change_no_bit(const char* name, std::optional<double> beta,
                               const nlohmann::json& trajectories) {
  SCOPED_TRACE(name);
  const ModelInfo& model = *find_model(name);
  Batch batch = perturbed_batch(model, 0, 45);
  nlohmann::json systems = nlohmann::json::array();
  for (int i = 0; i < batch.count; ++i) {
    nlohmann::json q0 = nlohmann::json::array(), qd0 = nlohmann::json::array();
    for (int j = 0; j < model.n; ++j) {
      q0.push_back(batch.q(j, i) + (j == 0 ? 2e-3 * (1 + i % 5) : 0.0));
      qd0.push_back(batch.qd(j, i));
    }
    systems.push_back({{"q0", q0}, {"qd0", qd0}});
  }
  nlohmann::json spec = {
      {"model", name},
      {"device", "cpu"},
      {"systems", systems},
      {"integrator", {{"method", "rk4"}, {"dt", 1e-3}, {"t_end", 0.5}, {"max_steps", 450}}},
      {"output", {{"samples", 7}, {"trajectories", trajectories}}}};
  if (beta) spec["stabilization"] = {{"alpha", 0.0}, {"beta", *beta}};
  for (const CpuIsa isa : lane_isas_here()) {
    SCOPED_TRACE(cpu_isa_name(isa));
    const auto [runs, one_at_a_time] = run_with_and_without_runs(spec, isa);
    for (int i = 0; i < batch.count; ++i) {
      if (beta) {
        EXPECT_EQ(runs.results.status[i], static_cast<std::int32_t>(Status::kMaxSteps));
      }
      expect_same_system(runs.results, i, one_at_a_time.results, i);
    }
  }
}

// Every catalogue model at its own gains; then three whose rows' violation oscillates every 63
// steps (beta = 1e4), so that the statistics' maxima fall inside runs (SCARA, 0.1 rad off its rows
// at its defaults, fails with such gains).
TEST(CpuLanes, RunsOfPlainStepsGiveTheBitsOfStepsTakenOneAtATime) {
  for (const nlohmann::json& trajectories : {nlohmann::json("all"), nlohmann::json({0, 44})}) {
    SCOPED_TRACE(trajectories.dump());
    for_each_model([&]<class Model>() {
      expect_runs_change_no_bit(Model::kName, std::nullopt, trajectories);
    });
    for (const char* name : {"duffing", "four_bar", "swarm"})
      expect_runs_change_no_bit(name, 1e4, trajectories);
  }
}

// Every step of a run is checked, its first too: a run begins after a sample, at a poll for
// cancellation (every 32 steps) or after a lane-mate's failure, and a system that blows up on that
// step must fail there as it does taking its steps one at a time. Duffing oscillators whose cubic
// springs soften more and more along the batch (k2nl from -100 to -20000, geometrically) fail
// after every step count from 30 to 70, beside lane-mates that fail a step or two apart. (Against
// the per-system path the step of a failure may differ by one: the lanes' fused multiply-adds
// round the blow-up's last steps differently, and the rows' inconsistency crosses its tolerance
// a step earlier or later.)
TEST(CpuLanes, AFailureOnAnyStepOfARunEndsItThere) {
  constexpr int kSweep = 400;
  const ModelInfo& model = *find_model("duffing");
  Batch batch = perturbed_batch(model, 0, kSweep);
  nlohmann::json systems = nlohmann::json::array();
  for (int i = 0; i < kSweep; ++i) {
    const double k2nl = -100.0 * std::pow(200.0, static_cast<double>(i) / (kSweep - 1));
    systems.push_back({{"q0", {batch.q(0, i), batch.q(1, i)}},
                       {"qd0", {batch.qd(0, i), batch.qd(1, i)}},
                       {"params", {{"k2nl", k2nl}}}});
  }
  const nlohmann::json spec = {{"model", "duffing"},
                               {"device", "cpu"},
                               {"systems", systems},
                               {"integrator", {{"method", "rk4"}, {"dt", 1e-3}, {"t_end", 0.2}}},
                               {"output", {{"samples", 5}}}};
  for (const CpuIsa isa : lane_isas_here()) {
    SCOPED_TRACE(cpu_isa_name(isa));
    const auto [runs, one_at_a_time] = run_with_and_without_runs(spec, isa);
    std::vector<bool> fails_after(201, false);  // the run's 200 steps
    for (int i = 0; i < kSweep; ++i) {
      expect_same_system(runs.results, i, one_at_a_time.results, i);
      if (one_at_a_time.results.status[i] != static_cast<std::int32_t>(Status::kOk))
        fails_after[static_cast<std::size_t>(one_at_a_time.results.steps[i])] = true;
    }
    for (std::size_t steps = 30; steps <= 70; ++steps)
      EXPECT_TRUE(fails_after[steps]) << "no system fails after " << steps << " steps";
  }
}

// The vector functions the lanes call in place of the C library's (xsimd's, on the SSE2 batch: the
// wider variants run the same algorithms, but for sin and cos where the multiply-add is fused,
// tested below), in units in the last place of the C library's result.
double ulps_apart(double a, double b) {
  if (a == b) return 0.0;
  const auto key = [](double x) {
    std::int64_t i;
    std::memcpy(&i, &x, sizeof i);
    return i < 0 ? std::numeric_limits<std::int64_t>::min() - i : i;
  };
  return std::abs(static_cast<double>(key(a) - key(b)));
}

template <class Lane, class Scalar>
double worst_ulps(double lo, double hi, Lane&& lane, Scalar&& scalar) {
  using Batch = xsimd::batch<double, xsimd::sse2>;
  double worst = 0.0;
  constexpr int kPoints = 200000;
  for (int i = 0; i < kPoints; i += 2) {
    const double x0 = lo + (hi - lo) * i / kPoints, x1 = lo + (hi - lo) * (i + 1) / kPoints;
    alignas(16) double y[2];
    lane(Batch{x0, x1}).store_aligned(y);
    worst = std::max({worst, ulps_apart(y[0], scalar(x0)), ulps_apart(y[1], scalar(x1))});
  }
  return worst;
}

TEST(CpuLanes, VectorFunctionsAreWithinTwoUlpOfTheCLibrary) {
  using Batch = xsimd::batch<double, xsimd::sse2>;
  EXPECT_LE(worst_ulps(
                -1e4, 1e4, [](Batch x) { return sin(x); }, [](double x) { return std::sin(x); }),
            2.0);
  EXPECT_LE(worst_ulps(
                -1e4, 1e4, [](Batch x) { return cos(x); }, [](double x) { return std::cos(x); }),
            2.0);
  // A jet's sin and cos take both from one reduction (LaneMath, simd_lanes.hpp).
  EXPECT_LE(worst_ulps(
                -1e4, 1e4, [](Batch x) { return LaneMath<Batch>::sin_cos(x).first; },
                [](double x) { return std::sin(x); }),
            2.0);
  EXPECT_LE(worst_ulps(
                -1e4, 1e4, [](Batch x) { return LaneMath<Batch>::sin_cos(x).second; },
                [](double x) { return std::cos(x); }),
            2.0);
  EXPECT_LE(worst_ulps(
                -1.5, 1.5, [](Batch x) { return tan(x); }, [](double x) { return std::tan(x); }),
            2.0);
  EXPECT_LE(worst_ulps(
                -1, 1, [](Batch x) { return asin(x); }, [](double x) { return std::asin(x); }),
            2.0);
  EXPECT_LE(worst_ulps(
                -50, 50, [](Batch x) { return atan2(x, Batch(1.3)); },
                [](double x) { return std::atan2(x, 1.3); }),
            2.0);
  EXPECT_LE(worst_ulps(
                -50, 50, [](Batch x) { return exp(x); }, [](double x) { return std::exp(x); }),
            2.0);
  EXPECT_LE(worst_ulps(
                1e-3, 1e3, [](Batch x) { return log(x); }, [](double x) { return std::log(x); }),
            2.0);
  EXPECT_EQ(worst_ulps(
                0, 1e6, [](Batch x) { return sqrt(x); }, [](double x) { return std::sqrt(x); }),
            0.0);
}

// sin and cos as the lanes of `isa` compute them (lane_sin_cos, exported by its lane library).
void lane_sin_cos_on(CpuIsa isa, std::vector<double> x, std::vector<double>& sin_x,
                     std::vector<double>& cos_x) {
  x.resize((x.size() + 7) / 8 * 8, 0.0);  // whole vectors of any width
  sin_x.assign(x.size(), 0.0);
  cos_x.assign(x.size(), 0.0);
  const int count = static_cast<int>(x.size());
  with_lane_isa(
      isa, [&]<CpuIsa kIsa>() { lane_sin_cos<kIsa>(x.data(), sin_x.data(), cos_x.data(), count); });
}

// Our sin and cos (kernels/backend/cpu/simd/lane_sin_cos.hpp), on the instruction sets whose lanes
// take them: within 1 ulp of the C library's up to |x| = 1e6, at the doubles nearest the multiples
// of pi/2 too (where the reduction cancels most); beyond, and for infinities and NaN, the C
// library's own values; the sign of a zero kept.
TEST(CpuLanes, SinAndCosAreWithinOneUlpOfTheCLibraryWhereTheMultiplyAddIsFused) {
  std::vector<double> x;
  for (int i = -100000; i <= 100000; ++i) x.push_back(4.0 * i / 100000);
  for (int i = -100000; i <= 100000; ++i) x.push_back(1e6 * i / 100000 + 0.1 * (i % 7));
  for (int k = -636000; k <= 636000; k += 53) {  // k pi/2 up to |x| = 1e6
    double near = k * (M_PI / 2);
    for (int step = 0; step < 3; ++step) {
      x.push_back(near);
      x.push_back(-near);
      near = std::nextafter(near, 2e6);
    }
  }
  const std::vector<double> in_range = x;
  const std::vector<double> beyond = {std::nextafter(1e6, 2e6), 1e7, 3e15, 1e300,
                                      -std::numeric_limits<double>::max()};
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  x.insert(x.end(), beyond.begin(), beyond.end());
  x.insert(x.end(), {inf, -inf, nan, 0.0, -0.0, 5e-324, -1e-300});
  int tested = 0;
  for (const CpuIsa isa : lane_isas_here()) {
    if (isa == CpuIsa::kSse2) continue;  // xsimd's sincos: the test above
    ++tested;
    std::vector<double> s, c;
    lane_sin_cos_on(isa, x, s, c);
    double worst_sin = 0.0, worst_cos = 0.0;
    for (std::size_t i = 0; i < in_range.size(); ++i) {
      worst_sin = std::max(worst_sin, ulps_apart(s[i], std::sin(x[i])));
      worst_cos = std::max(worst_cos, ulps_apart(c[i], std::cos(x[i])));
    }
    EXPECT_LE(worst_sin, 1.0) << cpu_isa_name(isa);
    EXPECT_LE(worst_cos, 1.0) << cpu_isa_name(isa);
    for (std::size_t i = in_range.size(); i < in_range.size() + beyond.size(); ++i) {
      EXPECT_EQ(s[i], std::sin(x[i])) << x[i];
      EXPECT_EQ(c[i], std::cos(x[i])) << x[i];
    }
    const std::size_t special = in_range.size() + beyond.size();
    for (std::size_t i = special; i < special + 3; ++i)
      EXPECT_TRUE(std::isnan(s[i]) && std::isnan(c[i])) << x[i];
    EXPECT_TRUE(s[special + 3] == 0.0 && !std::signbit(s[special + 3]));
    EXPECT_TRUE(s[special + 4] == 0.0 && std::signbit(s[special + 4]));
    EXPECT_EQ(c[special + 3], 1.0);
    EXPECT_EQ(c[special + 4], 1.0);
    EXPECT_EQ(s[special + 5], 5e-324);
    EXPECT_EQ(s[special + 6], -1e-300);
  }
  if (tested == 0) GTEST_SKIP() << "no lane instruction set with a fused multiply-add here";
}

TEST(CpuLanes, TheInstructionSetIsTheWidestUnlessTheEnvironmentNamesAnother) {
  const auto all = [](CpuIsa) { return true; };
  const auto up_to_avx2 = [](CpuIsa isa) { return isa != CpuIsa::kAvx512; };
  EXPECT_EQ(choose_cpu_isa(nullptr, all).isa, CpuIsa::kAvx512);
  EXPECT_EQ(choose_cpu_isa(nullptr, up_to_avx2).isa, CpuIsa::kAvx2);
  EXPECT_EQ(choose_cpu_isa("", up_to_avx2).isa, CpuIsa::kAvx2);
  EXPECT_TRUE(choose_cpu_isa(nullptr, all).note.empty());

  const CpuIsaChoice scalar = choose_cpu_isa("scalar", up_to_avx2);
  EXPECT_EQ(scalar.isa, CpuIsa::kScalar);
  EXPECT_TRUE(scalar.note.empty());
  EXPECT_EQ(choose_cpu_isa("sse2", up_to_avx2).isa, CpuIsa::kSse2);

  const CpuIsaChoice lacking = choose_cpu_isa("avx512", up_to_avx2);
  EXPECT_EQ(lacking.isa, CpuIsa::kAvx2);
  EXPECT_EQ(lacking.note, "UKES_CPU_ISA: this CPU has no avx512; running avx2");

  const std::string long_name(5000, 'z');
  const CpuIsaChoice unknown = choose_cpu_isa(long_name.c_str(), up_to_avx2);
  EXPECT_EQ(unknown.isa, CpuIsa::kAvx2);
  EXPECT_LT(unknown.note.size(), 120u) << "the name is not echoed unbounded";
  EXPECT_NE(unknown.note.find("is none of scalar, sse2, avx2, avx512"), std::string::npos)
      << unknown.note;

  EXPECT_EQ(cpu_isa_lanes(CpuIsa::kAvx2), 4);
  EXPECT_TRUE(cpu_supports(cpu_isa()));
}

}  // namespace
}  // namespace ukes
