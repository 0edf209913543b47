// The device API (kernels/backend/device/device_api.hpp) on the host, for CI: "device" memory is
// host memory, streams are worker threads (host_stream.hpp), kernels run their systems on CPU
// threads and the warp path's teams on 32-lane ThreadTeams (thread_team.hpp). libukes_host_gpu.so
// runs the GPU module's pipeline on it, so every line of that pipeline runs on a machine without a
// GPU. It is built to catch what a GPU would punish, not to be fast:
//  - new device and pinned buffers are filled with poison (all bits set: NaN, -1), and so is a
//    copy's destination when the copy is queued, so whatever reads it before the stream has run
//    the copy reads NaN;
//  - everything queued on a stream runs later, on the stream's thread, never at once;
//  - the staged path's factorizations follow cuSOLVER's conventions where they are free
//    (host_staged_executor.hpp).
// UKES_HOST_GPU_MAX_CHUNK caps the systems per chunk (tiny chunks: many pipeline turns).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "kernels/backend/device/owning_buffer.hpp"
#include "kernels/backend/device/system_kernels.hpp"
#include "kernels/backend/host_gpu/host_stream.hpp"
#include "kernels/backend/host_gpu/thread_team.hpp"
#include "kernels/backend/thrust/statistics_input.hpp"
#include "kernels/ensemble/statistics.hpp"

namespace ukes::host_gpu {

inline constexpr unsigned char kPoison = 0xff;

// Host memory standing in for device or pinned memory; uninitialized as cudaMalloc's is, which
// here means poisoned.
struct PoisonedMemory {
  static void* allocate(std::size_t bytes) {
    void* p = ::operator new (bytes, std::align_val_t{256});
    std::memset(p, kPoison, bytes);
    return p;
  }
  static void release(void* p) noexcept { ::operator delete (p, std::align_val_t{256}); }
};
template <class T>
using Buffer = device::OwningBuffer<T, PoisonedMemory>;

// The stop word the kernels poll; on the host the kernels read the host's word itself.
class StopWord {
 public:
  void raise() { __atomic_store_n(&word_, 1, __ATOMIC_RELAXED); }
  const std::int32_t* device_word() const { return &word_; }

 private:
  std::int32_t word_ = 0;
};

struct Solver {};  // the host's factorizations need no handle

// A positive integer from the environment, or `otherwise`.
inline int positive_env(const char* name, int otherwise) {
  const char* text = std::getenv(name);
  if (text == nullptr) return otherwise;
  const long value = std::strtol(text, nullptr, 10);
  return value > 0 && value <= std::numeric_limits<int>::max() ? static_cast<int>(value)
                                                               : otherwise;
}

// Runs body(i) for i in [0, count) on up to `threads` threads, in contiguous blocks.
template <class Body>
void parallel_for(int count, const Body& body) {
  const int threads = std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, 16);
  const int workers = std::min(threads, (count + 31) / 32);
  if (workers <= 1) {
    for (int i = 0; i < count; ++i) body(i);
    return;
  }
  std::vector<std::thread> pool;
  pool.reserve(static_cast<std::size_t>(workers));
  for (int w = 0; w < workers; ++w) {
    const int begin = static_cast<int>(static_cast<long long>(count) * w / workers);
    const int end = static_cast<int>(static_cast<long long>(count) * (w + 1) / workers);
    pool.emplace_back([&body, begin, end] {
      for (int i = begin; i < end; ++i) body(i);
    });
  }
  for (std::thread& t : pool) t.join();
}

}  // namespace ukes::host_gpu

namespace ukes {

struct HostApi {
  template <class T>
  using DeviceBuffer = host_gpu::Buffer<T>;
  template <class T>
  using PinnedBuffer = host_gpu::Buffer<T>;
  using Stream = host_gpu::Stream;
  using Event = host_gpu::Event;
  using StopWord = host_gpu::StopWord;
  using Solver = host_gpu::Solver;

  // Small chunks, so that ordinary test batches take several turns of the two-slot pipeline.
  static constexpr int kMinChunkSystems = 64;
  static constexpr int kChunkGranule = kWarpSize;
  static constexpr std::size_t kEmulatedMemory = std::size_t{4} << 30;
  static int chunk_limit() {
    return host_gpu::positive_env("UKES_HOST_GPU_MAX_CHUNK", std::numeric_limits<int>::max());
  }

  static void copy(void* dst, const void* src, std::size_t bytes, Stream& stream) {
    std::memset(dst, host_gpu::kPoison, bytes);
    stream.enqueue([=] { std::memcpy(dst, src, bytes); });
  }
  static void copy_2d(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch,
                      std::size_t width, std::size_t rows, Stream& stream) {
    auto* d = static_cast<unsigned char*>(dst);
    const auto* s = static_cast<const unsigned char*>(src);
    for (std::size_t r = 0; r < rows; ++r) std::memset(d + r * dst_pitch, host_gpu::kPoison, width);
    stream.enqueue([=] {
      for (std::size_t r = 0; r < rows; ++r)
        std::memcpy(d + r * dst_pitch, s + r * src_pitch, width);
    });
  }
  static void copy_now(void* dst, const void* src, std::size_t bytes) {
    std::memcpy(dst, src, bytes);
  }
  static std::size_t free_memory() { return kEmulatedMemory; }
  // Every emulated device is this host (UKES_HOST_GPU_DEVICES, module.cpp): nothing to switch.
  static void set_device(int) {}
  static float elapsed_ms(const Event& start, const Event& stop) {
    return host_gpu::elapsed_ms(start, stop);
  }

  template <class Kernel>
  static void launch_systems(Stream& stream, int count, const Kernel& kernel) {
    if (count <= 0) return;
    stream.enqueue([=] { host_gpu::parallel_for(count, kernel); });
  }

  // One 32-lane team integrates the systems one after the other: every lane is a thread, and
  // every collective a barrier, so this is exact and slow (tests keep such batches small).
  template <class Kernel>
  static void launch_teams(Stream& stream, int count, const Kernel& kernel) {
    if (count <= 0) return;
    stream.enqueue([=] {
      host_gpu::ThreadTeam team(kWarpSize);
      team.run([&](const host_gpu::ThreadTeam::Lane& lane) {
        for (int i = 0; i < count; ++i) kernel(lane, i);
      });
    });
  }

  // Defined in host_staged_executor.hpp.
  template <class Model, class T>
  static void run_staged(const BatchInputView& in, const RunSettings<T>& s,
                         const BatchOutputView& out, Stream& stream, Solver& solver,
                         const CancelFlag* cancel);

  static EnsembleStatistics statistics(const ThrustStatisticsInput& in, Stream& stream,
                                       std::vector<std::int32_t>* failed_ids);

  // Nothing on the host outlives a failed run.
  static bool context_is_broken() { return false; }
};

}  // namespace ukes

#include "kernels/backend/host_gpu/host_staged_executor.hpp"
