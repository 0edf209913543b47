// The protocol conversions: the typed RunSpec message means exactly what the JSON document it
// mirrors means; results cut into chunks (summaries, trajectories split by systems and by samples,
// statistics) come back through the ResultAssembler bit for bit; out-of-order chunks are refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "service/engine/engine.hpp"
#include "service/protocol/result_assembler.hpp"
#include "service/protocol/result_chunks.hpp"
#include "service/protocol/spec_proto.hpp"
#include "service/runspec/run_spec.hpp"
#include "service/runspec/spec_text.hpp"

namespace ukes {
namespace {

using json = nlohmann::json;

// Bitwise equality that also holds for NaN (samples after a failure are NaN).
bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!(a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i])))) return false;
  return true;
}

v1::RunSpec typed_scara_sweep() {
  v1::RunSpec s;
  s.set_model("scara");
  (*s.mutable_params())["m3"] = 0.9;
  v1::Sweep* w = s.mutable_sweep();
  w->set_count(40);
  w->set_seed(11);
  w->set_sampler("lhs");
  (*w->mutable_vary())["params.m4"].mutable_uniform()->set_low(0.3);
  (*w->mutable_vary())["params.m4"].mutable_uniform()->set_high(0.8);
  (*w->mutable_vary())["q0[0]"].mutable_normal()->set_mean(0.5235987755982988);
  (*w->mutable_vary())["q0[0]"].mutable_normal()->set_sd(0.01);
  s.set_assemble(true);
  v1::IntegratorSpec* in = s.mutable_integrator();
  in->set_method("rk4");
  in->set_t_end(0.3);
  in->set_dt(0.01);
  s.mutable_stabilization()->set_alpha(20.0);
  s.mutable_stabilization()->set_beta(100.0);
  s.set_precision("fp64");
  s.set_device("cpu");
  s.set_gpu_path("cusolver");
  v1::OutputSpec* out = s.mutable_output();
  out->set_samples(7);
  out->add_trajectory_ids(3);
  out->add_trajectory_ids(0);
  out->add_trajectory_ids(39);
  out->add_fields("q");
  out->add_fields("residual");
  return s;
}

constexpr const char* kScaraSweepJson = R"({
  "model": "scara", "params": {"m3": 0.9},
  "sweep": {"count": 40, "seed": 11, "sampler": "lhs",
            "vary": {"params.m4": {"uniform": [0.3, 0.8]},
                     "q0[0]": {"normal": [0.5235987755982988, 0.01]}}},
  "assemble": true,
  "integrator": {"method": "rk4", "t_end": 0.3, "dt": 0.01},
  "stabilization": {"alpha": 20.0, "beta": 100.0},
  "precision": "fp64", "device": "cpu", "gpu_path": "cusolver",
  "output": {"samples": 7, "trajectories": [3, 0, 39], "fields": ["q", "residual"]}
})";

TEST(SpecProto, TypedSpecMeansWhatItsJsonMeans) {
  const RunSpec typed = parse_run_spec(spec_json_from_proto(typed_scara_sweep()));
  const RunSpec text = parse_run_spec(parse_spec_text(kScaraSweepJson));
  EXPECT_EQ(typed.model, text.model);
  EXPECT_EQ(typed.batch.count, 40);
  EXPECT_TRUE(same_bits(typed.batch.params, text.batch.params));
  EXPECT_TRUE(same_bits(typed.batch.q0, text.batch.q0));
  EXPECT_TRUE(same_bits(typed.batch.qd0, text.batch.qd0));
  EXPECT_EQ(typed.settings.method, Method::kRk4);
  EXPECT_EQ(typed.settings.t_end, text.settings.t_end);
  EXPECT_EQ(typed.settings.dt, text.settings.dt);
  EXPECT_EQ(typed.settings.alpha, 20.0);
  EXPECT_EQ(typed.settings.beta, 100.0);
  EXPECT_TRUE(typed.settings.assemble);
  EXPECT_EQ(typed.device, Device::kCpu);
  EXPECT_EQ(typed.settings.gpu_path, GpuPath::kCusolver);
  EXPECT_EQ(typed.output.samples, 7);
  EXPECT_EQ(typed.output.trajectory_ids, (std::vector<std::int32_t>{3, 0, 39}));
  EXPECT_TRUE(typed.output.q && typed.output.residual);
  EXPECT_FALSE(typed.output.qd || typed.output.force);
}

TEST(SpecProto, TypedControlMeansWhatItsJsonMeans) {
  v1::RunSpec s;
  s.set_model("scara");
  s.set_device("cpu");
  v1::ControlSpec* c = s.mutable_control();
  c->add_rows(0);
  c->add_rows(1);
  (*c->mutable_params())["m4"] = 0.7;
  c->add_actuation("q1");
  c->add_actuation("q2");
  c->mutable_robust()->set_gain(3.0);
  (*s.mutable_sweep()->mutable_vary())["control.params.m3"].mutable_values()->add_values(1.5);
  s.mutable_sweep()->set_count(3);
  const RunSpec typed = parse_run_spec(spec_json_from_proto(s));
  const RunSpec text = parse_run_spec(parse_spec_text(R"({
    "model": "scara", "device": "cpu",
    "control": {"rows": [0, 1], "params": {"m4": 0.7}, "actuation": ["q1", "q2"],
                "robust": {"gain": 3.0}},
    "sweep": {"count": 3, "vary": {"control.params.m3": {"values": [1.5]}}}})"));
  const ControlOptions& a = typed.settings.control;
  const ControlOptions& b = text.settings.control;
  EXPECT_TRUE(a.active && b.active);
  EXPECT_EQ(a.servo_rows, 3u);
  EXPECT_EQ(a.servo_rows, b.servo_rows);
  EXPECT_EQ(a.actuated, 3u);
  EXPECT_EQ(a.actuation, Actuation::kCoordinates);
  EXPECT_EQ(a.gain, 3.0);
  EXPECT_EQ(a.epsilon, b.epsilon);
  EXPECT_TRUE(same_bits(typed.batch.control_params, text.batch.control_params));
  EXPECT_TRUE(same_bits(typed.batch.params, text.batch.params));
  const std::size_t m3 = 2, m4 = 3;  // scara's parameter order
  EXPECT_EQ(typed.batch.control_params[m3 * 3], 1.5);
  EXPECT_EQ(typed.batch.control_params[m4 * 3], 0.7);
  EXPECT_TRUE(typed.output.control);
}

TEST(SpecProto, TypedActuationMatrixMeansWhatItsJsonMeans) {
  const char* definition = R"({"format": "ukes-model/1", "name": "cart",
    "coordinates": ["x", "y"], "parameters": [{"name": "k", "value": 2.0}],
    "mass": {"diagonal": ["1", "1"]}, "force": ["0", "0"], "position_constraints": ["x - y"]})";
  v1::RunSpec s;
  s.set_model_definition_json(definition);
  s.set_device("cpu");
  v1::ControlSpec* c = s.mutable_control();
  for (const char* entry : {"k * cos(x)", "0"}) c->add_actuation_matrix()->add_entries(entry);
  const json typed = spec_json_from_proto(s);
  EXPECT_EQ(typed["control"]["actuation"], json::parse(R"j([["k * cos(x)"], ["0"]])j"));
  const RunSpec parsed = parse_run_spec(typed);
  EXPECT_EQ(parsed.settings.control.actuation, Actuation::kMatrix);
  EXPECT_EQ(parsed.model->user->definition.actuation_columns, 1);

  c->add_actuation("x");
  try {
    spec_json_from_proto(s);
    ADD_FAILURE() << "both forms of actuation accepted";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.field(), "control.actuation_matrix");
  }
}

TEST(SpecProto, TypedRelativeDegreesMeanWhatTheirJsonMeans) {
  v1::RunSpec s;
  s.set_model("scara");
  s.set_device("cpu");
  v1::ControlSpec* c = s.mutable_control();
  c->add_relative_degree(3);  // one value: every servo row
  EXPECT_EQ(spec_json_from_proto(s)["control"]["relative_degree"], json(3));
  for (const int row : {3, 2, 1, 0}) c->add_rows(row);
  c->clear_relative_degree();
  for (const int degree : {4, 2, 2, 2}) c->add_relative_degree(degree);
  const json typed = spec_json_from_proto(s);
  EXPECT_EQ(typed["control"]["relative_degree"], json::array({4, 2, 2, 2}));
  const ControlOptions parsed = parse_run_spec(typed).settings.control;
  EXPECT_EQ(parsed.higher_degree_rows, 8u);  // row 3, listed first
  EXPECT_EQ(parsed.relative_degree[3], 4);
}

TEST(SpecProto, TypedShardMeansWhatItsJsonMeans) {
  v1::RunSpec s = typed_scara_sweep();
  s.mutable_shard()->set_first(30);
  s.mutable_shard()->set_count(10);
  const RunSpec typed = parse_run_spec(spec_json_from_proto(s));
  json doc = parse_spec_text(kScaraSweepJson);
  doc["shard"] = {{"first", 30}, {"count", 10}};
  const RunSpec text = parse_run_spec(doc);
  EXPECT_EQ(typed.batch.count, 10);
  EXPECT_EQ(typed.shard.first, 30);
  EXPECT_EQ(typed.whole_count, 40);
  EXPECT_TRUE(same_bits(typed.batch.q0, text.batch.q0));
  EXPECT_EQ(typed.output.trajectory_ids, (std::vector<std::int32_t>{9}));  // system 39
}

TEST(SpecProto, TypedDeviceIdsMeanWhatTheirJsonMeans) {
  v1::RunSpec s = typed_scara_sweep();
  s.set_device("auto");  // a cpu run takes no device_ids
  s.add_device_ids(1);
  s.add_device_ids(0);
  ParseOptions two;
  two.gpu_available = true;
  two.gpu_devices = 2;
  EXPECT_EQ(spec_json_from_proto(s).at("device_ids"), json::array({1, 0}));
  EXPECT_EQ(parse_run_spec(spec_json_from_proto(s), two).device_ids, (std::vector<int>{1, 0}));
}

TEST(SpecProto, UnsetFieldsTakeTheDefaults) {
  v1::RunSpec s;
  s.set_model("duffing");
  const json doc = spec_json_from_proto(s);
  EXPECT_EQ(doc, json({{"model", "duffing"}}));
}

TEST(SpecProto, ContradictionsAndGapsNameTheirField) {
  v1::RunSpec both = typed_scara_sweep();
  both.mutable_output()->set_trajectories("all");
  try {
    spec_json_from_proto(both);
    FAIL() << "trajectories and trajectory_ids together were accepted";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.field(), "output.trajectories");
  }
  v1::RunSpec no_kind = typed_scara_sweep();
  (*no_kind.mutable_sweep()->mutable_vary())["params.m1"];  // a distribution of no kind
  try {
    parse_run_spec(spec_json_from_proto(no_kind));
    FAIL() << "a distribution without a kind was accepted";
  } catch (const SpecError& e) {
    EXPECT_NE(e.field().find("sweep.vary.params.m1"), std::string::npos) << e.field();
  }
  v1::RunSpec nan = typed_scara_sweep();
  nan.mutable_integrator()->set_rtol(std::numeric_limits<double>::quiet_NaN());
  try {
    parse_run_spec(spec_json_from_proto(nan));
    FAIL() << "a NaN tolerance was accepted";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.field(), "integrator.rtol");
  }
}

TEST(StatusProto, EveryStatusRoundTrips) {
  for (int s = 0; s < kStatusCount; ++s) {
    EXPECT_NE(status_to_proto(s), v1::SYSTEM_STATUS_UNSPECIFIED);
    EXPECT_EQ(status_from_proto(status_to_proto(s)), s);
  }
  EXPECT_EQ(status_to_proto(kStatusCount), v1::SYSTEM_STATUS_UNSPECIFIED);
  EXPECT_EQ(status_from_proto(v1::SYSTEM_STATUS_UNSPECIFIED), -1);
}

// Systems [begin, end) of a batch, sliced row by row (structure of arrays).
Batch slice(const Batch& b, int begin, int end) {
  Batch p;
  p.model = b.model;
  p.count = end - begin;
  const auto take = [&](const std::vector<double>& src, std::vector<double>& dst) {
    const std::size_t rows = src.size() / b.count;
    for (std::size_t r = 0; r < rows; ++r)
      dst.insert(dst.end(), src.begin() + static_cast<std::ptrdiff_t>(r * b.count + begin),
                 src.begin() + static_cast<std::ptrdiff_t>(r * b.count + end));
  };
  for_each_input([&](const FieldInfo&, const auto& src, auto& dst) { take(src, dst); }, b, p);
  return p;
}

// Runs `spec` in two parts, cuts each into chunks under `budget` bytes, and feeds the chunks to
// an assembler; the rebuilt outcome must equal a one-piece in-process run (returned).
RunOutcome expect_round_trip(const json& doc, std::size_t budget) {
  const RunSpec spec = parse_run_spec(doc);
  const RunOutcome whole = execute(spec, {.threads = 2});

  std::vector<v1::StreamJobResultsResponse> chunks;
  const auto push = [&](v1::StreamJobResultsResponse c) {
    c.set_sequence(static_cast<std::int64_t>(chunks.size()) + 1);
    chunks.push_back(std::move(c));
  };
  v1::StreamJobResultsResponse header;
  v1::JobHeader* h = header.mutable_header();
  h->set_spec_json(doc.dump());
  h->set_count(spec.batch.count);
  h->set_backend("cpu");
  for (auto id : spec.output.trajectory_ids) h->add_trajectory_ids(id);
  push(header);
  const int split = spec.batch.count / 3;
  for (const auto& [begin, end] : {std::pair{0, split}, std::pair{split, spec.batch.count}}) {
    std::vector<std::int32_t> local;
    for (auto id : spec.output.trajectory_ids)
      if (id >= begin && id < end) local.push_back(id - begin);
    BatchResults part;
    EnsembleSettings settings = spec.settings;
    settings.threads = 1;
    const Batch inputs = slice(spec.batch, begin, end);
    run_ensemble_cpu(inputs, settings, part, local);
    for (auto& s : summary_chunks(inputs, part, begin, budget)) {
      v1::StreamJobResultsResponse c;
      *c.mutable_summaries() = std::move(s);
      push(std::move(c));
    }
    for (auto& t : trajectory_chunks(part, begin, spec.output, budget)) {
      v1::StreamJobResultsResponse c;
      *c.mutable_trajectory() = std::move(t);
      push(std::move(c));
    }
  }
  v1::StreamJobResultsResponse stats;
  statistics_to_proto(whole.statistics, stats.mutable_statistics());
  push(stats);
  v1::StreamJobResultsResponse end;
  end.mutable_end()->set_state(v1::JOB_STATE_SUCCEEDED);
  push(end);

  ResultAssembler a;
  for (const auto& c : chunks) {
    // Payload budget plus a little framing per repeated field.
    if (!c.has_header() && !c.has_statistics()) {
      EXPECT_LE(c.ByteSizeLong(), budget + 256);
    }
    a.add(c);
  }
  EXPECT_TRUE(a.finished());
  EXPECT_EQ(a.systems_received(), spec.batch.count);
  const BatchResults& r = a.outcome().results;
  const BatchResults& w = whole.results;
  EXPECT_EQ(r.status, w.status);
  EXPECT_TRUE(same_bits(r.t, w.t));
  EXPECT_TRUE(same_bits(r.q, w.q));
  EXPECT_TRUE(same_bits(r.qd, w.qd));
  EXPECT_TRUE(same_bits(r.residual_max, w.residual_max));
  EXPECT_TRUE(same_bits(r.force_max, w.force_max));
  EXPECT_TRUE(same_bits(r.control_effort_max, w.control_effort_max));
  EXPECT_TRUE(same_bits(r.inconsistency_max, w.inconsistency_max));
  EXPECT_EQ(r.steps, w.steps);
  EXPECT_EQ(r.rejected, w.rejected);
  EXPECT_EQ(r.traj_ids, w.traj_ids);
  // The inputs came with the summaries, not from re-running the spec's samplers.
  const Batch& inputs = a.spec().batch;
  EXPECT_TRUE(same_bits(inputs.params, spec.batch.params));
  EXPECT_TRUE(same_bits(inputs.q0, spec.batch.q0));
  EXPECT_TRUE(same_bits(inputs.qd0, spec.batch.qd0));
  EXPECT_TRUE(same_bits(inputs.control_params, spec.batch.control_params));
  const OutputSpec& o = spec.output;
  // Fields that were not asked for do not travel.
  EXPECT_TRUE(!o.q || same_bits(r.traj_q, w.traj_q));
  EXPECT_TRUE(!o.qd || same_bits(r.traj_qd, w.traj_qd));
  EXPECT_TRUE(!o.residual || same_bits(r.traj_residual, w.traj_residual));
  EXPECT_TRUE(!o.force || same_bits(r.traj_force, w.traj_force));
  EXPECT_TRUE(!o.control || same_bits(r.traj_control, w.traj_control));
  const EnsembleStatistics& s = a.outcome().statistics;
  EXPECT_EQ(s.count, whole.statistics.count);
  EXPECT_EQ(s.by_status, whole.statistics.by_status);
  EXPECT_EQ(s.q.size(), whole.statistics.q.size());
  for (std::size_t j = 0; j < std::min(s.q.size(), whole.statistics.q.size()); ++j) {
    const Summary &x = s.q[j], &y = whole.statistics.q[j];
    EXPECT_EQ(x.count, y.count);
    EXPECT_TRUE(same_bits({x.min, x.max, x.mean, x.std, x.p50, x.p95, x.p99},
                          {y.min, y.max, y.mean, y.std, y.p50, y.p95, y.p99}));
  }
  return whole;
}

TEST(ResultChunks, WholeSystemsPerChunkRoundTrip) {
  expect_round_trip(parse_spec_text(kScaraSweepJson), kChunkBytes);
}

TEST(ResultChunks, SmallBudgetsSplitSystemsAndSamplesAndStillRoundTrip) {
  json doc = parse_spec_text(kScaraSweepJson);
  doc["output"]["samples"] = 61;
  doc["output"]["fields"] = {"q", "qd", "residual", "force"};
  // 61 samples x (3 x 4 + 6) doubles = 8.8 kB per system: a 2 kB budget cuts each in five.
  expect_round_trip(doc, 2048);
}

TEST(ResultChunks, ControlledRunsRoundTripWithTheirControllerAndEffort) {
  json doc = parse_spec_text(kScaraSweepJson);
  doc["gpu_path"] = "auto";
  doc["control"] = {{"params", {{"m4", 0.5}}}};
  doc["output"]["fields"] = {"q", "residual", "control"};
  const RunOutcome whole = expect_round_trip(doc, 2048);
  EXPECT_GT(whole.results.control_effort_max[0], 0.0);
  EXPECT_EQ(whole.results.traj_control.size(), whole.results.traj_q.size());
}

TEST(ResultChunks, FailedSystemsKeepTheirStatusAndNaNSamples) {
  // scara with the paper's gains leaves the workspace (status inconsistent) early.
  const json doc = {{"model", "scara"},
                    {"systems", json::array({json::object(), json::object()})},
                    {"stabilization", {{"alpha", 0.5}, {"beta", 200.0}}},
                    {"integrator", {{"t_end", 0.5}}},
                    {"output", {{"samples", 11}, {"trajectories", "all"}}}};
  const RunOutcome out = expect_round_trip(doc, 4096);
  EXPECT_EQ(out.statistics.by_status[static_cast<int>(Status::kInconsistent)], 2);
}

TEST(ResultAssembler, RefusesGapsDuplicatesAndChunksBeforeTheHeader) {
  const json doc = {{"model", "duffing"}};
  v1::StreamJobResultsResponse header;
  header.set_sequence(1);
  header.mutable_header()->set_spec_json(doc.dump());
  header.mutable_header()->set_count(1);
  v1::StreamJobResultsResponse progress;
  progress.mutable_progress()->set_systems_done(1);

  ResultAssembler before;
  progress.set_sequence(1);
  EXPECT_THROW(before.add(progress), std::runtime_error);

  ResultAssembler a;
  a.add(header);
  EXPECT_THROW(a.add(header), std::runtime_error);  // duplicate
  progress.set_sequence(3);
  EXPECT_THROW(a.add(progress), std::runtime_error);  // gap
  progress.set_sequence(2);
  a.add(progress);
  EXPECT_EQ(a.last_sequence(), 2);
  EXPECT_EQ(a.progress().systems_done(), 1);

  v1::StreamJobResultsResponse bad;
  bad.set_sequence(3);
  bad.mutable_summaries()->set_first_id(0);
  bad.mutable_summaries()->set_count(2);  // the batch has one system
  EXPECT_THROW(a.add(bad), std::runtime_error);
}

TEST(ResultAssembler, RefusesSummariesWithoutTheSystemsInputs) {
  const json doc = {{"model", "duffing"}, {"sweep", {{"count", 3}}}};
  const RunSpec spec = parse_run_spec(doc, ParseOptions{});
  BatchResults part;
  run_ensemble_cpu(spec.batch, spec.settings, part, {});
  v1::StreamJobResultsResponse header;
  header.set_sequence(1);
  header.mutable_header()->set_spec_json(doc.dump());
  header.mutable_header()->set_count(3);
  v1::StreamJobResultsResponse summaries;
  summaries.set_sequence(2);
  *summaries.mutable_summaries() = summary_chunks(spec.batch, part, 0).at(0);
  summaries.mutable_summaries()->mutable_q0()->RemoveLast();
  ResultAssembler a;
  a.add(header);
  EXPECT_THROW(a.add(summaries), std::runtime_error);
}

// A header's spec whose event records fit this client's limit alone (24 systems x 1024 records
// of (t, q, qd): 983,040 bytes of 984,000), but not with the rest of each system's record (its
// event counts, results and inputs), is refused; without its events the same spec is taken.
TEST(ResultAssembler, CountsTheEventRecordsAgainstItsLimit) {
  json doc = {{"model", "duffing"},
              {"sweep", {{"count", 24}}},
              {"output", {{"trajectories", "none"}}},
              {"events", {{{"name", "crossing"}, {"condition", "x1"}, {"max", 1024}}}}};
  const auto header_of = [](const json& spec) {
    v1::StreamJobResultsResponse header;
    header.set_sequence(1);
    header.mutable_header()->set_spec_json(spec.dump());
    header.mutable_header()->set_count(24);
    return header;
  };
  const std::int64_t limit = 984'000;
  ResultAssembler with_events(limit);
  try {
    with_events.add(header_of(doc));
    ADD_FAILURE() << "a header over the limit was taken";
  } catch (const std::runtime_error& e) {
    // It names what does not fit: the systems' records with their events, not trajectories.
    EXPECT_NE(std::string(e.what()).find("1024 records of 1 events each"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("over this client's limit of 984000"), std::string::npos)
        << e.what();
  }
  doc.erase("events");
  ResultAssembler without(limit);
  EXPECT_NO_THROW(without.add(header_of(doc)));
}

}  // namespace
}  // namespace ukes
