// libukes_host_gpu.so: the GPU module's pipeline (kernels/backend/device/) over the host device
// API, exporting the ABI of libukes_cuda.so. Loaded in its place (UKES_CUDA_MODULE), it makes the
// host's GPU branches, the chunk pipeline, the kernels' loops and the staged path run in CI. Its
// device reports itself as an emulation, and gpu_availability() says so.
#include <thrust/execution_policy.h>

#include <cstdio>
#include <thread>

#include "kernels/backend/device/module_run.hpp"
#include "kernels/backend/gpu/gpu_module_abi.hpp"
#include "kernels/backend/host_gpu/host_api.hpp"
#include "kernels/backend/thrust/ensemble_statistics_thrust.hpp"

namespace ukes {

EnsembleStatistics HostApi::statistics(const ThrustStatisticsInput& in, Stream& stream,
                                       std::vector<std::int32_t>* failed_ids) {
  stream.synchronize();
  return ensemble_statistics_thrust(thrust::host, in, failed_ids);
}

namespace host_gpu {
namespace {

int probe(GpuDeviceInfo* info, char*, std::size_t) {
  std::snprintf(info->name, sizeof info->name, "%s", kHostGpuDeviceName);
  info->ordinal = 0;
  info->compute_major = 9;
  info->compute_minor = 0;
  info->multiprocessors = static_cast<int>(std::thread::hardware_concurrency());
  info->total_memory = HostApi::kEmulatedMemory;
  info->driver_version = info->runtime_version = 13000;
  return 0;
}

int run(const GpuRunRequest* request, GpuRunReport* report, char* error, std::size_t capacity) {
  return device::run_module<HostApi>(request, report, error, capacity);
}

const GpuModule kModule{kGpuModuleAbi, kGpuModuleLayoutHash, &probe, &run};

}  // namespace
}  // namespace host_gpu
}  // namespace ukes

extern "C" __attribute__((visibility("default"))) const ukes::GpuModule* ukes_cuda_module() {
  return &ukes::host_gpu::kModule;
}
