#include "kernels/backend/host_gpu/host_stream.hpp"

namespace ukes::host_gpu {

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
