// Runs one job on the run path every run takes (service/engine/engine.hpp), publishing as it
// goes: after each slice its per-system summaries, the trajectories of the recorded systems in
// it, and a progress report; at the end the ensemble statistics and the JobEnd. Cancellation and
// the job's timeout are checked between and inside slices, and everything published before stays
// available.
#pragma once

#include <cstdint>

#include "service/server/job.hpp"

namespace ukes::server {

// Working memory of the slices of a job alive at once (kSlicesAlive, service/engine/engine.hpp;
// each its inputs, results, recorded trajectories and the chunks made of them) under a server
// memory budget: slices shrink to stay under it, down to one system.
std::int64_t slice_bytes_for(std::int64_t memory_budget);

// What a running job holds besides its result log, in bytes (upper estimates): every system's
// final values (the ensemble statistics need them all), and its slices.
struct JobMemory {
  std::int64_t finals = 0;      // all systems' final values and counters
  std::int64_t slice = 0;       // the budget of the slices alive at once
  std::int64_t per_system = 0;  // one system of a slice: inputs, results, its summary chunk
  std::int64_t trajectory = 0;  // one recorded system's trajectory and its chunks
  std::int64_t pinned = 0;      // on the GPU: the integrating slice's page-locked host mirrors
  // Finals, the slices, the pinned mirrors, and one trajectory beyond them (a slice always takes
  // one system).
  std::int64_t total() const { return finals + slice + pinned + trajectory; }
};
JobMemory job_memory(const RunSpec& spec, std::int64_t slice_bytes);

// The slice budget of one job: slice_bytes_for(memory_budget), less where the job's other working
// memory (its finals, a trajectory, pinned mirrors) leaves less room beside it, down to one system
// a slice. A job that does not fit even then is over budget (job_memory(...).total()).
std::int64_t job_slice_bytes(const RunSpec& spec, std::int64_t memory_budget);

// Seconds of engine work per chunk (adapts the number of systems to measured speed, within
// slice_bytes of working memory).
void run_job(Job& job, double chunk_target_s, std::int64_t slice_bytes);

// Publishes the header (the first chunk of every job).
void publish_header(Job& job);

}  // namespace ukes::server
