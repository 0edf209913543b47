// How a finished run is reported, the same whether it ran in-process or on a server: the summary
// on standard output and the result files (written all or nothing).
#pragma once

#include <cstdint>
#include <string>

#include "service/engine/engine.hpp"

namespace ukes::cli {

// Sum of the systems' integration steps.
std::int64_t total_steps(const BatchResults& results);

// The run's headline, its status counts, its speed and the ensemble statistics.
void print_summary(const RunSpec& spec, const RunOutcome& out, std::int64_t steps_total);

// Where the results go ("" = not written).
struct ResultFiles {
  std::string out;  // per-system results: HDF5 when it ends .h5 or .hdf5, else JSON
  std::string h5;   // trajectories HDF5
};

// Whether `path` names an HDF5 file (.h5 or .hdf5): --out then writes binary results.
bool is_hdf5_path(const std::string& path);

// Writes both files in full before either appears; throws std::runtime_error and leaves neither
// behind when one cannot be written.
void write_result_files(const ResultFiles& files, const RunSpec& spec, const RunOutcome& out);

// The "wrote ..." lines after the summary.
void print_written(const ResultFiles& files, const RunOutcome& out);

}  // namespace ukes::cli
