// Runs independent pieces of a result file's encoding on this machine's threads (the HDF5
// chunks' compression, the JSON lines' formatting): the writers are CPU-bound on formatting and
// deflate, not on the disk.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace ukes {

// Runs work(k) for k in [0, count), each k once, on up to hardware_concurrency() threads (the
// calling one among them); rethrows one of the exceptions thrown, after every thread has ended.
template <class F>
void on_threads(std::size_t count, const F& work) {
  const std::size_t threads = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1,
                                                      std::max<std::size_t>(1, count));
  std::atomic<std::size_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  const auto take = [&] {
    for (std::size_t k = next++; k < count; k = next++) {
      try {
        work(k);
      } catch (...) {
        const std::lock_guard lock(error_mutex);
        error = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(take);
  take();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace ukes
