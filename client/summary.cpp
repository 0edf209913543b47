#include "client/summary.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "service/engine/version.hpp"
#include "service/results/atomic_file.hpp"
#include "service/results/results_h5.hpp"
#include "service/results/results_json.hpp"
#include "service/results/trajectories_h5.hpp"

namespace ukes::cli {

namespace {

std::string plural(std::int64_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

void print_row(const std::string& name, const Summary& s) {
  std::printf("  %-20s %12.5g %12.5g %12.5g %12.5g %12.5g %12.5g %12.5g\n", name.c_str(), s.min,
              s.p50, s.p95, s.p99, s.max, s.mean, s.std);
}

void print_headline(const RunSpec& spec, const RunOutcome& out) {
  const ModelInfo& m = *spec.model;
  std::string rows;
  if (m.position_rows > 0) rows += plural(m.position_rows, "position row");
  if (m.velocity_rows > 0)
    rows += (rows.empty() ? "" : ", ") + plural(m.velocity_rows, "velocity row");
  if (rows.empty()) rows = "no constraint rows";
  const std::string lanes = out.cpu_lanes.empty() ? "" : ", " + out.cpu_lanes;
  const std::string where = out.threads > 0
                                ? out.backend + " (" + plural(out.threads, "thread") + lanes + ")"
                                : out.backend;
  std::printf("ukes %s: model %s (n = %d, %s), %s, %s %s on %s\n", version(), m.name.c_str(), m.n,
              rows.c_str(), plural(spec.batch.count, "system").c_str(),
              method_name(spec.settings.method), precision_name(spec.settings.precision),
              where.c_str());
}

void print_counts(const EnsembleStatistics& st) {
  // ok counts the systems a terminating event ended (docs/EVENTS.md) too: said beside it.
  const auto terminated = st.by_status[static_cast<std::size_t>(Status::kTerminated)];
  std::printf("count %lld, ok %lld", static_cast<long long>(st.count),
              static_cast<long long>(st.ok));
  if (terminated > 0) std::printf(" (%lld terminated)", static_cast<long long>(terminated));
  std::printf(", failed %lld", static_cast<long long>(st.failed));
  std::string by;
  for (int k = 1; k < kStatusCount; ++k) {
    if (static_cast<Status>(k) == Status::kTerminated) continue;
    const auto c = st.by_status[static_cast<std::size_t>(k)];
    if (c > 0)
      by += (by.empty() ? "" : ", ") + std::string(status_name(static_cast<Status>(k))) + " " +
            std::to_string(c);
  }
  if (!by.empty()) std::printf(" (%s)", by.c_str());
  std::printf("\n");
}

void print_statistics(const ModelInfo& m, const EnsembleStatistics& st, bool controlled) {
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
  // control_effort_max is 0 without control: shown for controlled runs only.
#define UKES_PRINT_SCALAR(name, encoding) \
  if (controlled || std::string_view(#name) != "control_effort_max") print_row(#name, st.name);
  UKES_SUMMARIZED_SCALARS(UKES_PRINT_SCALAR)
#undef UKES_PRINT_SCALAR
}

// Each event's occurrences (docs/EVENTS.md) over all systems: in all, in how many systems, and
// the fewest and most one system had.
void print_events(const std::vector<std::string>& names, const BatchResults& r) {
  const auto count = static_cast<std::size_t>(r.count);
  if (names.empty() || count == 0 || r.event_count.size() < names.size() * count) return;
  std::printf("\nevents over the %lld systems:\n", static_cast<long long>(r.count));
  for (std::size_t e = 0; e < names.size(); ++e) {
    const auto* counts = &r.event_count[e * count];
    std::int64_t total = 0, systems = 0, fewest = counts[0], most = counts[0];
    for (std::size_t i = 0; i < count; ++i) {
      total += counts[i];
      systems += counts[i] > 0 ? 1 : 0;
      fewest = std::min(fewest, counts[i]);
      most = std::max(most, counts[i]);
    }
    std::printf("  %-20s %lld in %s, %lld to %lld per system\n", names[e].c_str(),
                static_cast<long long>(total), plural(systems, "system").c_str(),
                static_cast<long long>(fewest), static_cast<long long>(most));
  }
}

}  // namespace

std::int64_t total_steps(const BatchResults& results) {
  std::int64_t steps = 0;
  for (auto s : results.steps) steps += s;
  return steps;
}

void print_summary(const RunSpec& spec, const RunOutcome& out, std::int64_t steps_total) {
  print_headline(spec, out);
  print_counts(out.statistics);
  const double rate = out.elapsed_s > 0 ? static_cast<double>(steps_total) / out.elapsed_s : 0.0;
  std::printf("elapsed %.3f s, %lld system-steps, %.4g system-steps per second\n", out.elapsed_s,
              static_cast<long long>(steps_total), rate);
  if (out.statistics.ok > 0)
    print_statistics(*spec.model, out.statistics, spec.settings.control.active);
  print_events(spec.settings.event_names, out.results);
}

bool is_hdf5_path(const std::string& path) {
  const auto ends_with = [&](const std::string& suffix) {
    return path.size() > suffix.size() &&
           path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return ends_with(".h5") || ends_with(".hdf5");
}

void write_result_files(const ResultFiles& files, const RunSpec& spec, const RunOutcome& out) {
  PendingFile out_file, h5_file;  // --out (JSON or HDF5), --h5
  if (!files.out.empty())
    out_file = is_hdf5_path(files.out) ? stage_results_h5(files.out, spec, out)
                                       : stage_results_json(files.out, spec, out);
  if (!files.h5.empty()) h5_file = stage_trajectories_h5(files.h5, spec, out);
  if (h5_file.pending()) h5_file.commit();
  if (out_file.pending()) {
    try {
      out_file.commit();
    } catch (...) {
      if (!files.h5.empty()) std::remove(files.h5.c_str());  // all or nothing
      throw;
    }
  }
}

void print_written(const ResultFiles& files, const RunOutcome& out) {
  if (!files.out.empty()) std::printf("\nwrote %s\n", files.out.c_str());
  if (!files.h5.empty())
    std::printf("%swrote %s (%zu trajectories)\n", files.out.empty() ? "\n" : "", files.h5.c_str(),
                out.results.traj_ids.size());
  std::fflush(stdout);
}

}  // namespace ukes::cli
