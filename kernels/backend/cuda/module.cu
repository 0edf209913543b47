// The CUDA module's entry points (gpu_module_abi.hpp): probing for a device and running a batch
// (kernels/backend/device/module_run.hpp over CudaApi).
#include <cuda_runtime.h>

#include <cstdio>
#include <string>

#include "kernels/backend/cuda/cuda_api.cuh"
#include "kernels/backend/device/module_run.hpp"
#include "kernels/backend/gpu/driver_requirement.hpp"
#include "kernels/backend/gpu/gpu_module_abi.hpp"

namespace ukes::cuda {
namespace {

// The device code is built for sm_90 only (CMAKE_CUDA_ARCHITECTURES).
constexpr int kMinComputeCapability = 90;

std::string describe(cudaError_t status) {
  return std::string(cudaGetErrorString(status)) + " (" + cudaGetErrorName(status) + ")";
}

// Devices 0 .. k - 1 of the `count` the runtime sees, while each is of device 0's kind (name and
// compute capability): a run's slices are spread over them as equals. The first one of another
// kind and those after it are left out.
int usable_devices(int count, const cudaDeviceProp& first) {
  int usable = 1;
  for (; usable < count; ++usable) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, usable) != cudaSuccess || prop.major != first.major ||
        prop.minor != first.minor || std::string(prop.name) != first.name)
      break;
  }
  return usable;
}

int probe(GpuDeviceInfo* info, char* why, std::size_t capacity) {
  // Before any call that needs the driver: an old one is then one clear line, not the runtime's
  // "CUDA driver version is insufficient".
  int driver = 0;
  if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
  if (const std::string problem = driver_requirement_problem(driver, CUDART_VERSION);
      !problem.empty()) {
    device::write_text(why, capacity, problem);
    return 1;
  }
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    device::write_text(why, capacity,
                       "no CUDA device usable: cudaGetDeviceCount: " + describe(status));
    return 1;
  }
  if (count == 0) {
    device::write_text(why, capacity, "no CUDA device found");
    return 1;
  }
  cudaDeviceProp prop{};
  if (const cudaError_t e = cudaGetDeviceProperties(&prop, 0); e != cudaSuccess) {
    device::write_text(why, capacity, "cudaGetDeviceProperties: " + describe(e));
    return 1;
  }
  if (10 * prop.major + prop.minor < kMinComputeCapability) {
    device::write_text(why, capacity,
                       std::string("GPU ") + prop.name + " has compute capability " +
                           std::to_string(prop.major) + "." + std::to_string(prop.minor) +
                           "; this build has device code for sm_90 (H100/H200) only");
    return 1;
  }
  // Creating the context here turns a driver that is too old into a reason, not a failed run.
  if (const cudaError_t e = cudaFree(nullptr); e != cudaSuccess) {
    device::write_text(why, capacity, "cannot create a CUDA context: " + describe(e));
    return 1;
  }
  std::snprintf(info->name, sizeof info->name, "%s", prop.name);
  info->ordinal = 0;
  info->device_count = usable_devices(count, prop);
  info->compute_major = prop.major;
  info->compute_minor = prop.minor;
  info->multiprocessors = prop.multiProcessorCount;
  info->total_memory = prop.totalGlobalMem;
  cudaDriverGetVersion(&info->driver_version);
  cudaRuntimeGetVersion(&info->runtime_version);
  return 0;
}

int run(const GpuRunRequest* request, GpuRunReport* report, char* error, std::size_t capacity) {
  return device::run_module<CudaApi>(request, report, error, capacity);
}

const GpuModule kModule{kGpuModuleAbi, kGpuModuleLayoutHash, &probe, &run};

}  // namespace
}  // namespace ukes::cuda

extern "C" __attribute__((visibility("default"))) const ukes::GpuModule* ukes_cuda_module() {
  return &ukes::cuda::kModule;
}
