// Owning buffers in device memory and in pinned (page-locked) host memory, which asynchronous
// copies need to overlap with kernels.
#pragma once

#include <cstddef>
#include <utility>

#include "kernels/backend/cuda/cuda_check.cuh"

namespace ukes::cuda {

enum class Memory { kDevice, kPinnedHost };

template <class T, Memory kWhere>
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(std::size_t count) { resize(count); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer(Buffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), count_(std::exchange(other.count_, 0)) {}
  Buffer& operator=(Buffer&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(count_, other.count_);
    return *this;
  }
  ~Buffer() { release(); }

  // Contents are not kept.
  void resize(std::size_t count) {
    if (count == count_) return;
    release();
    if (count == 0) return;
    void* p = nullptr;
    if constexpr (kWhere == Memory::kDevice) {
      UKES_CUDA_CHECK(cudaMalloc(&p, count * sizeof(T)));
    } else {
      UKES_CUDA_CHECK(cudaMallocHost(&p, count * sizeof(T)));
    }
    data_ = static_cast<T*>(p);
    count_ = count;
  }

  T* data() const { return data_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

 private:
  void release() noexcept {
    if (data_ == nullptr) return;
    if constexpr (kWhere == Memory::kDevice) {
      cudaFree(data_);
    } else {
      cudaFreeHost(data_);
    }
    data_ = nullptr;
    count_ = 0;
  }

  T* data_ = nullptr;
  std::size_t count_ = 0;
};

template <class T>
using DeviceBuffer = Buffer<T, Memory::kDevice>;
template <class T>
using PinnedBuffer = Buffer<T, Memory::kPinnedHost>;

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
