// A move-only buffer of `count` T in memory from an allocation policy: `Memory::allocate(bytes)`
// returns uninitialized memory (throwing on failure) and `Memory::release(p)` frees it. The CUDA
// module's device and pinned buffers (kernels/backend/cuda/device_buffer.cuh) and the host
// emulation's poisoned ones (kernels/backend/host_gpu/host_api.hpp) are this buffer.
#pragma once

#include <cstddef>
#include <utility>

namespace ukes::device {

template <class T, class Memory>
class OwningBuffer {
 public:
  OwningBuffer() = default;
  explicit OwningBuffer(std::size_t count) { resize(count); }
  OwningBuffer(const OwningBuffer&) = delete;
  OwningBuffer& operator=(const OwningBuffer&) = delete;
  OwningBuffer(OwningBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), count_(std::exchange(other.count_, 0)) {}
  OwningBuffer& operator=(OwningBuffer&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(count_, other.count_);
    return *this;
  }
  ~OwningBuffer() { release(); }

  // Contents are not kept.
  void resize(std::size_t count) {
    if (count == count_) return;
    release();
    if (count == 0) return;
    data_ = static_cast<T*>(Memory::allocate(count * sizeof(T)));
    count_ = count;
  }

  T* data() const { return data_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

 private:
  void release() noexcept {
    if (data_ != nullptr) Memory::release(data_);
    data_ = nullptr;
    count_ = 0;
  }

  T* data_ = nullptr;
  std::size_t count_ = 0;
};

}  // namespace ukes::device
