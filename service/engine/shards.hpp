// One run split into shards (ranges of its systems, each run anywhere: another server, another
// MPI rank) and put back together. A shard is the spec with "shard": {first, count}
// (service/runspec/run_spec.hpp); system i's inputs depend only on the spec and i, so a shard's
// systems are the whole run's to the bit, and so are the statistics merge_shards recomputes over
// them with the function a single run uses (docs/SCALING.md).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "service/engine/engine.hpp"
#include "service/runspec/run_spec.hpp"

namespace ukes {

// `count` systems in min(shards, count) consecutive ranges, in order, whose sizes differ by at
// most one (the first ones are the larger). std::invalid_argument when count or shards < 1.
std::vector<SystemRange> shard_ranges(std::int64_t count, int shards);

// How many systems a spec document describes (sweep.count, the explicit systems, or the one
// default system), read without validating the rest; 0 when the document does not say
// plainly (the server's validation will tell the user why).
std::int64_t spec_system_count(const nlohmann::json& spec);

// The spec document of one shard: `spec` with "shard" set to `range`.
nlohmann::json shard_spec(nlohmann::json spec, const SystemRange& range);

// One finished shard: the spec it ran (with its "shard") and what it gave.
struct ShardResult {
  const RunSpec& spec;
  const RunOutcome& outcome;
};

struct MergedRun {
  RunSpec spec;  // the whole run's: no shard, every system's inputs in the batch
  RunOutcome outcome;
};

// The whole run from its completed shards, given in system order and covering it without gaps:
// inputs, per-system results and recorded trajectories in the whole run's order, statistics
// recomputed over every system. Timing is the slowest shard's (they ran side by side), steps and
// threads are summed, and the backend is the shards' when they agree ("cpu+gpu" otherwise).
// std::invalid_argument when the shards do not fit together.
MergedRun merge_shards(const std::vector<ShardResult>& shards);

}  // namespace ukes
