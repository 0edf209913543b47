#include <thrust/execution_policy.h>

#include "kernels/backend/cuda/device_statistics.hpp"
#include "kernels/backend/thrust/ensemble_statistics_thrust.hpp"

namespace ukes::cuda {

EnsembleStatistics device_statistics(const ThrustStatisticsInput& in, cudaStream_t stream,
                                     std::vector<std::int32_t>* failed_ids) {
  return ensemble_statistics_thrust(thrust::cuda::par.on(stream), in, failed_ids);
}

}  // namespace ukes::cuda
