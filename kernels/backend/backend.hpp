// Backend selection: `device: auto | cpu | gpu` resolved against what this process can use. Runs
// go through ukes::execute (service/engine/engine.hpp), which calls each backend's entry point
// (run_ensemble_cpu, run_ensemble_gpu) and moves an `auto` run off a GPU that breaks.
#pragma once

#include <string>

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

}  // namespace ukes
