#include "service/engine/shards.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "kernels/backend/cpu/cpu_backend.hpp"

namespace ukes {

namespace {

// Copies the `part` arrays ([component][part_count]) into systems first.. of `all`
// ([component][all_count]).
template <class Value>
void place(const std::vector<Value>& part, std::size_t part_count, std::vector<Value>& all,
           std::size_t all_count, std::size_t first) {
  if (part_count == 0) return;
  const std::size_t width = part.size() / part_count;
  for (std::size_t k = 0; k < width; ++k)
    std::copy_n(part.begin() + static_cast<std::ptrdiff_t>(k * part_count), part_count,
                all.begin() + static_cast<std::ptrdiff_t>(k * all_count + first));
}

// The whole run's recorded systems, in the spec's order.
std::vector<std::int32_t> whole_trajectory_ids(const OutputSpec& out, std::int64_t whole) {
  std::vector<std::int32_t> ids;
  switch (out.trajectories) {
    case TrajectoryMode::kNone:
      break;
    case TrajectoryMode::kAll:
    case TrajectoryMode::kFirst: {
      const std::int64_t n =
          out.trajectories == TrajectoryMode::kAll ? whole : std::min(out.first, whole);
      for (std::int64_t i = 0; i < n; ++i) ids.push_back(static_cast<std::int32_t>(i));
      break;
    }
    case TrajectoryMode::kList:
      ids = out.listed_ids;
      break;
  }
  return ids;
}

// Throws unless the shards are one run's, in order, covering it.
void check_cover(const std::vector<ShardResult>& shards) {
  if (shards.empty()) throw std::invalid_argument("no shards to merge");
  const RunSpec& head = shards.front().spec;
  std::int64_t next = 0;
  for (std::size_t s = 0; s < shards.size(); ++s) {
    const RunSpec& spec = shards[s].spec;
    const std::string which = "shard " + std::to_string(s);
    if (spec.model->name != head.model->name || spec.whole_count != head.whole_count)
      throw std::invalid_argument(which + " belongs to another run");
    if (spec.shard.first != next)
      throw std::invalid_argument(which + " starts at system " + std::to_string(spec.shard.first) +
                                  ", expected " + std::to_string(next));
    if (shards[s].outcome.end != RunEnd::kCompleted ||
        shards[s].outcome.results.count != spec.batch.count)
      throw std::invalid_argument(which + " did not complete");
    next = spec.shard.end();
  }
  if (next != head.whole_count)
    throw std::invalid_argument("the shards cover " + std::to_string(next) + " of " +
                                std::to_string(head.whole_count) + " systems");
}

// Where the merged run ran, and for how long: shards run side by side.
void merge_run_facts(const std::vector<ShardResult>& shards, RunOutcome& out) {
  for (const ShardResult& s : shards) {
    const RunOutcome& o = s.outcome;
    out.steps += o.steps;
    out.threads += o.threads;
    out.elapsed_s = std::max(out.elapsed_s, o.elapsed_s);
    out.total_s = std::max(out.total_s, o.total_s);
    if (out.backend.empty())
      out.backend = o.backend;
    else if (out.backend != o.backend)
      out.backend = "cpu+gpu";
    if (!o.fallback_reason.empty() && out.fallback_reason.empty()) {
      out.fallback_reason = o.fallback_reason;
      out.fallback_from = static_cast<int>(s.spec.shard.first) + o.fallback_from;
    }
    if (out.gpu_kernel.empty()) out.gpu_kernel = o.gpu_kernel;
    if (!o.gpu_loss.empty())
      out.gpu_loss += (out.gpu_loss.empty() ? "" : "; ") + std::string("shard from system ") +
                      std::to_string(s.spec.shard.first) + ": " + o.gpu_loss;
  }
  out.results.backend = out.backend;
  out.results.elapsed_s = out.elapsed_s;
}

}  // namespace

std::vector<SystemRange> shard_ranges(std::int64_t count, int shards) {
  if (count < 1 || shards < 1)
    throw std::invalid_argument("shard_ranges: count and shards must be at least 1");
  const std::int64_t k = std::min<std::int64_t>(shards, count);
  std::vector<SystemRange> ranges;
  std::int64_t first = 0;
  for (std::int64_t s = 0; s < k; ++s) {
    const std::int64_t size = count / k + (s < count % k ? 1 : 0);
    ranges.push_back({first, size});
    first += size;
  }
  return ranges;
}

std::int64_t spec_system_count(const nlohmann::json& spec) {
  if (!spec.is_object()) return 0;
  const auto sweep = spec.find("sweep");
  const auto systems = spec.find("systems");
  if (sweep != spec.end()) {
    const auto count = sweep->is_object() ? sweep->find("count") : sweep->end();
    return count != sweep->end() && count->is_number_integer() ? count->get<std::int64_t>() : 0;
  }
  if (systems != spec.end()) return systems->is_array() ? std::ssize(*systems) : 0;
  return 1;
}

nlohmann::json shard_spec(nlohmann::json spec, const SystemRange& range) {
  spec["shard"] = {{"first", range.first}, {"count", range.count}};
  return spec;
}

MergedRun merge_shards(const std::vector<ShardResult>& shards) {
  check_cover(shards);
  const RunSpec& head = shards.front().spec;
  const auto whole = static_cast<std::size_t>(head.whole_count);
  MergedRun merged{head, {}};
  RunSpec& spec = merged.spec;
  spec.shard = {0, head.whole_count};
  spec.output.trajectory_ids = whole_trajectory_ids(head.output, head.whole_count);
  Batch& batch = spec.batch;
  batch.count = static_cast<int>(whole);
  const RecordShape shape = record_shape(spec);
  for_each_input([&](const FieldInfo& f, auto& v) { v.assign(whole * shape(f.width), 0.0); },
                 batch);
  BatchResults& results = merged.outcome.results;
  results.allocate(batch, spec.settings.samples, spec.output.trajectory_ids, spec.settings.events);

  for (const ShardResult& s : shards) {
    const auto first = static_cast<std::size_t>(s.spec.shard.first);
    const auto count = static_cast<std::size_t>(s.spec.batch.count);
    for_each_input(
        [&](const FieldInfo&, const auto& from, auto& to) { place(from, count, to, whole, first); },
        s.spec.batch, batch);
    for_each_result(
        [&](const FieldInfo&, const auto& from, auto& to) { place(from, count, to, whole, first); },
        s.outcome.results, results);
    copy_trajectories(s.outcome.results, static_cast<int>(first), results);
  }
  RunOutcome& out = merged.outcome;
  out.systems_done = batch.count;
  merge_run_facts(shards, out);
  // The single run's function, in system order, on this machine's threads.
  out.statistics = ensemble_statistics(results, default_cpu_threads());
  return merged;
}

}  // namespace ukes
