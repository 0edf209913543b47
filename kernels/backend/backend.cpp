#include "kernels/backend/backend.hpp"

#include <stdexcept>

#include "kernels/backend/gpu/gpu_backend.hpp"

namespace ukes {

const char* device_name(Device d) {
  switch (d) {
    case Device::kAuto:
      return "auto";
    case Device::kCpu:
      return "cpu";
    case Device::kGpu:
      return "gpu";
  }
  return "unknown";
}

ResolvedDevice resolve_device(Device requested) {
  if (requested == Device::kCpu) return {Device::kCpu, ""};
  const GpuAvailability gpu = gpu_availability();
  if (gpu.available) return {Device::kGpu, ""};
  if (requested == Device::kGpu) throw std::runtime_error("no usable GPU: " + gpu.reason);
  return {Device::kCpu, gpu.reason};
}

void run_ensemble(Device device, const Batch& batch, const EnsembleSettings& s,
                  BatchResults& results, const std::vector<std::int32_t>& traj_ids) {
  switch (device) {
    case Device::kGpu:
      run_ensemble_gpu(batch, s, results, traj_ids);
      return;
    case Device::kCpu:
      run_ensemble_cpu(batch, s, results, traj_ids);
      return;
    case Device::kAuto:
      break;
  }
  throw std::invalid_argument("run_ensemble: resolve device auto first (resolve_device)");
}

}  // namespace ukes
