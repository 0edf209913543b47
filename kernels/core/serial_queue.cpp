#include "kernels/core/serial_queue.hpp"

#include <utility>

namespace ukes {

SerialQueue::SerialQueue() : worker_([this] { serve(); }) {}

SerialQueue::~SerialQueue() {
  {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return queue_.empty() && !busy_; });
    stop_ = true;
  }
  changed_.notify_all();
  worker_.join();
}

void SerialQueue::enqueue(std::function<void()> task) {
  {
    const std::lock_guard lock(mutex_);
    queue_.push_back(std::move(task));
  }
  changed_.notify_all();
}

void SerialQueue::rethrow_failure() const {
  if (failure_) std::rethrow_exception(failure_);
}

bool SerialQueue::idle() const {
  const std::lock_guard lock(mutex_);
  rethrow_failure();
  return queue_.empty() && !busy_;
}

void SerialQueue::synchronize() const {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return queue_.empty() && !busy_; });
  rethrow_failure();
}

void SerialQueue::serve() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stop_, nothing left
    std::function<void()> task = std::move(queue_.front());
    queue_.pop_front();
    if (failure_) {  // a failed queue runs nothing more
      changed_.notify_all();
      continue;
    }
    busy_ = true;
    lock.unlock();
    std::exception_ptr failure;
    try {
      task();
    } catch (...) {
      failure = std::current_exception();
    }
    lock.lock();
    busy_ = false;
    if (failure && !failure_) failure_ = failure;
    changed_.notify_all();
  }
}

}  // namespace ukes
