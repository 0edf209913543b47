// The subcommands of the `ukes` command-line client.
#pragma once

#include <string>

namespace ukes::cli {

// Exit codes.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // the run or writing its files failed
inline constexpr int kExitUsage = 2;    // bad command line or bad spec

// `ukes models [--json]`
int models_command(bool json);

struct RunOptions {
  std::string spec;  // path, or "-" for stdin
  std::string out;   // results JSON ("" = none)
  std::string h5;    // trajectories HDF5 ("" = none)
  int threads = 0;   // <= 0: all hardware threads
  std::string server;
};

// `ukes run SPEC [--out results.json] [--h5 traj.h5] [--threads N] [--server HOST:PORT]`
int run_command(const RunOptions& options);

}  // namespace ukes::cli
