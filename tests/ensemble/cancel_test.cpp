// Cancelling an ensemble run: every system polls the stop flag inside its step loop, so a cancel
// takes effect within a few steps however long one system is; systems in flight and systems not
// reached end `cancelled`, and every system that ended before the cancel is exactly what an
// uncancelled run gives it.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "kernels/ensemble/ensemble.hpp"
#include "kernels/ensemble/to_run_settings.hpp"
#include "kernels/models/duffing.hpp"
#include "kernels/models/model_info.hpp"
#include "kernels/staged/cpu_executor.hpp"

namespace ukes {
namespace {

using Clock = std::chrono::steady_clock;

EnsembleSettings scara_settings() {
  const ModelInfo& m = *find_model("scara");
  EnsembleSettings s = EnsembleSettings::for_model(m);
  s.method = Method::kRk4;
  s.t_end = 1.0;
  s.dt = 1e-3;
  s.threads = 2;
  return s;
}

// One Duffing system that would need 10^12 RK4 steps: hours of work.
EnsembleSettings endless_duffing_settings() {
  EnsembleSettings s = EnsembleSettings::for_model(*find_model("duffing"));
  s.method = Method::kRk4;
  s.t_end = 1.0;
  s.dt = 1e-12;
  s.max_steps = std::int64_t{1} << 50;
  s.threads = 1;
  return s;
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Requests `flag` after `delay` on a thread of its own; joined on destruction.
class DelayedCancel {
 public:
  DelayedCancel(CancelFlag& flag, std::chrono::milliseconds delay)
      : thread_([&flag, delay, this] {
          std::this_thread::sleep_for(delay);
          requested_at_ = Clock::now();
          flag.request();
        }) {}
  ~DelayedCancel() { join(); }
  void join() {
    if (thread_.joinable()) thread_.join();
  }
  Clock::time_point requested_at() {
    join();
    return requested_at_;
  }

 private:
  Clock::time_point requested_at_{};
  std::thread thread_;
};

TEST(Cancel, AFlagSetBeforehandRunsNothing) {
  const Batch batch = Batch::defaults(*find_model("scara"), 64);
  CancelFlag cancel;
  cancel.request();
  EnsembleSettings s = scara_settings();
  s.cancel = &cancel;
  BatchResults r;
  run_ensemble_cpu(batch, s, r);
  for (int i = 0; i < batch.count; ++i) {
    EXPECT_EQ(r.steps[i], 0) << i;
    EXPECT_EQ(r.status[i], static_cast<int>(Status::kCancelled)) << i;
  }
}

TEST(Cancel, StopsEarlyAndKeepsWhatWasDoneExact) {
  // 8 x 10^7 system-steps: seconds of work even in AVX-512 lanes (about 15 M steps/s on 2 cores,
  // benchmarks/README.md), where 4000 systems of 1000 steps could end before the cancel came.
  const Batch batch = Batch::defaults(*find_model("scara"), 40000);
  EnsembleSettings s = scara_settings();
  s.t_end = 2.0;
  BatchResults full;
  {
    const Batch head = Batch::defaults(*find_model("scara"), 64);
    run_ensemble_cpu(head, s, full);  // the reference for the systems that will be done
  }
  CancelFlag cancel;
  s.cancel = &cancel;
  BatchResults r;
  {
    DelayedCancel stopper(cancel, std::chrono::milliseconds(300));
    run_ensemble_cpu(batch, s, r);
  }
  int done = 0, cancelled = 0;
  for (int i = 0; i < batch.count; ++i) {
    if (r.status[i] == static_cast<int>(Status::kCancelled)) {
      ++cancelled;
      continue;
    }
    ++done;
    EXPECT_EQ(r.status[i], static_cast<int>(Status::kOk)) << i;
    if (i < full.count) {
      EXPECT_EQ(r.steps[i], full.steps[i]) << i;
      for (int j = 0; j < 4; ++j) EXPECT_EQ(r.q_at(j, i), full.q_at(j, i)) << i;
    }
  }
  EXPECT_GT(done, 0);
  EXPECT_GT(cancelled, 0);  // the whole batch takes seconds
  EXPECT_EQ(done + cancelled, batch.count);
}

// The regression: cancellation used to be checked only between systems, so one long system
// could not be stopped at all.
TEST(Cancel, OneEndlessSystemStopsWithinMilliseconds) {
  const Batch batch = Batch::defaults(*find_model("duffing"), 1);
  EnsembleSettings s = endless_duffing_settings();
  CancelFlag cancel;
  s.cancel = &cancel;
  BatchResults r;
  DelayedCancel stopper(cancel, std::chrono::milliseconds(100));
  run_ensemble_cpu(batch, s, r);
  const double late_s = seconds_since(stopper.requested_at());
  EXPECT_LT(late_s, 0.1);  // 32 Duffing steps take microseconds; the slack is for the scheduler
  EXPECT_EQ(r.status[0], static_cast<int>(Status::kCancelled));
  EXPECT_GT(r.steps[0], 0);
  EXPECT_LT(r.t[0], s.t_end);
}

// The staged path's systems poll the same flag through the same control logic.
TEST(Cancel, TheStagedPathStopsAnEndlessSystemToo) {
  const Batch batch = Batch::defaults(*find_model("duffing"), 2);
  EnsembleSettings e = endless_duffing_settings();
  CancelFlag cancel;
  e.cancel = &cancel;
  BatchResults r;
  r.allocate(batch, e.samples, {});
  DelayedCancel stopper(cancel, std::chrono::milliseconds(100));
  // No host-side check: the systems must stop by themselves.
  run_staged_cpu<models::Duffing, double>(batch.view(), to_run_settings<double>(e), r.view(),
                                          nullptr);
  EXPECT_LT(seconds_since(stopper.requested_at()), 0.1);
  for (int i = 0; i < 2; ++i) EXPECT_EQ(r.status[i], static_cast<int>(Status::kCancelled)) << i;
}

}  // namespace
}  // namespace ukes
