// Owning buffers in device memory and in pinned (page-locked) host memory, which asynchronous
// copies need to overlap with kernels.
#pragma once

#include <cstddef>
#include <utility>

#include "kernels/backend/cuda/cuda_check.cuh"
#include "kernels/backend/device/owning_buffer.hpp"

namespace ukes::cuda {

struct DeviceMemory {
  static void* allocate(std::size_t bytes) {
    void* p = nullptr;
    UKES_CUDA_CHECK(cudaMalloc(&p, bytes));
    return p;
  }
  static void release(void* p) noexcept { cudaFree(p); }
};

struct PinnedHostMemory {
  static void* allocate(std::size_t bytes) {
    void* p = nullptr;
    UKES_CUDA_CHECK(cudaMallocHost(&p, bytes));
    return p;
  }
  static void release(void* p) noexcept { cudaFreeHost(p); }
};

template <class T>
using DeviceBuffer = device::OwningBuffer<T, DeviceMemory>;
template <class T>
using PinnedBuffer = device::OwningBuffer<T, PinnedHostMemory>;

// A stream and an event of our own, destroyed with the object.
class Stream {
 public:
  Stream() { UKES_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() { cudaStreamDestroy(stream_); }
  cudaStream_t get() const { return stream_; }
  void synchronize() const { UKES_CUDA_CHECK(cudaStreamSynchronize(stream_)); }
  // Whether all work queued so far has completed (throws on an error).
  bool idle() const {
    const cudaError_t e = cudaStreamQuery(stream_);
    if (e == cudaErrorNotReady) return false;
    UKES_CUDA_CHECK(e);
    return true;
  }

 private:
  cudaStream_t stream_ = nullptr;
};

// A run's stop request as device code reads it (kernels/core/cancel.hpp): one word of device
// memory, raised by the host while it waits for a chunk with a copy on a stream of its own, which
// the copy engine runs beside the kernels. Not mapped pinned memory: every poll of that crossed the
// bus, and on an H200 a run of 262,144 systems x 500 steps, one poll per warp every 32 steps, took
// 140 ms where its kernel alone took 15 ms (about 1 us per poll, one after another); with the word
// in device memory it took 20 ms (benchmarks/perf_model/README.md, section 7).
class DeviceStopWord {
 public:
  DeviceStopWord() {
    UKES_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    void* word = nullptr;
    UKES_CUDA_CHECK(cudaMallocAsync(&word, sizeof(std::int32_t), stream_));
    word_ = static_cast<std::int32_t*>(word);
    UKES_CUDA_CHECK(cudaMemsetAsync(word_, 0, sizeof(std::int32_t), stream_));
    UKES_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  DeviceStopWord(const DeviceStopWord&) = delete;
  DeviceStopWord& operator=(const DeviceStopWord&) = delete;
  // Stream-ordered: no device-wide synchronization (as cudaFree's) that would wait on other runs.
  ~DeviceStopWord() {
    cudaFreeAsync(word_, stream_);
    cudaStreamSynchronize(stream_);
    cudaStreamDestroy(stream_);
  }
  // A copy from pageable memory returns once staged; the engine writes the word while kernels run.
  void raise() {
    static const std::int32_t kRaised = 1;
    UKES_CUDA_CHECK(
        cudaMemcpyAsync(word_, &kRaised, sizeof(std::int32_t), cudaMemcpyHostToDevice, stream_));
  }
  const std::int32_t* device_word() const { return word_; }

 private:
  cudaStream_t stream_ = nullptr;
  std::int32_t* word_ = nullptr;
};

class Event {
 public:
  Event() { UKES_CUDA_CHECK(cudaEventCreate(&event_)); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event() { cudaEventDestroy(event_); }
  cudaEvent_t get() const { return event_; }
  void record(const Stream& stream) const {
    UKES_CUDA_CHECK(cudaEventRecord(event_, stream.get()));
  }

 private:
  cudaEvent_t event_ = nullptr;
};

// Milliseconds between two recorded (and completed) events.
inline float elapsed_ms(const Event& start, const Event& stop) {
  float ms = 0.0f;
  UKES_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  return ms;
}

}  // namespace ukes::cuda
