// In-order streams and events on the host, for the host device API (host_api.hpp): each stream is
// a worker thread that runs the work queued on it in order, asynchronously to the caller, as a
// CUDA stream does. A task that throws fails the stream: the work queued after it is skipped and
// idle() / synchronize() rethrow the failure (CUDA reports a failed launch at the next query).
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace ukes::host_gpu {

class Stream {
 public:
  Stream();
  ~Stream();  // waits for the queued work
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  void enqueue(std::function<void()> task);
  // Whether all work queued so far has run; throws the stream's failure.
  bool idle() const;
  void synchronize() const;

 private:
  void serve();
  void rethrow_failure() const;  // with mutex_ held

  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  std::deque<std::function<void()>> queue_;
  bool busy_ = false;
  bool stop_ = false;
  std::exception_ptr failure_;
  std::thread worker_;
};

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
