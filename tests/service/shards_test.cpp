// A run split into shards (service/engine/shards.hpp): each shard spec runs exactly its systems of
// the whole run (sweep samples, explicit systems, recorded trajectories by whole-run id), and
// 1, 2, 3 and 7 shards of uneven sizes, run in-process and merged, give the one run's results
// document and statistics to the bit. Bad shards are refused naming the field.
#include "service/engine/shards.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "service/engine/shard_bytes.hpp"
#include "service/results/results_json.hpp"
#include "service/runspec/spec_text.hpp"

namespace ukes {
namespace {

using json = nlohmann::json;

const char* const kSweep = R"({
  "model": "scara", "device": "cpu",
  "sweep": {"count": 301, "seed": 9, "sampler": "lhs",
            "vary": {"q0[0]": {"normal": [0.0, 0.01]}, "params.m1": {"uniform": [0.9, 1.1]}}},
  "integrator": {"method": "dopri5", "t_end": 0.05},
  "output": {"samples": 5, "trajectories": [300, 3, 150, 0, 77]}
})";

const char* const kExplicit = R"({
  "model": "duffing", "device": "cpu",
  "systems": [{"params": {"m1": 2.1}}, {"q0": [0.5, 0.25], "qd0": [6.0, 0.0]},
              {"params": {"A0": 0.5}}, {}, {"params": {"m1": 1.7}}],
  "integrator": {"method": "rk4", "t_end": 0.5},
  "output": {"samples": 3, "trajectories": "first:4"}
})";

RunOutcome run(const RunSpec& spec) {
  ExecuteOptions options;
  options.threads = 2;
  return execute(spec, options);
}

// The results document without what depends on timing or on how many threads ran.
json comparable(json results) {
  for (const char* key : {"elapsed_s", "total_s", "system_steps_per_s"}) results.erase(key);
  results["settings"].erase("threads");
  return results;
}

// The whole run in `shards` shards, each run in-process on its own and merged.
json sharded_results(const char* text, int shards) {
  const json doc = parse_spec_text(text);
  std::vector<RunSpec> specs;
  std::vector<RunOutcome> outcomes;
  for (const SystemRange& r : shard_ranges(spec_system_count(doc), shards)) {
    specs.push_back(parse_run_spec(shard_spec(doc, r)));
    outcomes.push_back(run(specs.back()));
  }
  std::vector<ShardResult> parts;
  for (std::size_t k = 0; k < specs.size(); ++k) parts.push_back({specs[k], outcomes[k]});
  const MergedRun merged = merge_shards(parts);
  return comparable(results_json(merged.spec, merged.outcome));
}

TEST(Shards, RangesAreConsecutiveAndDifferByAtMostOne) {
  const std::vector<SystemRange> r = shard_ranges(10, 3);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].first, 0);
  EXPECT_EQ(r[0].count, 4);
  EXPECT_EQ(r[1].first, 4);
  EXPECT_EQ(r[1].count, 3);
  EXPECT_EQ(r[2].first, 7);
  EXPECT_EQ(r[2].count, 3);
  EXPECT_EQ(shard_ranges(2, 7).size(), 2u);  // never an empty shard
  EXPECT_THROW(shard_ranges(0, 2), std::invalid_argument);
}

TEST(Shards, ASystemCountIsReadFromTheDocument) {
  EXPECT_EQ(spec_system_count(parse_spec_text(kSweep)), 301);
  EXPECT_EQ(spec_system_count(parse_spec_text(kExplicit)), 5);
  EXPECT_EQ(spec_system_count(json{{"model", "duffing"}}), 1);
  EXPECT_EQ(spec_system_count(json{{"sweep", {{"count", "many"}}}}), 0);
}

TEST(Shards, AShardRunsItsSystemsOfTheWholeRun) {
  const json doc = parse_spec_text(kSweep);
  const RunSpec whole = parse_run_spec(doc);
  const RunSpec shard = parse_run_spec(shard_spec(doc, {150, 100}));
  EXPECT_TRUE(shard.sharded());
  EXPECT_EQ(shard.batch.count, 100);
  EXPECT_EQ(shard.whole_count, 301);
  for (int i = 0; i < 100; ++i)
    for (int k = 0; k < whole.model->n; ++k)
      ASSERT_EQ(shard.batch.q0[static_cast<std::size_t>(k) * 100 + i],
                whole.batch.q0[static_cast<std::size_t>(k) * 301 + 150 + i]);
  // Of the recorded 300, 3, 150, 0, 77 only 150 is the shard's: its system 0.
  EXPECT_EQ(shard.output.trajectory_ids, std::vector<std::int32_t>{0});
  const json results = results_json(shard, run(shard));
  EXPECT_EQ(results.at("systems").at(0).at("id"), 150);
  EXPECT_EQ(results.at("shard"), (json{{"first", 150}, {"count", 100}, {"of", 301}}));
  EXPECT_EQ(results.at("ensemble").at("count"), 100);
}

TEST(Shards, MergedShardsAreTheOneRunToTheBit) {
  for (const char* text : {kSweep, kExplicit}) {
    const RunSpec whole = parse_run_spec(parse_spec_text(text));
    const json one = comparable(results_json(whole, run(whole)));
    for (const int shards : {1, 2, 3, 7}) {
      SCOPED_TRACE(std::to_string(shards) + " shards of " + whole.model->name);
      const json merged = sharded_results(text, shards);
      EXPECT_EQ(merged.at("systems"), one.at("systems"));
      EXPECT_EQ(merged.at("ensemble"), one.at("ensemble"));  // recomputed, not averaged
      EXPECT_EQ(merged, one);
    }
  }
}

TEST(Shards, MergingRefusesShardsThatDoNotCoverTheRun) {
  const json doc = parse_spec_text(kExplicit);
  const RunSpec a = parse_run_spec(shard_spec(doc, {0, 2}));
  const RunSpec c = parse_run_spec(shard_spec(doc, {3, 2}));
  const RunOutcome ra = run(a), rc = run(c);
  EXPECT_THROW(merge_shards({{a, ra}, {c, rc}}), std::invalid_argument);  // a gap
  EXPECT_THROW(merge_shards({{c, rc}, {a, ra}}), std::invalid_argument);  // out of order
  EXPECT_THROW(merge_shards({{a, ra}}), std::invalid_argument);           // short
}

TEST(Shards, APackedShardUnpacksToItsRun) {
  const json doc = shard_spec(parse_spec_text(kSweep), {150, 151});
  const RunSpec spec = parse_run_spec(doc);
  const RunOutcome outcome = run(spec);
  const std::string bytes = pack_shard(spec, outcome);

  ParseOptions options;
  options.build_batch = false;  // as the merging rank parses it: inputs come in the bytes
  RunSpec received = parse_run_spec(doc, options);
  RunOutcome got;
  unpack_shard(bytes, received, got);
  EXPECT_EQ(received.batch.params, spec.batch.params);
  EXPECT_EQ(received.batch.q0, spec.batch.q0);
  EXPECT_EQ(got.results.status, outcome.results.status);
  EXPECT_EQ(got.results.q, outcome.results.q);
  EXPECT_EQ(got.results.steps, outcome.results.steps);
  EXPECT_EQ(got.results.traj_ids, outcome.results.traj_ids);
  EXPECT_EQ(got.results.traj_q, outcome.results.traj_q);
  EXPECT_EQ(got.steps, outcome.steps);
  EXPECT_EQ(got.backend, "cpu");

  RunSpec again = parse_run_spec(doc, options);
  EXPECT_THROW(unpack_shard(bytes.substr(0, bytes.size() - 3), again, got), std::runtime_error);
  RunSpec other = parse_run_spec(shard_spec(parse_spec_text(kSweep), {0, 151}), options);
  EXPECT_THROW(unpack_shard(bytes, other, got), std::runtime_error);  // another shard's bytes
}

std::string rejected_field(const json& spec) {
  try {
    parse_run_spec(spec);
  } catch (const SpecError& e) {
    return e.field();
  }
  return "";
}

TEST(Shards, BadShardsAreRefusedNamingTheField) {
  const json doc = parse_spec_text(kExplicit);
  json s = doc;
  s["shard"] = {{"first", 5}, {"count", 1}};
  EXPECT_EQ(rejected_field(s), "shard.first");  // past the last system
  s["shard"] = {{"first", 3}, {"count", 3}};
  EXPECT_EQ(rejected_field(s), "shard.count");  // runs past the end
  s["shard"] = {{"first", 0}, {"count", 0}};
  EXPECT_EQ(rejected_field(s), "shard.count");
  s["shard"] = {{"first", 0}};
  EXPECT_EQ(rejected_field(s), "shard.count");
  s["shard"] = {{"first", 0}, {"count", 1}, {"stride", 2}};
  EXPECT_EQ(rejected_field(s), "shard.stride");
  s["shard"] = 3;
  EXPECT_EQ(rejected_field(s), "shard");
}

TEST(Shards, TheLimitsJudgeTheShard) {
  json doc = parse_spec_text(kSweep);
  doc["sweep"]["count"] = 5000;
  ParseOptions options;
  options.limits.max_systems = 1000;
  options.build_batch = false;
  EXPECT_THROW(parse_run_spec(doc, options), LimitError);
  EXPECT_EQ(parse_run_spec(shard_spec(doc, {4000, 1000}), options).batch.count, 1000);
  try {
    parse_run_spec(shard_spec(doc, {0, 1001}), options);
    ADD_FAILURE() << "a shard over the limit was accepted";
  } catch (const LimitError& e) {
    EXPECT_EQ(e.field(), "shard.count");
  }
}

}  // namespace
}  // namespace ukes
