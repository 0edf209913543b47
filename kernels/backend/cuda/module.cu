// The CUDA module's entry points (gpu_module_abi.hpp): probing for a device and running a batch.
// Exceptions stop here and cross to the host as text.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>

#include "kernels/backend/cuda/cuda_check.cuh"
#include "kernels/backend/cuda/run_model.hpp"
#include "kernels/backend/gpu/driver_requirement.hpp"
#include "kernels/backend/gpu/gpu_module_abi.hpp"
#include "kernels/models/catalogue.hpp"
#include "kernels/models/user/buckets.hpp"

namespace ukes::cuda {
namespace {

// The device code is built for sm_90 only (CMAKE_CUDA_ARCHITECTURES).
constexpr int kMinComputeCapability = 90;

void write(char* buffer, std::size_t capacity, const std::string& text) {
  if (capacity == 0) return;
  std::snprintf(buffer, capacity, "%s", text.c_str());
}

std::string describe(cudaError_t status) {
  return std::string(cudaGetErrorString(status)) + " (" + cudaGetErrorName(status) + ")";
}

int probe(GpuDeviceInfo* info, char* why, std::size_t capacity) {
  // Before any call that needs the driver: an old one is then one clear line, not the runtime's
  // "CUDA driver version is insufficient".
  int driver = 0;
  if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
  if (const std::string problem = driver_requirement_problem(driver, CUDART_VERSION);
      !problem.empty()) {
    write(why, capacity, problem);
    return 1;
  }
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    write(why, capacity, "no CUDA device usable: cudaGetDeviceCount: " + describe(status));
    return 1;
  }
  if (count == 0) {
    write(why, capacity, "no CUDA device found");
    return 1;
  }
  cudaDeviceProp prop{};
  if (const cudaError_t e = cudaGetDeviceProperties(&prop, 0); e != cudaSuccess) {
    write(why, capacity, "cudaGetDeviceProperties: " + describe(e));
    return 1;
  }
  if (10 * prop.major + prop.minor < kMinComputeCapability) {
    write(why, capacity,
          std::string("GPU ") + prop.name + " has compute capability " +
              std::to_string(prop.major) + "." + std::to_string(prop.minor) +
              "; this build has device code for sm_90 (H100/H200) only");
    return 1;
  }
  // Creating the context here turns a driver that is too old into a reason, not a failed run.
  if (const cudaError_t e = cudaFree(nullptr); e != cudaSuccess) {
    write(why, capacity, "cannot create a CUDA context: " + describe(e));
    return 1;
  }
  std::snprintf(info->name, sizeof info->name, "%s", prop.name);
  info->ordinal = 0;
  info->compute_major = prop.major;
  info->compute_minor = prop.minor;
  info->multiprocessors = prop.multiProcessorCount;
  info->total_memory = prop.totalGlobalMem;
  cudaDriverGetVersion(&info->driver_version);
  cudaRuntimeGetVersion(&info->runtime_version);
  return 0;
}

// After a failed run: whether the context still works. A sticky error (illegal address, hardware
// fault) is returned again by every later call, synchronization included; an ordinary one was
// cleared by cudaGetLastError.
bool context_is_broken() {
  (void)cudaGetLastError();
  return cudaDeviceSynchronize() != cudaSuccess;
}

int run(const GpuRunRequest* request, GpuRunReport* report, char* error, std::size_t capacity) {
  try {
    const auto run_on_gpu = [&]<class M>() {
      // Buckets past kMaxGpuUserBucket have no device code (the run spec keeps them on the CPU).
      if constexpr (M::kN <= kMaxGpuUserBucket || !BucketModel<M>) {
        run_model_on_gpu<M>(*request, *report);
      } else {
        throw std::runtime_error("user models in bucket " + std::to_string(M::kN) +
                                 " have no GPU code");
      }
    };
    const bool found = request->user_bucket > 0
                           ? dispatch_user_bucket(request->user_bucket, run_on_gpu)
                           : dispatch_model(request->model, run_on_gpu);
    if (!found) {
      write(error, capacity, std::string("unknown model: ") + request->model);
      return kGpuRunFailed;
    }
    return kGpuRunOk;
  } catch (const std::exception& e) {
    write(error, capacity, e.what());
  } catch (...) {
    write(error, capacity, "unknown error");
  }
  return context_is_broken() ? kGpuRunDeviceLost : kGpuRunFailed;
}

const GpuModule kModule{kGpuModuleAbi, kGpuModuleLayoutHash, &probe, &run};

}  // namespace
}  // namespace ukes::cuda

extern "C" __attribute__((visibility("default"))) const ukes::GpuModule* ukes_cuda_module() {
  return &ukes::cuda::kModule;
}
