#include "service/engine/engine.hpp"

#include <chrono>

#include "kernels/backend/cpu/cpu_backend.hpp"

namespace ukes {

RunOutcome execute(const RunSpec& spec, const ExecuteOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  RunOutcome out;
  EnsembleSettings settings = spec.settings;
  settings.threads = options.threads > 0 ? options.threads : default_cpu_threads();
  if (settings.threads > spec.batch.count) settings.threads = spec.batch.count;
  if (settings.threads < 1) settings.threads = 1;
  run_ensemble_cpu(spec.batch, settings, out.results, spec.output.trajectory_ids);
  out.statistics = ensemble_statistics(out.results);
  out.elapsed_s = out.results.elapsed_s;
  out.backend = out.results.backend;
  out.threads = settings.threads;
  out.total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace ukes
