// The one run path: `ukes run` in-process and every server job integrate a parsed spec here, in
// slices of systems on the device the spec resolved to, each finished slice copied into the run's
// results and handed to the caller (the server encodes, stores and streams its summaries,
// trajectories and progress; the CLI shows progress) on a worker thread while the next one
// integrates; the worker also makes each slice's inputs ahead, so the integrating thread does no
// per-system work of its own. Then the ensemble statistics, on the host, in system order: the
// same systems give the same figures to the bit on every backend and run path.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kernels/core/cancel.hpp"
#include "kernels/ensemble/ensemble.hpp"
#include "kernels/ensemble/statistics.hpp"
#include "service/runspec/run_spec.hpp"

namespace ukes {

// The fewest systems a GPU slice takes (fewer only when the batch or the slice memory is
// smaller): about enough threads to fill an H100's 132 SMs at the fused kernel's occupancy, as
// the CUDA module's own chunks (CudaApi::kMinChunkSystems, kernels/backend/cuda/cuda_api.cuh).
inline constexpr int kGpuMinSlice = 1 << 16;

// Slices alive at once: one integrating, the one before it being finished (copied, published)
// and the inputs of the one after it. Each takes this share of ExecuteOptions::slice_bytes.
inline constexpr int kSlicesAlive = 3;

// One finished slice: systems [first, first + batch.count).
struct SliceDone {
  int first = 0;
  const Batch& batch;           // their inputs, as integrated
  const BatchResults& results;  // their results; trajectories of the recorded ones among them
  int systems_done = 0;         // in the whole run so far, this slice included
  std::int64_t steps_done = 0;  // accepted steps so far
  double elapsed_s = 0.0;       // since the run started
};

struct ExecuteOptions {
  int threads = 0;  // CPU threads; <= 0: one per hardware thread
  // The CPU lanes' instruction set (kernels/backend/cpu/cpu_isa.hpp); unset: the process's.
  std::optional<CpuIsa> cpu_isa = std::nullopt;
  const CancelFlag* cancel = nullptr;  // a request stops the run, inside and between slices
  double timeout_s = 0.0;              // > 0: no slice starts after this many seconds
  // Slices adapt their size to take about slice_target_s each on the CPU (the first is small, so
  // the first report comes quickly); on the GPU they take at least kGpuMinSlice systems. The
  // slices alive at once stay within slice_bytes of working memory (inputs, results, recorded
  // trajectories), 1 / kSlicesAlive of it each; on G GPUs a round of G slices takes that share,
  // so give G times the bytes for slices of one GPU's size.
  double slice_target_s = 1.0;
  std::int64_t slice_bytes = std::int64_t{kSlicesAlive * 64} << 20;
  // Page-locked bytes the run's GPU slices may use, shared among its GPUs; 0: the module's each.
  std::size_t gpu_pinned_budget = 0;
  bool keep_trajectories = true;  // gather recorded trajectories into RunOutcome::results
  // The first slices end at these systems, in order, whatever the sizing above would choose: a
  // run that reproduces the slices of an earlier one (a durable server job run again).
  std::vector<int> slice_ends = {};
  // Called after each slice, in slice order, on the run's worker thread while the next slice
  // integrates. A stop it requests drops that next slice: the run ends after the slice it saw.
  // An exception it throws ends the run (execute rethrows it).
  std::function<void(const SliceDone&)> on_slice = nullptr;
};

// Bytes of working memory per system: its final values (kept for the whole run), and in a slice
// its inputs, results and the chunks a server makes of them (twice the results); per recorded
// system, its trajectory and the chunks made of it.
struct SliceCosts {
  std::int64_t finals = 0;
  std::int64_t per_system = 0;
  std::int64_t per_trajectory = 0;
};
SliceCosts slice_costs(const RunSpec& spec);

enum class RunEnd { kCompleted, kCancelled, kTimedOut };

struct RunOutcome {
  // Every system's final values; trajectories when ExecuteOptions::keep_trajectories.
  BatchResults results;
  EnsembleStatistics statistics;  // when completed
  RunEnd end = RunEnd::kCompleted;
  int systems_done = 0;  // the systems [0, systems_done) have results
  std::int64_t steps = 0;
  double elapsed_s = 0.0;  // wall time of the ensemble integration
  double total_s = 0.0;    // integration and statistics
  std::string backend;     // "cpu" or "gpu": where the last slice ran
  int threads = 0;         // CPU threads used (0 on the GPU)
  // How a CPU run's systems shared SIMD lanes ("avx2 lanes of 4", docs/CPU_LANES.md); empty when
  // each ran alone (on the GPU, FP32, a controlled or stiff run, UKES_CPU_ISA=scalar).
  std::string cpu_lanes;
  // Set when the spec resolved to the GPU, asked for `auto`, and the GPU broke during the run
  // (GpuUnusableError): why systems from fallback_from on ran on the CPU.
  std::string fallback_reason;
  int fallback_from = 0;
  // GPUs lost during a run that went on on its other GPUs: which, from which system, and why.
  std::string gpu_loss;
  // A user model on the GPU: which fused kernel ran (GpuRunReport::kernel; compiled for the
  // model, or the bucket's interpreter and why).
  std::string gpu_kernel;
};

RunOutcome execute(const RunSpec& spec, const ExecuteOptions& options = {});

// Copies the trajectories of `part`, whose system i is system offset + i of `all`, into their
// slots of `all` (allocated with every recorded id): a slice's into the run's, a shard's into
// the merged run's.
void copy_trajectories(const BatchResults& part, int offset, BatchResults& all);

}  // namespace ukes
