// A run's stop request, read inside every system's step loop on the CPU and on the GPU.
//
// Cancellation, deadlines and shutdown must take effect within a fraction of a second however
// long one system is (a DOPRI5 system can take 10^12 steps), so the flag is polled by the shared
// per-system kernel (kernels/ensemble/system_kernel.hpp), not only between systems. The flag is a
// plain 32-bit word so that one representation works everywhere: host threads read it with a
// relaxed atomic load, and the CUDA module mirrors it into a word of device memory that device
// code reads with a volatile load (kernels/backend/cuda/device_buffer.cuh, DeviceStopWord).
#pragma once

#include <cstdint>

#include "kernels/core/hd.hpp"

namespace ukes {

// Owned by whoever may stop a run (a server job, the CLI); runs hold a const pointer to it.
// Host code alone: NVRTC, which compiles only device code (kernels/backend/cuda/jit/), skips it.
#ifndef __CUDACC_RTC__
class CancelFlag {
 public:
  CancelFlag() = default;
  CancelFlag(const CancelFlag&) = delete;
  CancelFlag& operator=(const CancelFlag&) = delete;

  void request() { __atomic_store_n(&word_, 1, __ATOMIC_RELAXED); }
  bool requested() const { return __atomic_load_n(&word_, __ATOMIC_RELAXED) != 0; }
  const std::int32_t* word() const { return &word_; }

 private:
  std::int32_t word_ = 0;
};
#endif

// Whether the word a run was given (null: never) asks it to stop.
UKES_HD UKES_INLINE bool stop_requested(const std::int32_t* word) {
  if (word == nullptr) return false;
#if defined(__CUDA_ARCH__)
  return *static_cast<const volatile std::int32_t*>(word) != 0;
#else
  return __atomic_load_n(word, __ATOMIC_RELAXED) != 0;
#endif
}

// Trial steps between two polls: cheap on the CPU, and on the GPU one read from L2 per 32 steps
// of every warp.
inline constexpr std::int64_t kStopPollInterval = 32;

}  // namespace ukes
