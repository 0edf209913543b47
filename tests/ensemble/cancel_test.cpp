// Cancelling a CPU ensemble run: the workers stop taking systems once the flag is set, and every
// system that was integrated is exactly what an uncancelled run gives it.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "kernels/ensemble/ensemble.hpp"
#include "kernels/models/model_info.hpp"

namespace ukes {
namespace {

EnsembleSettings scara_settings() {
  const ModelInfo& m = *find_model("scara");
  EnsembleSettings s = EnsembleSettings::for_model(m);
  s.method = Method::kRk4;
  s.t_end = 1.0;
  s.dt = 1e-3;
  s.threads = 2;
  return s;
}

TEST(Cancel, AFlagSetBeforehandRunsNothing) {
  const Batch batch = Batch::defaults(*find_model("scara"), 64);
  std::atomic<bool> cancel{true};
  EnsembleSettings s = scara_settings();
  s.cancel = &cancel;
  BatchResults r;
  run_ensemble_cpu(batch, s, r);
  for (auto steps : r.steps) EXPECT_EQ(steps, 0);
}

TEST(Cancel, StopsEarlyAndKeepsWhatWasDoneExact) {
  const Batch batch = Batch::defaults(*find_model("scara"), 4000);  // several seconds of work
  EnsembleSettings s = scara_settings();
  BatchResults full;
  {
    const Batch head = Batch::defaults(*find_model("scara"), 64);
    run_ensemble_cpu(head, s, full);  // the reference for the systems that will be done
  }
  std::atomic<bool> cancel{false};
  s.cancel = &cancel;
  BatchResults r;
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    cancel = true;
  });
  run_ensemble_cpu(batch, s, r);
  stopper.join();
  int done = 0;
  for (int i = 0; i < batch.count; ++i) {
    if (r.steps[i] == 0) continue;
    ++done;
    if (i < full.count) {
      EXPECT_EQ(r.steps[i], full.steps[i]) << i;
      for (int j = 0; j < 4; ++j) EXPECT_EQ(r.q_at(j, i), full.q_at(j, i)) << i;
    }
  }
  EXPECT_GT(done, 0);
  EXPECT_LT(done, batch.count);  // the whole batch takes several seconds
}

}  // namespace
}  // namespace ukes
