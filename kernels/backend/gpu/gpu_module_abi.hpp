// The boundary between host code and the CUDA module (libukes_cuda.so).
//
// Host binaries never link CUDA: they dlopen the module (gpu_backend.cpp) and call the table it
// exports, so a machine without a GPU, without a driver or even without the toolkit runs the CPU
// backend. Both sides are built from this tree by one toolchain, so plain C++ structs may cross;
// errors cross as text, never as exceptions. The host refuses a module whose kGpuModuleAbi or
// layout hash (the sizes and alignments of every type that crosses, standard containers included)
// differs from its own; kGpuModuleAbi changes whenever these structs change in a way the hash
// cannot see (two fields of one size swapped, a field's meaning).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/ensemble/ensemble.hpp"
#include "kernels/ensemble/statistics.hpp"

namespace ukes {

inline constexpr int kGpuModuleAbi = 10;

// Device 0's figures; the module's devices are its ordinals 0 .. device_count - 1 (the CUDA
// runtime's, so CUDA_VISIBLE_DEVICES chooses them), all of one kind as the probe checks.
struct GpuDeviceInfo {
  char name[256] = {};
  int ordinal = 0;
  int device_count = 1;
  int compute_major = 0;
  int compute_minor = 0;
  int multiprocessors = 0;
  std::size_t total_memory = 0;  // bytes
  int driver_version = 0;        // as cudaDriverGetVersion: 1000 major + 10 minor
  int runtime_version = 0;
};

// The device libukes_host_gpu.so reports (kernels/backend/host_gpu/): the GPU module's pipeline
// emulated on CPU threads, for CI. Tests keep their batches small on it.
inline constexpr const char* kHostGpuDeviceName = "host emulation (libukes_host_gpu.so)";

// One batch to integrate. The arrays are host memory with the layouts of batch_layout.hpp, sized
// by the caller for the whole batch (BatchResults::allocate).
struct GpuRunRequest {
  const char* model = nullptr;  // catalogue name (built-in models)
  int device = 0;               // the module's device that runs it (GpuDeviceInfo)
  // A user model's bucket (kernels/models/user/buckets.hpp), 0 for a built-in; its program is
  // input.program, in host memory (the module copies it to the device).
  int user_bucket = 0;
  const EnsembleSettings* settings = nullptr;
  BatchInputView input;
  BatchOutputView output;
  int trajectory_slots = 0;       // systems with traj_slot >= 0
  bool statistics = false;        // also compute ensemble statistics on the device
  std::size_t memory_budget = 0;  // device bytes the run may use; 0: 80% of what is free
  std::size_t pinned_budget = 0;  // page-locked host bytes it may pin; 0: kDefaultPinnedBudget
};

struct GpuRunReport {
  GpuPath path = GpuPath::kAuto;  // the path that ran
  int chunks = 0;
  int chunk_systems = 0;  // systems per chunk
  // The chunks' kernel times (device events), added: the two slots' kernels may run at once, so
  // this can exceed the run's wall time.
  double kernel_s = 0.0;
  // Whether the run leased streams and buffers an earlier run of this process had set up
  // (kernels/backend/device/device_context.hpp).
  bool context_reused = false;
  // A user model's fused kernel: compiled for the model (its figures), or the bucket's
  // interpreter and why (kernels/backend/cuda/compiled_kernels.cuh); empty for built-ins.
  std::string kernel;
  EnsembleStatistics statistics;         // when requested
  std::vector<std::int32_t> failed_ids;  // with the statistics: systems not ok, ascending
};

// What `run` returns.
enum GpuRunStatus : int {
  kGpuRunOk = 0,
  kGpuRunFailed = 1,  // this run failed (the output is incomplete); the device is still usable
  // The request's device is broken (an illegal address, a hardware error, an Xid): every later
  // CUDA call on it in this process would fail too. Other devices may still work.
  kGpuRunDeviceLost = 2,
};

// Every type whose layout host and module must agree on.
// clang-format off
#define UKES_GPU_ABI_TYPES(X)   \
  X(GpuDeviceInfo)              \
  X(GpuRunRequest)              \
  X(GpuRunReport)               \
  X(EnsembleSettings)           \
  X(BatchInputView)             \
  X(BatchOutputView)            \
  X(EnsembleStatistics)         \
  X(std::vector<std::int32_t>)  \
  X(std::string)
// clang-format on

namespace detail {
constexpr std::uint64_t fnv1a(std::uint64_t hash, std::uint64_t value) {
  for (int byte = 0; byte < 8; ++byte) {
    hash ^= (value >> (8 * byte)) & 0xffu;
    hash *= 1099511628211ull;
  }
  return hash;
}
}  // namespace detail

// A hash of the sizes and alignments of UKES_GPU_ABI_TYPES, as this compiler lays them out.
inline constexpr std::uint64_t kGpuModuleLayoutHash = [] {
  std::uint64_t hash = 14695981039346656037ull;
#define UKES_HASH_LAYOUT(type)              \
  hash = detail::fnv1a(hash, sizeof(type)); \
  hash = detail::fnv1a(hash, alignof(type));
  UKES_GPU_ABI_TYPES(UKES_HASH_LAYOUT)
#undef UKES_HASH_LAYOUT
  return hash;
}();

struct GpuModule {
  int abi = 0;  // first, so that any module's version can be read
  std::uint64_t layout_hash = 0;
  // 0 when a usable device exists and fills `info`; otherwise writes why into `why`.
  int (*probe)(GpuDeviceInfo* info, char* why, std::size_t capacity) = nullptr;
  // A GpuRunStatus; on failure writes the error into `error`.
  int (*run)(const GpuRunRequest* request, GpuRunReport* report, char* error,
             std::size_t capacity) = nullptr;
};

}  // namespace ukes

// The one symbol the module exports.
extern "C" const ukes::GpuModule* ukes_cuda_module();
inline constexpr const char* kUkesCudaModuleSymbol = "ukes_cuda_module";
