// How the CUDA backend lays out a batch: which path integrates it, and how many systems go to the
// device at once. Plain host code (no CUDA), so the policy is unit-tested on any machine.
#pragma once

#include <algorithm>
#include <cstddef>

#include "kernels/ensemble/ensemble.hpp"

namespace ukes {

// The matrices that dominate one right-hand side's live registers in the fused kernel: the mass
// matrix's Cholesky factor (n x n) and A L^-T (m x n), whose SVD is taken in place.
constexpr int fused_matrix_scalars(int n, int m) { return n * n + m * n; }

// 32-bit registers those matrices may take before the fused kernel spills to local memory. With a
// thread's limit of 255 this puts the switch near n = m = 8 in FP64 (n = 11 in FP32), the usual
// rule of thumb; re-measure when kernels change (ptxas -v reports spills).
inline constexpr int kFusedMatrixRegisters = 256;

// Largest n and m the warp-per-system kernel takes automatically: one matrix row per lane fits
// up to 32, but its scalar steps (model, UK finish) still run in one lane and spill more with n;
// beyond this the cuSOLVER path's batched factorizations take over. A first choice from the
// register arithmetic, not yet measured on a device.
inline constexpr int kWarpMaxDimension = 16;

// kAuto: the fused kernel with one system per thread while a system fits in registers, one warp
// per system up to kWarpMaxDimension, the cuSOLVER path (batched Cholesky and Jacobi SVD per
// stage) beyond. An explicit request is kept.
constexpr GpuPath choose_gpu_path(GpuPath requested, int n, int m, Precision precision) {
  if (requested != GpuPath::kAuto) return requested;
  const int registers_per_scalar = precision == Precision::kFp64 ? 2 : 1;
  if (fused_matrix_scalars(n, m) * registers_per_scalar <= kFusedMatrixRegisters)
    return GpuPath::kFused;
  return n <= kWarpMaxDimension && m <= kWarpMaxDimension ? GpuPath::kWarp : GpuPath::kCusolver;
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
