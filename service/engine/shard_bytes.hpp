// A finished shard's inputs and results as one byte string, and back: what an MPI rank sends the
// rank that merges (client/mpi_run.cpp). Every field of the per-system record, the inputs and
// the recorded trajectories travel in the order of their tables (system_record.hpp), as the
// machine holds them: both ends are the same build on the same kind of machine.
#pragma once

#include <string>

#include "service/engine/engine.hpp"
#include "service/runspec/run_spec.hpp"

namespace ukes {

std::string pack_shard(const RunSpec& spec, const RunOutcome& outcome);

// Fills `spec.batch` (its inputs) and `outcome` from `bytes`, for `spec` parsed from the same
// shard's spec document (its batch may be left unbuilt). std::runtime_error when the bytes are
// not a packed shard of that spec (truncated, another count, another shape).
void unpack_shard(const std::string& bytes, RunSpec& spec, RunOutcome& outcome);

}  // namespace ukes
