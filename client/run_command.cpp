// `ukes run`: parse and validate a spec, run it in-process, print a summary, write the files.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "client/commands.hpp"
#include "service/engine/engine.hpp"
#include "service/engine/version.hpp"
#include "service/results/atomic_file.hpp"
#include "service/results/results_json.hpp"
#include "service/results/trajectories_h5.hpp"
#include "service/runspec/run_spec.hpp"
#include "service/runspec/spec_text.hpp"

namespace ukes::cli {

namespace {

bool read_text(const std::string& path, std::string& text, std::string& error) {
  if (path == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    if (std::cin.bad()) {
      error = "cannot read standard input";
      return false;
    }
    return true;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot read spec file '" + path + "'";
    return false;
  }
  std::ostringstream os;
  os << in.rdbuf();
  if (in.bad()) {
    error = "cannot read spec file '" + path + "'";
    return false;
  }
  text = os.str();
  return true;
}

std::string plural(std::int64_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

void print_row(const std::string& name, const Summary& s) {
  std::printf("  %-20s %12.5g %12.5g %12.5g %12.5g %12.5g %12.5g %12.5g\n", name.c_str(), s.min,
              s.p50, s.p95, s.p99, s.max, s.mean, s.std);
}

void print_summary(const RunSpec& spec, const RunOutcome& out) {
  const ModelInfo& m = *spec.model;
  const EnsembleStatistics& st = out.statistics;
  std::string rows;
  if (m.position_rows > 0) rows += plural(m.position_rows, "position row");
  if (m.velocity_rows > 0)
    rows += (rows.empty() ? "" : ", ") + plural(m.velocity_rows, "velocity row");
  if (rows.empty()) rows = "no constraint rows";
  std::printf("ukes %s: model %s (n = %d, %s), %s, %s %s on %s (%s)\n", version(), m.name.c_str(),
              m.n, rows.c_str(), plural(spec.batch.count, "system").c_str(),
              method_name(spec.settings.method), precision_name(spec.settings.precision),
              out.backend.c_str(), plural(out.threads, "thread").c_str());
  std::printf("count %lld, ok %lld, failed %lld", static_cast<long long>(st.count),
              static_cast<long long>(st.ok), static_cast<long long>(st.failed));
  std::string by;
  for (int k = 1; k < kStatusCount; ++k) {
    const auto c = st.by_status[static_cast<std::size_t>(k)];
    if (c > 0)
      by += (by.empty() ? "" : ", ") + std::string(status_name(static_cast<Status>(k))) + " " +
            std::to_string(c);
  }
  if (!by.empty()) std::printf(" (%s)", by.c_str());
  std::printf("\n");
  std::int64_t steps = 0;
  for (auto s : out.results.steps) steps += s;
  const double rate = out.elapsed_s > 0 ? static_cast<double>(steps) / out.elapsed_s : 0.0;
  std::printf("elapsed %.3f s, %lld system-steps, %.4g system-steps per second\n", out.elapsed_s,
              static_cast<long long>(steps), rate);
  if (st.ok == 0) return;
  std::printf("\nfinal values over the %lld ok systems:\n", static_cast<long long>(st.ok));
  std::printf("  %-20s %12s %12s %12s %12s %12s %12s %12s\n", "", "min", "p50", "p95", "p99", "max",
              "mean", "std");
  for (int j = 0; j < m.n && j < static_cast<int>(st.q.size()); ++j)
    print_row(m.coordinates[static_cast<std::size_t>(j)], st.q[static_cast<std::size_t>(j)]);
  for (int j = 0; j < m.n && j < static_cast<int>(st.qd.size()); ++j)
    print_row(m.coordinates[static_cast<std::size_t>(j)] + "'", st.qd[static_cast<std::size_t>(j)]);
  const int mp = m.position_rows;
  for (int r = 0; r < m.residual_slots() && r < static_cast<int>(st.residual.size()); ++r) {
    const std::string name = r < mp       ? "max|phi[" + std::to_string(r) + "]|"
                             : r < 2 * mp ? "max|phid[" + std::to_string(r - mp) + "]|"
                                          : "max|psi[" + std::to_string(r - 2 * mp) + "]|";
    print_row(name, st.residual[static_cast<std::size_t>(r)]);
  }
  print_row("force_max", st.force_max);
  print_row("steps", st.steps);
}

}  // namespace

int run_command(const RunOptions& options) {
  if (!options.server.empty()) {
    std::fprintf(stderr,
                 "ukes: --server %s: running on a server is not available in this build yet "
                 "(leave out --server to run in-process)\n",
                 options.server.c_str());
    return kExitFailure;
  }
  if (!options.out.empty() && options.out == options.h5) {
    std::fprintf(stderr, "ukes: --out and --h5 name the same file '%s'\n", options.out.c_str());
    return kExitUsage;
  }

  std::string text, error;
  if (!read_text(options.spec, text, error)) {
    std::fprintf(stderr, "ukes: %s\n", error.c_str());
    return kExitUsage;
  }
  RunSpec spec;
  try {
    spec = parse_run_spec(parse_spec_text(text));
  } catch (const LimitError& e) {
    std::fprintf(stderr, "ukes: limit exceeded: %s\n", e.what());
    return kExitUsage;
  } catch (const SpecError& e) {
    std::fprintf(stderr, "ukes: spec error: %s\n", e.what());
    return kExitUsage;
  }

  if (!options.h5.empty() && spec.output.trajectory_ids.empty())
    std::fprintf(stderr,
                 "ukes: note: output.trajectories records no system: %s will hold no "
                 "trajectories\n",
                 options.h5.c_str());
  try {
    // Fail before a long run when a result could not be written.
    if (!options.out.empty()) check_writable(options.out);
    if (!options.h5.empty()) check_writable(options.h5);

    ExecuteOptions exec;
    exec.threads = options.threads;
    const RunOutcome out = execute(spec, exec);

    // Both files are written in full before either appears.
    PendingFile json_file, h5_file;
    if (!options.out.empty()) json_file = stage_results_json(options.out, spec, out);
    if (!options.h5.empty()) h5_file = stage_trajectories_h5(options.h5, spec, out);
    if (h5_file.pending()) h5_file.commit();
    if (json_file.pending()) {
      try {
        json_file.commit();
      } catch (...) {
        if (!options.h5.empty()) std::remove(options.h5.c_str());  // all or nothing
        throw;
      }
    }

    print_summary(spec, out);
    if (!options.out.empty()) std::printf("\nwrote %s\n", options.out.c_str());
    if (!options.h5.empty())
      std::printf("%swrote %s (%zu trajectories)\n", options.out.empty() ? "\n" : "",
                  options.h5.c_str(), out.results.traj_ids.size());
    std::fflush(stdout);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ukes: %s\n", e.what());
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace ukes::cli
