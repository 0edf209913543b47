// A stand-in for libukes_cuda.so that exports the same entry point and fails the ways a real GPU
// can, so that the host's handling of them runs in CI: UKES_FAKE_GPU picks the failure.
//   lost        probe finds a device; every run breaks its context (an illegal address)
//   failed      probe finds a device; every run fails alone, the device stays usable
//   layout      the module's layout hash differs from the host's
//   old_driver  probe reports a driver of CUDA 12.4 under this build's CUDA 13.0 runtime
// It integrates nothing: a run that "succeeds" here would prove nothing about the GPU.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "kernels/backend/gpu/driver_requirement.hpp"
#include "kernels/backend/gpu/gpu_module_abi.hpp"

namespace {

std::string_view mode() {
  const char* m = std::getenv("UKES_FAKE_GPU");
  return m == nullptr ? "lost" : m;
}

void write(char* buffer, std::size_t capacity, const std::string& text) {
  if (capacity > 0) std::snprintf(buffer, capacity, "%s", text.c_str());
}

int probe(ukes::GpuDeviceInfo* info, char* why, std::size_t capacity) {
  if (mode() == "old_driver") {
    write(why, capacity, ukes::driver_requirement_problem(12040, 13000));
    return 1;
  }
  std::snprintf(info->name, sizeof info->name, "%s", "fake GPU (tests/gpu/fake_module)");
  info->compute_major = 9;
  info->multiprocessors = 132;
  info->total_memory = std::size_t{80} << 30;
  info->driver_version = info->runtime_version = 13000;
  return 0;
}

int run(const ukes::GpuRunRequest*, ukes::GpuRunReport*, char* error, std::size_t capacity) {
  if (mode() == "failed") {
    write(error, capacity, "cudaMalloc: out of memory (cudaErrorMemoryAllocation)");
    return ukes::kGpuRunFailed;
  }
  write(error, capacity,
        "cudaStreamSynchronize: an illegal memory access was encountered "
        "(cudaErrorIllegalAddress)");
  return ukes::kGpuRunDeviceLost;
}

ukes::GpuModule module_table() {
  ukes::GpuModule m{ukes::kGpuModuleAbi, ukes::kGpuModuleLayoutHash, &probe, &run};
  if (mode() == "layout") m.layout_hash ^= 1;
  return m;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const ukes::GpuModule* ukes_cuda_module() {
  static const ukes::GpuModule table = module_table();
  return &table;
}
