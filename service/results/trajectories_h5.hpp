// Trajectory files (HDF5, the docs/RUNSPEC.md contract): for the N_out recorded systems at the K
// sample times,
//   /t             [K]               sample times (dimension scale)
//   /system_ids    [N_out] int64     ids of the recorded systems (dimension scale)
//   /coordinate    [n] string        coordinate names (dimension scale)
//   /residual_row  [2 mp + mv] str   phi[i], phid[i], psi[i] (dimension scale)
//   /param         [P] string        parameter names (dimension scale)
//   /q, /qd, /force [N_out, K, n]    float64, the requested fields only
//   /residual      [N_out, K, 2 mp + mv] signed phi, phid, psi
//   /params        [N_out, P]        parameter values of each recorded system
//   /q0, /qd0      [N_out, n]        initial conditions as specified (before any assembly)
//   /status        [N_out] int32     final status (flag_values / flag_meanings attributes)
// and root attributes model, ukes_version, n, position_rows, velocity_rows, count, method,
// precision, backend, t0, t_end, samples. Samples after a system failed are NaN. Dimension scales
// make the file readable by xarray (h5netcdf engine) as well as h5py.
#pragma once

#include <string>

#include "service/engine/engine.hpp"
#include "service/results/atomic_file.hpp"

namespace ukes {

// Writes the file to a PendingFile for `path`; commit() makes it appear. Throws
// std::runtime_error (nothing is left behind).
PendingFile stage_trajectories_h5(const std::string& path, const RunSpec& spec,
                                  const RunOutcome& out);

}  // namespace ukes
