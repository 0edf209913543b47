// The results document of a run (the docs/RUNSPEC.md contract, "Results"):
//   model, n, m, backend, precision, elapsed_s,
//   systems: [{id, <every result field of kernels/ensemble/system_record.hpp in table order:
//              statuses by name, residual maxima as {position, position_rate, velocity}>,
//              sample (swept systems: {target: value})}],
//   ensemble: {count, ok, failed, by_status {status: count}, q [summary per coordinate],
//              qd [...], residual_max {position [summary per row], position_rate [...],
//              velocity [...]}, a summary per scalar of UKES_SUMMARIZED_SCALARS (force_max,
//              control_effort_max, steps)}
// with summary = {name, count, min, max, mean, std, p50, p95, p99} over the systems that ended ok,
// plus extras: ukes_version, position_rows, velocity_rows, coordinates, params (shared values),
// settings (everything the run used), sweep, total_s, steps_total, system_steps_per_s.
// Non-finite numbers (a failed system's state, a summary of nothing) are written as null; others
// as the shortest text that reads back to the same double.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "service/engine/engine.hpp"
#include "service/results/atomic_file.hpp"

namespace ukes {

nlohmann::json summary_json(const Summary& s);
// Everything but "systems" and "ensemble".
nlohmann::json results_header_json(const RunSpec& spec, const RunOutcome& out);
nlohmann::json system_json(const RunSpec& spec, const RunOutcome& out, int i);
nlohmann::json ensemble_json(const RunSpec& spec, const RunOutcome& out);
// The whole document in memory, parsed from the stream (convenient for small runs and tests).
nlohmann::json results_json(const RunSpec& spec, const RunOutcome& out);

// Streams the document (one system per line) without holding it in memory.
void write_results_json(std::ostream& os, const RunSpec& spec, const RunOutcome& out);
// Writes the document to a PendingFile for `path`; commit() makes it appear.
PendingFile stage_results_json(const std::string& path, const RunSpec& spec, const RunOutcome& out);

}  // namespace ukes
