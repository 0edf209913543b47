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

// A run's stop request as device code reads it (kernels/core/cancel.hpp): one word of mapped
// pinned memory, raised by the host while it waits for a chunk.
class MappedStopWord {
 public:
  MappedStopWord() {
    void* host = nullptr;
    UKES_CUDA_CHECK(cudaHostAlloc(&host, sizeof(std::int32_t), cudaHostAllocMapped));
    host_ = static_cast<std::int32_t*>(host);
    *host_ = 0;
    void* device = nullptr;
    UKES_CUDA_CHECK(cudaHostGetDevicePointer(&device, host, 0));
    device_ = static_cast<const std::int32_t*>(device);
  }
  MappedStopWord(const MappedStopWord&) = delete;
  MappedStopWord& operator=(const MappedStopWord&) = delete;
  ~MappedStopWord() { cudaFreeHost(host_); }
  void raise() { *static_cast<volatile std::int32_t*>(host_) = 1; }
  const std::int32_t* device_word() const { return device_; }

 private:
  std::int32_t* host_ = nullptr;
  const std::int32_t* device_ = nullptr;
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
