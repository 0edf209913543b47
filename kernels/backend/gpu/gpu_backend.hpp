// The GPU backend as host code sees it: whether one is usable here (and if not, why), and running
// a batch on it. Loads the CUDA module on first use; links nothing from CUDA.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/backend/gpu/driver_requirement.hpp"
#include "kernels/backend/gpu/gpu_module_abi.hpp"

namespace ukes {

// The most GPUs one process uses: ordinals 0 .. kMaxGpuDevices - 1.
inline constexpr int kMaxGpuDevices = 64;

struct GpuAvailability {
  bool available = false;
  std::string reason;  // why not, when !available
  std::string module;  // the module file that was loaded (or tried)
  GpuDeviceInfo info;  // when available
};

// Probed once per process (thread-safe). UKES_CUDA_MODULE names the module file to load (default:
// libukes_cuda.so beside the executable, then in the build tree); UKES_DISABLE_GPU=1 makes the
// GPU unavailable. A device whose context broke during a run (GpuUnusableError) stays unusable
// for the rest of the process; once every device has, the GPU is unavailable, with the latest
// error as the reason. info.device_count: the devices the module found.
GpuAvailability gpu_availability();

// The module's devices not lost so far, ascending, among those restrict_gpu_devices allowed;
// empty when the GPU is unavailable.
std::vector<int> usable_gpu_devices();

// Lets this process use only `devices` (module ordinals; a server's --devices): the others are
// neither listed nor counted as usable. Call at start, before any run; empty allows every one.
void restrict_gpu_devices(std::vector<int> devices);

// Thrown by run_ensemble_gpu when the GPU cannot run anything any more (see above); the run that
// saw it is incomplete, and `auto` runs may go on on the CPU.
class GpuUnusableError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Runs `batch` on the module's device `device`: fills `results` (allocated here) and returns the
// module's report. Throws GpuUnusableError when that device is unusable or broke during the run,
// and std::runtime_error when this run alone failed. Runs on different devices go at once; runs
// on one device take turns.
GpuRunReport run_ensemble_gpu(const Batch& batch, const EnsembleSettings& s, BatchResults& results,
                              const std::vector<std::int32_t>& traj_ids = {},
                              bool statistics = false, int device = 0);

}  // namespace ukes
