// Scratch memory for a chain of Thrust algorithms, in the memory space of their execution policy.
#pragma once

#include <thrust/memory.h>

#include <cstddef>
#include <new>
#include <utility>

namespace ukes {

// `size` elements of T from the policy's own temporary allocator (thrust::get_temporary_buffer:
// a caching allocator attached with thrust::cuda::par(alloc) serves it too), given back when the
// buffer goes out of scope, also when a Thrust call in between throws. Elements are not
// initialized.
template <class T, class Policy>
class ScratchBuffer {
 public:
  ScratchBuffer(const Policy& policy, std::ptrdiff_t size) : policy_(policy) {
    if (size <= 0) return;
    auto [storage, got] = thrust::get_temporary_buffer<T>(policy_, size);
    storage_ = storage;
    size_ = got;
    if (got < size) {
      release();
      throw std::bad_alloc();
    }
  }
  ScratchBuffer(const ScratchBuffer&) = delete;
  ScratchBuffer& operator=(const ScratchBuffer&) = delete;
  ~ScratchBuffer() {
    // A failed release happens only after a device error, which the caller has already seen (or
    // sees at its next call); a destructor must not throw.
    try {
      release();
    } catch (...) {
    }
  }

  T* get() const { return thrust::raw_pointer_cast(storage_); }

 private:
  using Storage =
      decltype(thrust::get_temporary_buffer<T>(std::declval<const Policy&>(), std::ptrdiff_t{1})
                   .first);

  void release() {
    if (size_ > 0) thrust::return_temporary_buffer(policy_, storage_, size_);
    size_ = 0;
  }

  Policy policy_;
  Storage storage_{};
  std::ptrdiff_t size_ = 0;
};

}  // namespace ukes
