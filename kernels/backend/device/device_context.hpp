// The device state a run needs besides its own inputs and results: both pipeline slots (device
// arrays, their pinned mirrors, streams, events), the summaries kept on the device for the
// statistics, and the staged path's solver handle. Creating it costs more than a server slice's
// work on a GPU (streams and events, cudaMalloc, up to 2 x the pinned budget of cudaHostAlloc,
// cusolverDnCreate), so a process keeps its contexts in a pool: a run leases one, grows its
// buffers where it needs more (never shrinks them) and hands it back. A context idle for
// UKES_GPU_IDLE_RELEASE_S seconds (default 30; 0: at once) is freed by the pool's reaper thread,
// so an idle server holds no device or pinned memory for long. Concurrent runs lease different
// contexts. A run that fails discards its context rather than hand it back: its streams may hold
// failed work. A context belongs to one device (its streams and memory live there): a run leases
// one of its own device's, and the reaper frees each on its device.
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <iterator>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "kernels/backend/device/pipeline_buffers.hpp"

namespace ukes::device {

template <class Api>
struct DeviceContext {
  int device = 0;  // the module's device (GpuRunRequest::device) it lives on
  std::array<PipelineSlot<Api>, 2> slots;
  ResidentSummaries<Api> resident;
  std::unique_ptr<typename Api::Solver> solver;  // created by the first staged run
  std::chrono::steady_clock::time_point returned;
};

// Seconds a context may stay idle before it is freed.
inline double idle_release_s() {
  const char* text = std::getenv("UKES_GPU_IDLE_RELEASE_S");
  if (text == nullptr) return 30.0;
  char* end = nullptr;
  const double value = std::strtod(text, &end);
  return end != text && value >= 0.0 && value <= 86400.0 ? value : 30.0;
}

template <class Api>
class ContextPool {
 public:
  using Context = DeviceContext<Api>;

  // Never destroyed: the reaper thread may still wait on it while the process exits.
  static ContextPool& instance() {
    static auto* pool = new ContextPool;
    return *pool;
  }

  // The most recently returned idle context of `device` (the current device of the calling
  // thread), or a new one; *reused says which.
  std::unique_ptr<Context> acquire(int device, bool* reused) {
    std::unique_ptr<Context> context;
    {
      const std::lock_guard lock(mutex_);
      for (auto it = idle_.rbegin(); it != idle_.rend(); ++it) {
        if ((*it)->device == device) {
          context = std::move(*it);
          idle_.erase(std::next(it).base());
          break;
        }
      }
    }
    *reused = context != nullptr;
    if (context) return context;
    context = std::make_unique<Context>();
    context->device = device;
    return context;
  }

  void give_back(std::unique_ptr<Context> context) {
    if (idle_release_s() <= 0.0) return;  // freed here, on the caller's thread
    context->returned = std::chrono::steady_clock::now();
    const std::lock_guard lock(mutex_);
    idle_.push_back(std::move(context));
    if (!reaper_started_) {
      std::thread([this] { reap(); }).detach();
      reaper_started_ = true;
    }
    wake_.notify_one();
  }

 private:
  ContextPool() = default;

  // Frees contexts once idle past idle_release_s(), read again on every wake-up.
  void reap() {
    std::unique_lock lock(mutex_);
    for (;;) {
      if (idle_.empty()) {
        wake_.wait(lock);
        continue;
      }
      const auto now = std::chrono::steady_clock::now();
      const auto keep_for = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(idle_release_s()));
      std::vector<std::unique_ptr<Context>> expired;
      auto oldest = now;
      for (auto& context : idle_) {
        if (now - context->returned >= keep_for) {
          expired.push_back(std::move(context));
        } else {
          oldest = std::min(oldest, context->returned);
        }
      }
      std::erase(idle_, nullptr);
      if (!expired.empty()) {
        lock.unlock();
        for (auto& context : expired) {  // device frees outside the lock, each on its device
          try {
            Api::set_device(context->device);
          } catch (...) {  // a lost device: its frees fail quietly, as they would anyway
          }
          context.reset();
        }
        lock.lock();
        continue;
      }
      wake_.wait_until(lock, oldest + keep_for);
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<std::unique_ptr<Context>> idle_;
  bool reaper_started_ = false;
};

// A context for one run: handed back to the pool once keep() says the run succeeded, discarded
// otherwise.
template <class Api>
class ContextLease {
 public:
  explicit ContextLease(int device)
      : context_(ContextPool<Api>::instance().acquire(device, &reused_)) {}
  ContextLease(const ContextLease&) = delete;
  ContextLease& operator=(const ContextLease&) = delete;
  ~ContextLease() {
    if (keep_) ContextPool<Api>::instance().give_back(std::move(context_));
  }

  DeviceContext<Api>& operator*() const { return *context_; }
  DeviceContext<Api>* operator->() const { return context_.get(); }
  bool reused() const { return reused_; }
  void keep() { keep_ = true; }

 private:
  bool reused_ = false;
  bool keep_ = false;
  std::unique_ptr<DeviceContext<Api>> context_;
};

}  // namespace ukes::device
