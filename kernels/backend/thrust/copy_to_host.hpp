// Copies a range from the memory space of a Thrust execution policy back to host memory: the one
// step of the device statistics that is not a Thrust algorithm.
#pragma once

#include <thrust/execution_policy.h>

#include <algorithm>
#include <cstddef>

#if defined(__CUDACC__)
#include <cuda_runtime.h>
#include <thrust/system/cuda/error.h>
#include <thrust/system/cuda/execution_policy.h>
#include <thrust/system_error.h>
#endif

namespace ukes {

// Host systems (cpp, omp, tbb) already keep their memory on the host.
template <class DerivedPolicy, class T>
void copy_to_host(const thrust::execution_policy<DerivedPolicy>&, const T* source, std::size_t n,
                  T* host) {
  std::copy_n(source, n, host);
}

#if defined(__CUDACC__)
// CUDA policies (a more derived base than the overload above, so this one wins for them): the copy
// runs on the policy's stream, after the work queued there (Thrust's own cross-system copy would
// use the default stream), and `host` is ready on return. Errors throw thrust::system_error, as
// Thrust's algorithms do.
template <class DerivedPolicy, class T>
void copy_to_host(const thrust::cuda_cub::execution_policy<DerivedPolicy>& policy, const T* source,
                  std::size_t n, T* host) {
  if (n == 0) return;
  DerivedPolicy derived = static_cast<const DerivedPolicy&>(policy);
  const cudaStream_t stream = thrust::cuda_cub::stream(derived);
  cudaError_t status = cudaMemcpyAsync(host, source, n * sizeof(T), cudaMemcpyDeviceToHost, stream);
  if (status != cudaSuccess)
    throw thrust::system_error(status, thrust::cuda_category(), "copy_to_host: cudaMemcpyAsync");
  status = cudaStreamSynchronize(stream);
  if (status != cudaSuccess)
    throw thrust::system_error(status, thrust::cuda_category(),
                               "copy_to_host: cudaStreamSynchronize");
}
#endif

}  // namespace ukes
