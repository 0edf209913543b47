// Ensemble statistics of per-system results that live in device memory: the Thrust algorithm of
// kernels/backend/thrust/, run on the GPU. Only the summaries come back to the host.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "kernels/backend/thrust/statistics_input.hpp"
#include "kernels/ensemble/statistics.hpp"

namespace ukes::cuda {

// Runs on `stream` (ordered after the work already queued there). `in` holds device pointers.
// With `failed_ids`, also the ids of the systems that did not end ok, ascending.
EnsembleStatistics device_statistics(const ThrustStatisticsInput& in, cudaStream_t stream,
                                     std::vector<std::int32_t>* failed_ids);

}  // namespace ukes::cuda
