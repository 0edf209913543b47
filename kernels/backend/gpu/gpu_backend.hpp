// The GPU backend as host code sees it: whether one is usable here (and if not, why), and running
// a batch on it. Loads the CUDA module on first use; links nothing from CUDA.
#pragma once

#include <string>
#include <vector>

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
// GPU unavailable.
const GpuAvailability& gpu_availability();

// A CUDA version number (1000 major + 10 minor) as "13.0".
std::string cuda_version_text(int version);

// Runs `batch` on the GPU: fills `results` (allocated here) and returns the module's report.
// Throws std::runtime_error when no GPU is available or the run fails.
// With `sweep`, batch system i is sweep system sweep_first + i and its swept inputs are generated
// on the device (by the rule that generated the batch's own values).
GpuRunReport run_ensemble_gpu(const Batch& batch, const EnsembleSettings& s, BatchResults& results,
                              const std::vector<std::int32_t>& traj_ids = {},
                              bool statistics = false, const SweepSpec* sweep = nullptr,
                              std::int64_t sweep_first = 0);

}  // namespace ukes
