// The GPU module's persistent context (kernels/backend/device/device_context.hpp): a run leases
// the streams and buffers an earlier run set up, grows them when it needs more, and gets the very
// numbers a fresh context gives; idle contexts are freed after UKES_GPU_IDLE_RELEASE_S; concurrent
// runs lease different ones. Needs a GPU: without one every test here is skipped. CI runs them on
// the host emulation of the GPU module (ctest's HostGpu: tests).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "kernels/backend/gpu/gpu_backend.hpp"
#include "kernels/models/model_info.hpp"
#include "tests/support/gpu_support.hpp"
#include "tests/support/identical_results.hpp"

namespace ukes {
namespace {

using testing::expect_identical;

EnsembleSettings short_rk4(const ModelInfo& m) {
  EnsembleSettings s = EnsembleSettings::for_model(m);
  s.method = Method::kRk4;
  s.dt = m.t_end / 1000.0;
  s.t_end = s.t0 + 50 * s.dt;
  s.samples = 3;
  return s;
}

Batch nudged(const ModelInfo& m, int count) {
  Batch b = Batch::defaults(m, count);
  for (int i = 0; i < count; ++i) b.q(0, i) += 1e-4 * (i % 13);
  return b;
}

class GpuContext : public ::testing::Test {
 protected:
  void SetUp() override { setenv("UKES_GPU_IDLE_RELEASE_S", "30", 1); }
  void TearDown() override { unsetenv("UKES_GPU_IDLE_RELEASE_S"); }
};

// A second run, larger (the buffers grow), a third smaller (buffers larger than it needs, holding
// the second run's values): each leases the context and gets the numbers of a fresh one.
TEST_F(GpuContext, LaterRunsReuseItAndGetTheSameNumbers) {
  SKIP_WITHOUT_GPU();
  const ModelInfo& m = *find_model("scara");
  const EnsembleSettings s = short_rk4(m);
  const Batch small = nudged(m, 300), large = nudged(m, 1000);
  BatchResults first, second, third;
  run_ensemble_gpu(small, s, first, {0, 299}, true);
  const GpuRunReport grown = run_ensemble_gpu(large, s, second, {0, 999}, true);
  const GpuRunReport again = run_ensemble_gpu(small, s, third, {0, 299}, true);
  EXPECT_TRUE(grown.context_reused);
  EXPECT_TRUE(again.context_reused);
  expect_identical(third, first);
  for (int i = 0; i < 300; i += 37) EXPECT_EQ(second.q_at(1, i), first.q_at(1, i)) << i;
}

TEST_F(GpuContext, AnIdleContextIsFreedAfterTheIdleTime) {
  SKIP_WITHOUT_GPU();
  const ModelInfo& m = *find_model("duffing");
  const EnsembleSettings s = short_rk4(m);
  const Batch batch = nudged(m, 200);
  setenv("UKES_GPU_IDLE_RELEASE_S", "0.2", 1);
  BatchResults out;
  run_ensemble_gpu(batch, s, out);
  EXPECT_TRUE(run_ensemble_gpu(batch, s, out).context_reused);  // within 0.2 s
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  EXPECT_FALSE(run_ensemble_gpu(batch, s, out).context_reused);
  setenv("UKES_GPU_IDLE_RELEASE_S", "0", 1);  // freed as soon as a run ends
  run_ensemble_gpu(batch, s, out);
  EXPECT_FALSE(run_ensemble_gpu(batch, s, out).context_reused);
}

TEST_F(GpuContext, ConcurrentRunsLeaseTheirOwnContexts) {
  SKIP_WITHOUT_GPU();
  const ModelInfo& m = *find_model("scara");
  const EnsembleSettings s = short_rk4(m);
  const Batch batch = nudged(m, 400);
  BatchResults alone;
  run_ensemble_gpu(batch, s, alone, {3});
  BatchResults a, b;
  std::thread other([&] { run_ensemble_gpu(batch, s, a, {3}); });
  run_ensemble_gpu(batch, s, b, {3});
  other.join();
  expect_identical(a, alone);
  expect_identical(b, alone);
}

// A run that fails discards its context rather than hand it back: the next run sets up afresh
// and is unaffected.
TEST_F(GpuContext, AFailedRunLeavesNothingBehind) {
  SKIP_WITHOUT_GPU();
  const ModelInfo& m = *find_model("duffing");
  EnsembleSettings s = short_rk4(m);
  const Batch batch = nudged(m, 200);
  BatchResults before, after, failed;
  run_ensemble_gpu(batch, s, before);
  EnsembleSettings impossible = s;
  impossible.gpu_memory_budget = 1;  // the summaries the statistics read do not fit
  EXPECT_THROW(run_ensemble_gpu(batch, impossible, failed, {}, true), std::runtime_error);
  EXPECT_FALSE(run_ensemble_gpu(batch, s, after).context_reused);  // the failed run's is gone
  expect_identical(after, before);
}

}  // namespace
}  // namespace ukes
