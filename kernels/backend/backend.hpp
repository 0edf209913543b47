// Backend selection: `device: auto | cpu | gpu` resolved against what this process can use, and the
// one entry point that runs a batch on the resolved backend.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/ensemble/ensemble.hpp"

namespace ukes {

enum class Device { kAuto, kCpu, kGpu };

const char* device_name(Device d);

struct ResolvedDevice {
  Device device = Device::kCpu;  // kCpu or kGpu
  std::string why;               // for auto -> cpu: why the GPU is not used
};

// auto: the GPU when one is usable, else the CPU (with the reason); cpu: the CPU; gpu: the GPU,
// or std::runtime_error saying why it cannot be used.
ResolvedDevice resolve_device(Device requested);

// Runs `batch` on `device` (kCpu or kGpu; resolve kAuto first). results.backend names it.
void run_ensemble(Device device, const Batch& batch, const EnsembleSettings& s,
                  BatchResults& results, const std::vector<std::int32_t>& traj_ids = {});

}  // namespace ukes
