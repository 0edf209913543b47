// libukes_host_gpu.so: the GPU module's pipeline (kernels/backend/device/) over the host device
// API, exporting the ABI of libukes_cuda.so. Loaded in its place (UKES_CUDA_MODULE), it makes the
// host's GPU branches, the chunk pipeline, the kernels' loops and the staged path run in CI. Its
// device reports itself as an emulation, and gpu_availability() says so.
//   UKES_HOST_GPU_DEVICES=N     it reports N devices (default 1, at most 16), all this host, so
//                               that CI spreads runs over 2 or 3 "GPUs"
//   UKES_HOST_GPU_LOSE_DEVICE=D[:K]   device D breaks on its run after K good ones (default 0):
//                               that run reports the device lost (kGpuRunDeviceLost), as an
//                               illegal address would on a GPU, and so does every later one
#include <thrust/execution_policy.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
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

constexpr int kMaxDevices = 16;

int device_count() { return std::min(positive_env("UKES_HOST_GPU_DEVICES", 1), kMaxDevices); }

// The device UKES_HOST_GPU_LOSE_DEVICE breaks and the good runs it has first; {-1, 0}: none.
struct Loss {
  int device = -1;
  int good_runs = 0;
};
Loss configured_loss() {
  const char* text = std::getenv("UKES_HOST_GPU_LOSE_DEVICE");
  if (text == nullptr || *text == '\0') return {};
  char* end = nullptr;
  Loss loss;
  loss.device = static_cast<int>(std::strtol(text, &end, 10));
  if (*end == ':') loss.good_runs = static_cast<int>(std::strtol(end + 1, nullptr, 10));
  return loss;
}

// Runs each emulated device has started.
std::atomic<int> runs_started[kMaxDevices];

int probe(GpuDeviceInfo* info, char*, std::size_t) {
  std::snprintf(info->name, sizeof info->name, "%s", kHostGpuDeviceName);
  info->ordinal = 0;
  info->device_count = device_count();
  info->compute_major = 9;
  info->compute_minor = 0;
  info->multiprocessors = static_cast<int>(std::thread::hardware_concurrency());
  info->total_memory = HostApi::kEmulatedMemory;
  info->driver_version = info->runtime_version = 13000;
  return 0;
}

int run(const GpuRunRequest* request, GpuRunReport* report, char* error, std::size_t capacity) {
  const int device = request->device;
  if (device < 0 || device >= device_count()) {
    device::write_text(error, capacity, "no emulated device " + std::to_string(device));
    return kGpuRunFailed;
  }
  const Loss loss = configured_loss();
  if (device == loss.device && runs_started[device]++ >= loss.good_runs) {
    device::write_text(error, capacity,
                       "emulated loss of device " + std::to_string(device) +
                           " (UKES_HOST_GPU_LOSE_DEVICE): an illegal memory access");
    return kGpuRunDeviceLost;
  }
  return device::run_module<HostApi>(request, report, error, capacity);
}

const GpuModule kModule{kGpuModuleAbi, kGpuModuleLayoutHash, &probe, &run};

}  // namespace
}  // namespace host_gpu
}  // namespace ukes

extern "C" __attribute__((visibility("default"))) const ukes::GpuModule* ukes_cuda_module() {
  return &ukes::host_gpu::kModule;
}
