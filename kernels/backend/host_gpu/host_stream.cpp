#include "kernels/backend/host_gpu/host_stream.hpp"

#include <utility>

namespace ukes::host_gpu {

Stream::Stream() : worker_([this] { serve(); }) {}

Stream::~Stream() {
  {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return queue_.empty() && !busy_; });
    stop_ = true;
  }
  changed_.notify_all();
  worker_.join();
}

void Stream::enqueue(std::function<void()> task) {
  {
    const std::lock_guard lock(mutex_);
    queue_.push_back(std::move(task));
  }
  changed_.notify_all();
}

void Stream::rethrow_failure() const {
  if (failure_) std::rethrow_exception(failure_);
}

bool Stream::idle() const {
  const std::lock_guard lock(mutex_);
  rethrow_failure();
  return queue_.empty() && !busy_;
}

void Stream::synchronize() const {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return queue_.empty() && !busy_; });
  rethrow_failure();
}

void Stream::serve() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stop_, nothing left
    std::function<void()> task = std::move(queue_.front());
    queue_.pop_front();
    if (failure_) {  // a failed stream runs nothing more
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

void Event::record(Stream& stream) {
  stream.enqueue([this] {
    const std::lock_guard lock(mutex_);
    time_ = std::chrono::steady_clock::now();
  });
}

std::chrono::steady_clock::time_point Event::time() const {
  const std::lock_guard lock(mutex_);
  return time_;
}

float elapsed_ms(const Event& start, const Event& stop) {
  return std::chrono::duration<float, std::milli>(stop.time() - start.time()).count();
}

}  // namespace ukes::host_gpu
