// Runs one job on the ensemble engine, in chunks of systems, publishing as it goes: after each
// chunk its per-system summaries, the trajectories of the recorded systems in it, and a progress
// report; at the end the ensemble statistics and the JobEnd. Cancellation and the job's timeout
// are checked between and inside chunks, and everything published before stays available.
#pragma once

#include <cstdint>

#include "service/server/job.hpp"

namespace ukes::server {

// Working memory of one slice of systems (its inputs, results, recorded trajectories and the
// chunks made of them) under a server memory budget: slices shrink to stay under it, down to one
// system.
std::int64_t slice_bytes_for(std::int64_t memory_budget);

// The fewest systems a GPU slice takes (fewer only when the job or the slice memory is smaller):
// about enough threads to fill an H100's 132 SMs at the fused kernel's occupancy, as the CUDA
// module's own chunks (CudaApi::kMinChunkSystems, kernels/backend/cuda/cuda_api.cuh).
inline constexpr int kGpuMinSlice = 1 << 16;

// What a running job holds besides its result log, in bytes (upper estimates): every system's
// final values (the ensemble statistics need them all), and one slice.
struct JobMemory {
  std::int64_t finals = 0;      // all systems' final values and counters
  std::int64_t slice = 0;       // the slice budget
  std::int64_t per_system = 0;  // one system of a slice: inputs, results, its summary chunk
  std::int64_t trajectory = 0;  // one recorded system's trajectory and its chunks
  std::int64_t pinned = 0;      // on the GPU: the slice's page-locked host mirrors
  // Finals, a full slice, its pinned mirrors, and one trajectory beyond it (a slice always takes
  // one system).
  std::int64_t total() const { return finals + slice + pinned + trajectory; }
};
JobMemory job_memory(const RunSpec& spec, std::int64_t slice_bytes);

// Seconds of engine work per chunk (adapts the number of systems to measured speed, within
// slice_bytes of working memory).
void run_job(Job& job, double chunk_target_s, std::int64_t slice_bytes);

// Publishes the header (the first chunk of every job).
void publish_header(Job& job, const std::string& backend);

}  // namespace ukes::server
