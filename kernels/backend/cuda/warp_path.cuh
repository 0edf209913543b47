// The fused path's warp-per-system variant (GpuPath::kWarp), for systems whose matrices do not fit
// one thread's registers: one kernel integrates the whole chunk, each warp one system. The warp
// runs the staged path's per-system steps (kernels/staged/staged_stages.hpp) in a loop, the scalar
// ones (model evaluation, UK finish, integrator control) in lane 0, and factors that system's M
// and B = A L^-T with all 32 lanes, one matrix row per lane
// (kernels/staged/team_factorizations.hpp). Systems are independent: each warp loops until its own
// system is done, with its own step size, and no warp waits for another.
#pragma once

#include <cuda_runtime.h>

#include "kernels/backend/cuda/cuda_check.cuh"
#include "kernels/backend/cuda/staged_device_buffers.cuh"
#include "kernels/backend/cuda/warp_team.cuh"
#include "kernels/staged/team_factorizations.hpp"

namespace ukes {

inline constexpr int kWarpPathBlockThreads = 128;  // four systems per block
inline constexpr int kWarpSize = 32;

template <class Model, class T>
__global__ void integrate_warp_kernel(StagedWorkspace<Model, T> ws, BatchInputView in,
                                      RunSettings<T> s, BatchOutputView out) {
  const WarpTeam team;
  // Whole warps return together (the grid is a whole number of warps): every lane of a live warp
  // takes part in every collective.
  const int i = static_cast<int>((blockIdx.x * blockDim.x + threadIdx.x) / kWarpSize);
  if (i >= ws.count) return;
  const bool lead = team.rank() == 0;
  if (lead) stage_begin(ws, in, s, out, i);
  team.sync();
  // active() is read by every lane after the sync that follows lane 0's last step: uniform.
  while (ws.systems[i].active()) {
    if (lead) stage_assemble(ws, s, i);
    team.sync();
    team_factor_mass(team, ws, i);
    if (lead) stage_reduce(ws, i);
    team.sync();
    if constexpr (kRows < Model >> 0) team_factor_constraints(team, ws, i);
    if (lead) stage_combine(ws, s, out, i);
    team.sync();
  }
}

// Launches the chunk `in` (device pointers) on `stream` with `buffers` (capacity >= in.count) as
// the per-system workspace; returns at once. The buffers stay in use until the stream has run the
// kernel.
template <class Model, class T>
void launch_warp_path(const BatchInputView& in, const RunSettings<T>& settings,
                      const BatchOutputView& out, const StagedDeviceBuffers<Model, T>& buffers,
                      cudaStream_t stream) {
  if (in.count <= 0) return;
  const long long threads = static_cast<long long>(in.count) * kWarpSize;
  const int blocks =
      static_cast<int>((threads + kWarpPathBlockThreads - 1) / kWarpPathBlockThreads);
  integrate_warp_kernel<Model, T><<<blocks, kWarpPathBlockThreads, 0, stream>>>(
      buffers.view(in.count, nullptr), in, settings, out);
  cuda::check_launch("integrate_warp_kernel");
}

}  // namespace ukes
