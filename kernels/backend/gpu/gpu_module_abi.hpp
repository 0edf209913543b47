// The boundary between host code and the CUDA module (libukes_cuda.so).
//
// Host binaries never link CUDA: they dlopen the module (gpu_backend.cpp) and call the table it
// exports, so a machine without a GPU, without a driver or even without the toolkit runs the CPU
// backend. Both sides are built from this tree by one toolchain, so plain C++ structs may cross;
// errors cross as text, never as exceptions. kGpuModuleAbi changes whenever these structs do.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/ensemble/ensemble.hpp"
#include "kernels/ensemble/statistics.hpp"
#include "kernels/sweep/sweep.hpp"

namespace ukes {

inline constexpr int kGpuModuleAbi = 2;

struct GpuDeviceInfo {
  char name[256] = {};
  int ordinal = 0;
  int compute_major = 0;
  int compute_minor = 0;
  int multiprocessors = 0;
  std::size_t total_memory = 0;  // bytes
  int driver_version = 0;        // as cudaDriverGetVersion: 1000 major + 10 minor
  int runtime_version = 0;
};

// One batch to integrate. The arrays are host memory with the layouts of batch_layout.hpp, sized
// by the caller for the whole batch (BatchResults::allocate).
struct GpuRunRequest {
  const char* model = nullptr;  // catalogue name (built-in models)
  // A user model's bucket (kernels/models/user/buckets.hpp), 0 for a built-in; its program is
  // input.program, in host memory (the module copies it to the device).
  int user_bucket = 0;
  const EnsembleSettings* settings = nullptr;
  BatchInputView input;
  BatchOutputView output;
  int trajectory_slots = 0;       // systems with traj_slot >= 0
  bool statistics = false;        // also compute ensemble statistics on the device
  std::size_t memory_budget = 0;  // device bytes the run may use; 0: 80% of what is free
  // When the batch is (a slice of) a sweep: the device regenerates the swept input columns,
  // system i being sweep system sweep_first + i. The host arrays hold the same values.
  const SweepSpec* sweep = nullptr;
  std::int64_t sweep_first = 0;
  // Called on the calling thread once systems [begin, end) have all their results in `output`,
  // while the device already works on later chunks.
  void (*on_chunk)(void* user, int begin, int end) = nullptr;
  void* user = nullptr;
};

struct GpuRunReport {
  GpuPath path = GpuPath::kAuto;  // the path that ran
  int chunks = 0;
  int chunk_systems = 0;                 // systems per chunk
  double device_s = 0.0;                 // integration time measured with device events
  EnsembleStatistics statistics;         // when requested
  std::vector<std::int32_t> failed_ids;  // with the statistics: systems not ok, ascending
};

struct GpuModule {
  int abi = 0;
  // 0 when a usable device exists and fills `info`; otherwise writes why into `why`.
  int (*probe)(GpuDeviceInfo* info, char* why, std::size_t capacity) = nullptr;
  // 0 on success; otherwise writes the error into `error` (the output is then incomplete).
  int (*run)(const GpuRunRequest* request, GpuRunReport* report, char* error,
             std::size_t capacity) = nullptr;
};

}  // namespace ukes

// The one symbol the module exports.
extern "C" const ukes::GpuModule* ukes_cuda_module();
inline constexpr const char* kUkesCudaModuleSymbol = "ukes_cuda_module";
