// Per-system results as HDF5 (`ukes run ... --out results.h5`, docs/RUNSPEC.md "Binary
// results"): every field of the per-system record (kernels/ensemble/system_record.hpp) as a
// dataset over `system`, chunked and compressed,
//   /system                 [N] int64          system ids (dimension scale)
//   /coordinate, /residual_row, /param         names (dimension scales)
//   /<result field>         [N] or [N, width]  status (int32, flag_values / flag_meanings), t, q,
//                                              qd, residual_max, force_max, ...
//   /params, /q0, /qd0      [N, width]         each system's inputs (after sweeps and defaults)
//   /ensemble               group: attributes count, ok, failed; by_status (attributes per
//                           status); q, qd [n, 8], residual_max [2 mp + mv, 8], force_max,
//                           control_effort_max, steps [8] (UKES_SUMMARIZED_SCALARS) over the
//                           scale /ensemble/statistic (count, min, max, mean, std, p50, p95, p99)
// and the root attributes of trajectory files (trajectories_h5.hpp) plus `run`, the JSON
// description of the run that results.json carries outside "systems" and "ensemble" (settings,
// params, sweep, a user model's definition). Readable by h5py, xarray (h5netcdf) and ukes.load.
#pragma once

#include <string>

#include "service/engine/engine.hpp"
#include "service/results/atomic_file.hpp"

namespace ukes {

// Writes the file to a PendingFile for `path`; commit() makes it appear. Throws
// std::runtime_error (nothing is left behind).
PendingFile stage_results_h5(const std::string& path, const RunSpec& spec, const RunOutcome& out);

}  // namespace ukes
