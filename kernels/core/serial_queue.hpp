// Work run in order on a thread of its own, asynchronously to the caller: the host emulation's
// CUDA streams (kernels/backend/host_gpu/host_stream.hpp) and the run path's slice worker
// (service/engine/engine.cpp). A task that throws fails the queue: the work queued after it is
// skipped, and idle() / synchronize() rethrow the failure (as CUDA reports a failed launch at the
// next query).
#pragma once

#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace ukes {

class SerialQueue {
 public:
  SerialQueue();
  ~SerialQueue();  // waits for the queued work
  SerialQueue(const SerialQueue&) = delete;
  SerialQueue& operator=(const SerialQueue&) = delete;

  void enqueue(std::function<void()> task);
  // Whether all work queued so far has run; throws the queue's failure.
  bool idle() const;
  // Waits until all work queued so far has run; throws the queue's failure.
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
  std::thread worker_;  // last: starts when the members it uses exist
};

}  // namespace ukes
