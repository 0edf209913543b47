// The GPU backend as host code sees it: whether one is usable here (and if not, why), and running
// a batch on it. Loads the CUDA module on first use; links nothing from CUDA.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/backend/gpu/driver_requirement.hpp"
#include "kernels/backend/gpu/gpu_module_abi.hpp"

namespace ukes {

struct GpuAvailability {
  bool available = false;
  std::string reason;  // why not, when !available
  std::string module;  // the module file that was loaded (or tried)
  GpuDeviceInfo info;  // when available
};

// Probed once per process (thread-safe). UKES_CUDA_MODULE names the module file to load (default:
// libukes_cuda.so beside the executable, then in the build tree); UKES_DISABLE_GPU=1 makes the
// GPU unavailable. A GPU whose context broke during a run (GpuUnusableError) stays unavailable
// for the rest of the process, with that error as the reason.
GpuAvailability gpu_availability();

// Thrown by run_ensemble_gpu when the GPU cannot run anything any more (see above); the run that
// saw it is incomplete, and `auto` runs may go on on the CPU.
class GpuUnusableError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Runs `batch` on the GPU: fills `results` (allocated here) and returns the module's report.
// Throws GpuUnusableError when no GPU is available or it broke during the run, and
// std::runtime_error when this run alone failed.
GpuRunReport run_ensemble_gpu(const Batch& batch, const EnsembleSettings& s, BatchResults& results,
                              const std::vector<std::int32_t>& traj_ids = {},
                              bool statistics = false);

}  // namespace ukes
