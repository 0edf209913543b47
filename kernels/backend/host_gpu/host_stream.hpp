// In-order streams and events on the host, for the host device API (host_api.hpp): each stream is
// a SerialQueue (kernels/core/serial_queue.hpp), a worker thread that runs the work queued on it
// in order, asynchronously to the caller, as a CUDA stream does; a task that throws fails the
// stream, as a failed launch fails a CUDA stream's later work.
#pragma once

#include <chrono>
#include <mutex>

#include "kernels/core/serial_queue.hpp"

namespace ukes::host_gpu {

// A CUDA stream's work, queued in order and run asynchronously to the caller.
using Stream = SerialQueue;

// Records when the stream reaches it.
class Event {
 public:
  void record(Stream& stream);
  std::chrono::steady_clock::time_point time() const;

 private:
  mutable std::mutex mutex_;
  std::chrono::steady_clock::time_point time_{};
};

float elapsed_ms(const Event& start, const Event& stop);

}  // namespace ukes::host_gpu
