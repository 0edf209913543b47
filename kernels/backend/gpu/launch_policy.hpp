// How the CUDA backend lays out a batch: which path integrates it, and how many systems go to the
// device at once. Plain host code (no CUDA), so the policy is unit-tested on any machine.
#pragma once

#include <algorithm>
#include <cstddef>

#include "kernels/ensemble/ensemble.hpp"

namespace ukes {

// Largest n and m the fused kernel (one thread per system) takes automatically; the cuSOLVER path
// (batched Cholesky and Jacobi SVD per stage) takes larger systems. It is the largest user-model
// bucket the GPU module builds (kMaxGpuUserBucket, kernels/models/user/buckets.hpp). The warp
// path runs a system's scalar work on one lane of 32: its FP64 bound is a 32nd of the fused
// kernel's at equal occupancy, and its local memory moves 8 bytes per access where a warp of the
// fused kernel moves 256. The performance model (benchmarks/perf_model/README.md, "Which path")
// predicts the fused kernel ahead of it for every catalogue model in FP64, and ctest
// PerfModel.PolicyFollowsTheModel re-derives that from the committed kernel table; FP32 loses
// the same 31 lanes of 32.
inline constexpr int kFusedMaxDimension = 16;

// kAuto: the fused kernel while n, m <= kFusedMaxDimension, the cuSOLVER path beyond, in either
// precision. The warp path runs only when asked for. An explicit request is kept.
constexpr GpuPath choose_gpu_path(GpuPath requested, int n, int m) {
  if (requested != GpuPath::kAuto) return requested;
  return n <= kFusedMaxDimension && m <= kFusedMaxDimension ? GpuPath::kFused : GpuPath::kCusolver;
}

// Systems per device chunk: as many as `budget` bytes hold at `bytes_per_system`, rounded down to
// a multiple of `granule` (a full wave of thread blocks), at least one granule and at most `count`.
constexpr int plan_chunk_systems(int count, std::size_t bytes_per_system, std::size_t budget,
                                 int granule) {
  if (count <= 0) return 0;
  std::size_t fit =
      bytes_per_system > 0 ? budget / bytes_per_system : static_cast<std::size_t>(count);
  if (granule > 1) fit -= fit % static_cast<std::size_t>(granule);
  if (fit < static_cast<std::size_t>(granule)) fit = static_cast<std::size_t>(granule);
  return fit >= static_cast<std::size_t>(count) ? count : static_cast<int>(fit);
}

// Page-locked host memory one GPU run may pin when its caller sets no budget: pinned pages cannot
// be swapped or reclaimed, so they are spent sparingly (the two slots' host mirrors of a chunk).
inline constexpr std::size_t kDefaultPinnedBudget = std::size_t{256} << 20;

// What a run's two pipeline slots need, in bytes for both slots together, and may use.
struct ChunkMemory {
  int total = 0;                      // systems in the batch
  int trajectory_slots = 0;           // recorded systems in the batch
  std::size_t host_per_system = 0;    // pinned: a chunk system's inputs and results
  std::size_t device_per_system = 0;  // the same on the device, and the path's workspace
  std::size_t per_trajectory = 0;     // one recorded system's samples, on each side
  std::size_t device_budget = 0;
  std::size_t pinned_budget = 0;
};

struct ChunkPlan {
  int chunk = 0;                // systems per chunk
  int trajectory_capacity = 0;  // trajectory slots per chunk
};

// Chunks within both budgets and at most `wanted` systems. The recorded trajectories get slots for
// the whole batch when they take at most half of each budget; otherwise every chunk system gets
// one, as if all were recorded.
constexpr ChunkPlan plan_chunks(const ChunkMemory& m, int wanted, int granule) {
  const std::size_t all = m.per_trajectory * static_cast<std::size_t>(m.trajectory_slots);
  const bool whole = all <= m.device_budget / 2 && all <= m.pinned_budget / 2;
  const std::size_t kept = whole ? all : 0;
  const std::size_t extra = whole ? 0 : m.per_trajectory;
  const int on_device =
      plan_chunk_systems(m.total, m.device_per_system + extra, m.device_budget - kept, granule);
  const int pinned =
      plan_chunk_systems(m.total, m.host_per_system + extra, m.pinned_budget - kept, granule);
  ChunkPlan plan;
  plan.chunk = std::min({m.total, on_device, pinned, wanted});
  plan.trajectory_capacity =
      whole && m.trajectory_slots < plan.chunk ? m.trajectory_slots : plan.chunk;
  return plan;
}

}  // namespace ukes
