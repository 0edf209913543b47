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

}  // namespace ukes
