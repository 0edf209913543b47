#include "service/engine/engine.hpp"

#include <chrono>

#include "kernels/backend/cpu/cpu_backend.hpp"
#include "kernels/backend/gpu/gpu_backend.hpp"

namespace ukes {

RunOutcome execute(const RunSpec& spec, const ExecuteOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  RunOutcome out;
  EnsembleSettings settings = spec.settings;
  if (spec.device_resolved == Device::kGpu) {
    // Statistics are computed on the device, where the per-system results already are.
    const GpuRunReport report =
        run_ensemble_gpu(spec.batch, settings, out.results, spec.output.trajectory_ids, true,
                         spec.sweep ? &*spec.sweep : nullptr);
    out.statistics = spec.batch.count > 0 ? report.statistics : ensemble_statistics(out.results);
    out.threads = 0;
  } else {
    settings.threads = options.threads > 0 ? options.threads : default_cpu_threads();
    if (settings.threads > spec.batch.count) settings.threads = spec.batch.count;
    if (settings.threads < 1) settings.threads = 1;
    run_ensemble_cpu(spec.batch, settings, out.results, spec.output.trajectory_ids);
    out.statistics = ensemble_statistics(out.results);
    out.threads = settings.threads;
  }
  out.elapsed_s = out.results.elapsed_s;
  out.backend = out.results.backend;
  out.total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace ukes
