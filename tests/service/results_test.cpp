// Results over gRPC against the in-process engine: a batch and a sweep (as JSON text and as the
// typed RunSpec), a 100,000-system ensemble, resuming a broken stream, and concurrent clients.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "kernels/models/model_info.hpp"
#include "tests/service/service_support.hpp"

namespace ukes::testing {
namespace {

using nlohmann::json;

class ResultsTest : public SharedServerTest<ResultsTest> {
 public:
  static std::vector<std::string> server_args() { return {}; }
};

// Explicit systems: overrides at the top level and per system, explicit and default initial
// conditions, a list of recorded trajectories with two of the four fields.
constexpr const char* kBatchSpec = R"({
  "model": "duffing",
  "params": {"k1": 10.0},
  "systems": [
    {"params": {"m1": 2.1}, "q0": [1.0, 1.0], "qd0": [8.283185307179586, 2.0]},
    {"params": {"m1": 1.7, "c1": 0.3}},
    {"q0": [1.2, 1.1]},
    {}
  ],
  "integrator": {"method": "dopri5", "t_end": 2.0, "rtol": 1e-10, "atol": 1e-10},
  "output": {"samples": 21, "trajectories": [0, 2], "fields": ["q", "residual"]}
})";

v1::RunSpec batch_typed() {
  v1::RunSpec s;
  s.set_model("duffing");
  (*s.mutable_params())["k1"] = 10.0;
  v1::SystemSpec* s0 = s.add_systems();
  (*s0->mutable_params())["m1"] = 2.1;
  s0->add_q0(1.0);
  s0->add_q0(1.0);
  s0->add_qd0(8.283185307179586);
  s0->add_qd0(2.0);
  v1::SystemSpec* s1 = s.add_systems();
  (*s1->mutable_params())["m1"] = 1.7;
  (*s1->mutable_params())["c1"] = 0.3;
  v1::SystemSpec* s2 = s.add_systems();
  s2->add_q0(1.2);
  s2->add_q0(1.1);
  s.add_systems();
  v1::IntegratorSpec* in = s.mutable_integrator();
  in->set_method("dopri5");
  in->set_t_end(2.0);
  in->set_rtol(1e-10);
  in->set_atol(1e-10);
  v1::OutputSpec* out = s.mutable_output();
  out->set_samples(21);
  out->add_trajectory_ids(0);
  out->add_trajectory_ids(2);
  out->add_fields("q");
  out->add_fields("residual");
  return s;
}

// A Latin-hypercube sweep over a parameter, a position and a velocity, assembled onto the
// constraint set, with the first trajectories recorded in full.
constexpr const char* kSweepSpec = R"({
  "model": "scara",
  "sweep": {"count": 24, "seed": 2024, "sampler": "lhs",
            "vary": {"params.m4": {"uniform": [0.3, 0.8]},
                     "q0[0]": {"normal": [0.5235987755982988, 0.01]},
                     "qd0[3]": {"values": [0.0195, 0.02]}}},
  "assemble": true,
  "integrator": {"method": "dopri5", "t_end": 1.0},
  "output": {"samples": 11, "trajectories": "first:5"}
})";

v1::RunSpec sweep_typed() {
  v1::RunSpec s;
  s.set_model("scara");
  v1::Sweep* w = s.mutable_sweep();
  w->set_count(24);
  w->set_seed(2024);
  w->set_sampler("lhs");
  v1::UniformDistribution* u = (*w->mutable_vary())["params.m4"].mutable_uniform();
  u->set_low(0.3);
  u->set_high(0.8);
  v1::NormalDistribution* n = (*w->mutable_vary())["q0[0]"].mutable_normal();
  n->set_mean(0.5235987755982988);
  n->set_sd(0.01);
  v1::ValuesDistribution* v = (*w->mutable_vary())["qd0[3]"].mutable_values();
  v->add_values(0.0195);
  v->add_values(0.02);
  s.set_assemble(true);
  s.mutable_integrator()->set_method("dopri5");
  s.mutable_integrator()->set_t_end(1.0);
  s.mutable_output()->set_samples(11);
  s.mutable_output()->set_trajectories("first:5");
  return s;
}

// The same spec sent both ways runs the same systems to the same numbers, equal to in-process.
void expect_both_forms_match(Stub& stub, const std::string& text, const v1::RunSpec& typed) {
  const StreamResult as_json = simulate(stub, json_request(text));
  ASSERT_NO_FATAL_FAILURE(expect_matches_in_process(as_json, text));
  const StreamResult as_typed = simulate(stub, typed_request(typed));
  ASSERT_NO_FATAL_FAILURE(expect_matches_in_process(as_typed, text));
  EXPECT_NE(as_json.job_id(), as_typed.job_id());
  const auto a = assemble(as_json.chunks), b = assemble(as_typed.chunks);
  const OutputSpec& output = a->spec().output;
  expect_same_results(b->outcome().results, a->outcome().results, output);
  expect_same_statistics(b->outcome().statistics, a->outcome().statistics);
}

TEST_F(ResultsTest, BatchMatchesInProcessAsJsonAndTyped) {
  expect_both_forms_match(*stub_, kBatchSpec, batch_typed());
}

TEST_F(ResultsTest, SweepMatchesInProcessAsJsonAndTyped) {
  expect_both_forms_match(*stub_, kSweepSpec, sweep_typed());
}

TEST_F(ResultsTest, SummariesOffLeaveOnlyTheEnsembleStatistics) {
  v1::SubmitJobRequest request = json_request(kSweepSpec);
  request.set_system_summaries(false);
  const StreamResult r = simulate(*stub_, request);
  ASSERT_TRUE(r.status.ok()) << r.status.error_message();
  ASSERT_NO_FATAL_FAILURE(expect_well_formed_log(r.chunks));
  EXPECT_FALSE(r.chunks.front().header().system_summaries());
  for (const auto& c : r.chunks) EXPECT_FALSE(c.has_summaries()) << "sequence " << c.sequence();
  const RunOutcome want = run_in_process(kSweepSpec);
  const auto got = assemble(r.chunks);
  expect_same_statistics(got->outcome().statistics, want.statistics);
}

// 100,000 short systems: every summary exactly once, in messages that fit gRPC's default 4 MiB
// limit (read here on a channel that keeps that limit).
TEST_F(ResultsTest, HundredThousandSystemsArriveExactlyOnce) {
  constexpr int kCount = 100000;
  const std::string spec = R"({"model": "duffing",
    "sweep": {"count": 100000, "seed": 11, "vary": {"params.m1": {"uniform": [1.5, 2.5]}}},
    "integrator": {"method": "rk4", "t_end": 0.05, "dt": 0.005}})";
  auto stub =
      make_stub(grpc::CreateChannel(server_->address(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  set_deadline(context);
  v1::SimulateRequest request;
  *request.mutable_job() = json_request(spec);
  auto reader = stub->Simulate(&context, request);

  std::vector<int> seen(kCount, 0);
  std::int64_t expected_sequence = 1, statistics_count = -1;
  std::size_t largest = 0;
  v1::JobState end_state = v1::JOB_STATE_UNSPECIFIED;
  Chunk c;
  while (reader->Read(&c)) {
    ASSERT_EQ(c.sequence(), expected_sequence++);
    ASSERT_EQ(c.has_header(), c.sequence() == 1);
    largest = std::max(largest, c.ByteSizeLong());
    if (c.has_summaries()) {
      const auto& s = c.summaries();
      ASSERT_GE(s.first_id(), 0);
      ASSERT_LE(s.first_id() + s.count(), kCount);
      for (int i = s.first_id(); i < s.first_id() + s.count(); ++i) ++seen[i];
    }
    EXPECT_FALSE(c.has_trajectory());
    if (c.has_statistics()) statistics_count = c.statistics().count();
    if (c.has_end()) end_state = c.end().state();
  }
  const grpc::Status status = reader->Finish();
  ASSERT_TRUE(status.ok()) << status.error_code() << " " << status.error_message();
  EXPECT_EQ(end_state, v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(statistics_count, kCount);
  EXPECT_LT(largest, std::size_t{4} << 20);
  int missing = 0, repeated = 0;
  for (int n : seen) {
    missing += n == 0;
    repeated += n > 1;
  }
  EXPECT_EQ(missing, 0);
  EXPECT_EQ(repeated, 0);
}

// A stream broken after k chunks and resumed on a new channel gives chunks k+1..end once each;
// together they are the uninterrupted stream, byte for byte.
TEST_F(ResultsTest, ResumedStreamCompletesTheBrokenOne) {
  const std::string spec = R"({"model": "duffing",
    "sweep": {"count": 3000, "seed": 5, "vary": {"q0[0]": {"normal": [1.0, 0.05]}}},
    "integrator": {"method": "dopri5", "t_end": 2.0},
    "output": {"samples": 41, "trajectories": "all"}})";
  const std::string id = submit_ok(*stub_, json_request(spec));
  ASSERT_FALSE(id.empty());

  constexpr std::int64_t kFirst = 5;
  std::vector<Chunk> head;
  {
    auto channel = server_->channel();
    auto stub = make_stub(channel);
    grpc::ClientContext context;
    set_deadline(context);
    v1::StreamJobResultsRequest request;
    request.set_job_id(id);
    auto reader = stub->StreamJobResults(&context, request);
    Chunk c;
    while (static_cast<std::int64_t>(head.size()) < kFirst && reader->Read(&c)) head.push_back(c);
    context.TryCancel();
    reader->Finish();
  }  // the channel is dropped here
  ASSERT_EQ(static_cast<std::int64_t>(head.size()), kFirst);

  auto fresh = make_stub(server_->channel());
  const StreamResult tail = stream_results(*fresh, id, head.back().sequence());
  ASSERT_TRUE(tail.status.ok()) << tail.status.error_message();
  ASSERT_FALSE(tail.chunks.empty());
  for (std::size_t k = 0; k < tail.chunks.size(); ++k)
    EXPECT_EQ(tail.chunks[k].sequence(), kFirst + 1 + static_cast<std::int64_t>(k));
  EXPECT_TRUE(tail.ended());

  const StreamResult whole = stream_results(*fresh, id, 0);
  ASSERT_EQ(head.size() + tail.chunks.size(), whole.chunks.size());
  for (std::size_t k = 0; k < whole.chunks.size(); ++k) {
    const Chunk& part = k < head.size() ? head[k] : tail.chunks[k - head.size()];
    EXPECT_EQ(deterministic_bytes(part), deterministic_bytes(whole.chunks[k])) << "chunk " << k;
  }
  EXPECT_GT(whole.chunks.size(), 10u) << "the job should have many chunks";
  expect_matches_in_process(whole, spec);

  // Resuming exactly at the end of an ended job is an empty, successful stream.
  const StreamResult nothing = stream_results(*fresh, id, whole.last()->sequence());
  EXPECT_TRUE(nothing.status.ok()) << nothing.status.error_message();
  EXPECT_TRUE(nothing.chunks.empty());
}

// A small sweep of a catalogue model: its first free parameter varied by 10 %.
std::string client_spec(const ModelInfo& m, int seed) {
  static const char* kSamplers[] = {"random", "lhs", "sobol"};
  json vary = json::object();
  for (const auto& p : m.params) {
    if (p.structural) continue;
    const double lo = p.value == 0.0 ? 0.0 : 0.9 * p.value;
    const double hi = p.value == 0.0 ? 0.1 : 1.1 * p.value;
    vary[std::string("params.") + p.name] = {{"uniform", {std::min(lo, hi), std::max(lo, hi)}}};
    break;
  }
  const json spec = {
      {"model", m.name},
      {"sweep", {{"count", 64}, {"seed", seed}, {"sampler", kSamplers[seed % 3]}, {"vary", vary}}},
      {"integrator", {{"method", "dopri5"}, {"t_end", m.t_end / 5}, {"rtol", 1e-8}}},
      {"output", {{"samples", 5}, {"trajectories", "first:2"}}}};
  return spec.dump();
}

TEST_F(ResultsTest, EightConcurrentClientsGetTheirOwnResults) {
  constexpr int kClients = 8;
  const auto& models = catalogue_info();
  ASSERT_GE(models.size(), std::size_t{kClients});
  std::vector<std::string> specs;
  for (int k = 0; k < kClients; ++k) specs.push_back(client_spec(models[k], 100 + k));
  std::vector<StreamResult> results(kClients);
  std::vector<std::thread> clients;
  for (int k = 0; k < kClients; ++k)
    clients.emplace_back([&, k] {
      auto stub = make_stub(server_->channel());
      results[k] = simulate(*stub, json_request(specs[k]));
    });
  for (auto& t : clients) t.join();
  for (int k = 0; k < kClients; ++k) {
    SCOPED_TRACE(specs[k]);
    expect_matches_in_process(results[k], specs[k]);
    for (int j = 0; j < k; ++j) EXPECT_NE(results[k].job_id(), results[j].job_id());
  }
}

}  // namespace
}  // namespace ukes::testing
