// Error checking for CUDA runtime and cuSOLVER calls: every failure becomes a std::runtime_error
// naming the call, which the module turns into error text for the host.
#pragma once

#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <stdexcept>
#include <string>

namespace ukes::cuda {

inline void check(cudaError_t status, const char* call) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string(call) + ": " + cudaGetErrorString(status) + " (" +
                             cudaGetErrorName(status) + ")");
}

inline void check(cusolverStatus_t status, const char* call) {
  if (status != CUSOLVER_STATUS_SUCCESS)
    throw std::runtime_error(std::string(call) + ": cuSOLVER status " +
                             std::to_string(static_cast<int>(status)));
}

// After a kernel launch: configuration errors show up here, faults at the next synchronization.
inline void check_launch(const char* kernel) { check(cudaGetLastError(), kernel); }

}  // namespace ukes::cuda

#define UKES_CUDA_CHECK(call) ::ukes::cuda::check((call), #call)
