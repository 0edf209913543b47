// Loads the CUDA module with dlopen and asks it for a device. Nothing here links CUDA, so every
// way the GPU can be missing (no module built, no driver, no device, too old a device) ends as a
// reason string and the CPU backend runs instead.
#include "kernels/backend/gpu/gpu_backend.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <string_view>

#include "kernels/models/dispatch.hpp"

#ifndef UKES_CUDA_MODULE_BUILD_PATH
#define UKES_CUDA_MODULE_BUILD_PATH ""
#endif

namespace ukes {
namespace {

namespace fs = std::filesystem;

constexpr const char* kModuleFile = "libukes_cuda.so";

struct LoadedModule {
  GpuAvailability availability;
  const GpuModule* module = nullptr;
};

fs::path executable_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe.parent_path();
}

// Where to look, in order: $UKES_CUDA_MODULE, beside the executable, one level up (test and
// benchmark binaries live in subfolders of the build tree), the build tree this was built in.
std::vector<fs::path> module_candidates() {
  if (const char* env = std::getenv("UKES_CUDA_MODULE"); env != nullptr && *env != '\0')
    return {fs::path(env)};
  std::vector<fs::path> paths;
  const fs::path dir = executable_dir();
  if (!dir.empty()) {
    paths.push_back(dir / kModuleFile);
    paths.push_back(dir.parent_path() / kModuleFile);
  }
  if (std::string_view(UKES_CUDA_MODULE_BUILD_PATH).size() > 0)
    paths.emplace_back(UKES_CUDA_MODULE_BUILD_PATH);
  return paths;
}

LoadedModule load() {
  LoadedModule loaded;
  GpuAvailability& a = loaded.availability;
  if (const char* off = std::getenv("UKES_DISABLE_GPU");
      off != nullptr && *off != '\0' && std::string_view(off) != "0") {
    a.reason = "UKES_DISABLE_GPU is set";
    return loaded;
  }
  if (std::string_view(UKES_CUDA_MODULE_BUILD_PATH).empty() &&
      std::getenv("UKES_CUDA_MODULE") == nullptr) {
    a.reason = "this build has no CUDA backend (nvcc was not found when it was configured)";
    return loaded;
  }
  fs::path found;
  for (const fs::path& p : module_candidates()) {
    std::error_code ec;
    if (fs::exists(p, ec)) {
      found = p;
      break;
    }
  }
  if (found.empty()) {
    a.reason =
        std::string("the CUDA module ") + kModuleFile + " was not found (set UKES_CUDA_MODULE)";
    return loaded;
  }
  a.module = found.string();
  // Never unloaded: the module's CUDA runtime state lives until the process exits.
  void* handle = dlopen(a.module.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = dlerror();
    a.reason = "cannot load " + a.module + ": " + (err ? err : "unknown dlopen error");
    return loaded;
  }
  using Entry = const GpuModule* (*)();
  auto entry = reinterpret_cast<Entry>(dlsym(handle, kUkesCudaModuleSymbol));
  const GpuModule* module = entry ? entry() : nullptr;
  if (module == nullptr) {
    a.reason = a.module + " does not export " + kUkesCudaModuleSymbol;
    return loaded;
  }
  if (module->abi != kGpuModuleAbi || module->layout_hash != kGpuModuleLayoutHash) {
    a.reason = a.module + " was built for another version of ukes (module ABI " +
               std::to_string(module->abi) + ", expected " + std::to_string(kGpuModuleAbi) +
               (module->abi == kGpuModuleAbi ? "; the layouts of the types it shares differ" : "") +
               "): rebuild it with this tree";
    return loaded;
  }
  char why[512] = {};
  if (module->probe(&a.info, why, sizeof why) != 0) {
    a.reason = why;
    return loaded;
  }
  a.available = true;
  loaded.module = module;
  return loaded;
}

const LoadedModule& loaded_module() {
  static const LoadedModule loaded = load();
  return loaded;
}

// The devices runs reported lost, each set once: from then on that device runs nothing, and
// once every device is lost the GPU is unavailable. Reported by the callers that see
// GpuUnusableError (the CLI's lines, the server's job_gpu_fallback and job_gpu_lost events).
class LostDevices {
 public:
  static constexpr int kCapacity = kMaxGpuDevices;

  bool lost(int device) const { return lost_[device].load(std::memory_order_acquire); }
  // Why `device` was given up; with -1, the latest device given up.
  std::string reason(int device = -1) const {
    const std::lock_guard lock(mu_);
    return reasons_[device < 0 ? latest_ : device];
  }
  void mark(int device, const std::string& error) {
    const std::lock_guard lock(mu_);
    if (lost(device)) return;
    reasons_[device] = "GPU " + std::to_string(device) +
                       " failed earlier in this process and was given up: " + error;
    latest_ = device;
    lost_[device].store(true, std::memory_order_release);
  }

 private:
  std::array<std::atomic<bool>, kCapacity> lost_{};
  mutable std::mutex mu_;
  std::array<std::string, kCapacity> reasons_;
  int latest_ = 0;
};

LostDevices& lost_devices() {
  static LostDevices lost;
  return lost;
}

int module_devices(const LoadedModule& loaded) {
  return std::clamp(loaded.availability.info.device_count, 1, LostDevices::kCapacity);
}

std::vector<int>& allowed_devices() {
  static std::vector<int> allowed;  // set before any run (restrict_gpu_devices), then only read
  return allowed;
}

}  // namespace

void restrict_gpu_devices(std::vector<int> devices) { allowed_devices() = std::move(devices); }

std::vector<int> usable_gpu_devices() {
  const LoadedModule& loaded = loaded_module();
  const std::vector<int>& allowed = allowed_devices();
  std::vector<int> devices;
  if (!loaded.availability.available) return devices;
  for (int d = 0; d < module_devices(loaded); ++d) {
    const bool may =
        allowed.empty() || std::find(allowed.begin(), allowed.end(), d) != allowed.end();
    if (may && !lost_devices().lost(d)) devices.push_back(d);
  }
  return devices;
}

GpuAvailability gpu_availability() {
  GpuAvailability a = loaded_module().availability;
  if (a.available && usable_gpu_devices().empty()) {
    a.available = false;
    a.reason = lost_devices().reason();
  }
  return a;
}

GpuRunReport run_ensemble_gpu(const Batch& batch, const EnsembleSettings& s, BatchResults& results,
                              const std::vector<std::int32_t>& traj_ids, bool statistics,
                              int device) {
  const LoadedModule& loaded = loaded_module();
  if (const GpuAvailability gpu = gpu_availability(); !gpu.available)
    throw GpuUnusableError("no usable GPU: " + gpu.reason);
  if (device < 0 || device >= module_devices(loaded))
    throw std::invalid_argument("no GPU " + std::to_string(device) + " here (" +
                                std::to_string(module_devices(loaded)) + " found)");
  if (lost_devices().lost(device)) throw GpuUnusableError(lost_devices().reason(device));
  if (s.samples < 2) throw std::invalid_argument("samples must be at least 2");
  results.allocate(batch, s.samples, traj_ids, s.events);
  results.backend = "gpu";
  GpuRunRequest request;
  request.model = batch.model->name.c_str();
  request.device = device;
  request.user_bucket = user_bucket_of(*batch.model);  // the module dispatches on it
  request.settings = &s;
  request.input = batch.view();
  request.output = results.view();
  request.trajectory_slots = static_cast<int>(traj_ids.size());
  request.statistics = statistics;
  request.memory_budget = s.gpu_memory_budget;
  request.pinned_budget = s.gpu_pinned_budget;
  GpuRunReport report;
  // One run at a time on a device: concurrent runs would only compete for its memory.
  static std::array<std::mutex, LostDevices::kCapacity> device_mutex;
  const std::lock_guard lock(device_mutex[device]);
  const auto start = std::chrono::steady_clock::now();
  char error[1024] = {};
  if (batch.count > 0) {
    const int status = loaded.module->run(&request, &report, error, sizeof error);
    if (status == kGpuRunDeviceLost) {
      lost_devices().mark(device, error);
      throw GpuUnusableError("GPU " + std::to_string(device) +
                             " run failed, and the GPU with it: " + error);
    }
    if (status != kGpuRunOk) throw std::runtime_error(std::string("GPU run failed: ") + error);
  }
  results.elapsed_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace ukes
