#include "service/engine/engine.hpp"

#include <chrono>

#include "kernels/backend/cpu/cpu_backend.hpp"
#include "kernels/backend/gpu/gpu_backend.hpp"

namespace ukes {
namespace {

void run_on_gpu(const RunSpec& spec, const EnsembleSettings& settings, RunOutcome& out) {
  run_ensemble_gpu(spec.batch, settings, out.results, spec.output.trajectory_ids);
  out.threads = 0;
}

void run_on_cpu(const RunSpec& spec, EnsembleSettings settings, const ExecuteOptions& options,
                RunOutcome& out) {
  settings.threads = options.threads > 0 ? options.threads : default_cpu_threads();
  if (settings.threads > spec.batch.count) settings.threads = spec.batch.count;
  if (settings.threads < 1) settings.threads = 1;
  run_ensemble_cpu(spec.batch, settings, out.results, spec.output.trajectory_ids);
  out.threads = settings.threads;
}

}  // namespace

RunOutcome execute(const RunSpec& spec, const ExecuteOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  RunOutcome out;
  bool on_gpu = spec.device_resolved == Device::kGpu;
  if (on_gpu) {
    try {
      run_on_gpu(spec, spec.settings, out);
    } catch (const GpuUnusableError& e) {
      // `auto` promised a result, not a device: the whole batch again, on the CPU.
      if (spec.device != Device::kAuto) throw;
      out.fallback_reason = e.what();
      on_gpu = false;
    }
  }
  if (!on_gpu) run_on_cpu(spec, spec.settings, options, out);
  // One statistics implementation for every backend and run path (the server's too): summed in
  // system order on the host, so the same systems give the same figures to the bit wherever they
  // ran. The device's Thrust reduction sums in another order.
  out.statistics = ensemble_statistics(out.results);
  out.elapsed_s = out.results.elapsed_s;
  out.backend = out.results.backend;
  out.total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace ukes
