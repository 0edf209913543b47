// The one run path (service/engine/engine.hpp), which `ukes run` and server jobs share: slices
// that cover the batch in order, each handed over as it finishes, results equal to the backend's
// run of the whole batch at once (trajectories included), slices within their memory bound, and
// stops that keep what finished, slices that follow given ends (a durable job run again),
// slices finished off the integrating thread, the last one while the statistics are computed, and
// last rounds that shrink so that nothing waits long for the last hand-on.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "kernels/backend/cpu/cpu_backend.hpp"
#include "service/engine/engine.hpp"
#include "service/runspec/run_spec.hpp"
#include "tests/support/identical_results.hpp"

namespace ukes {
namespace {

RunSpec scara_sweep(int count) {
  return parse_run_spec(nlohmann::json::parse(R"({
    "model": "scara", "device": "cpu",
    "sweep": {"count": )" + std::to_string(count) +
                                              R"(, "seed": 3,
              "vary": {"q0[0]": {"uniform": [0.1, 0.2]}}},
    "integrator": {"method": "rk4", "t_end": 0.02, "dt": 0.001},
    "output": {"samples": 4, "trajectories": [1999, 0, 700, 5]}
  })"));
}

// The whole batch in one backend call: what slicing must not change.
BatchResults whole_batch(const RunSpec& spec) {
  EnsembleSettings s = spec.settings;
  s.threads = 2;
  BatchResults out;
  run_ensemble_cpu(spec.batch, s, out, spec.output.trajectory_ids);
  return out;
}

TEST(RunPath, SlicesCoverTheBatchInOrderAndChangeNoNumber) {
  const RunSpec spec = scara_sweep(2000);
  ExecuteOptions options;
  options.threads = 2;
  options.slice_target_s = 1e-9;  // slices stay at their smallest: 32 systems
  std::vector<int> firsts, ends;
  options.on_slice = [&](const SliceDone& slice) {
    firsts.push_back(slice.first);
    ends.push_back(slice.systems_done);
    EXPECT_EQ(slice.systems_done, slice.first + slice.batch.count);
    EXPECT_EQ(slice.results.count, slice.batch.count);
  };
  const RunOutcome out = execute(spec, options);
  ASSERT_EQ(out.end, RunEnd::kCompleted);
  EXPECT_EQ(out.systems_done, 2000);
  ASSERT_GT(firsts.size(), 10u);
  EXPECT_EQ(firsts.front(), 0);
  for (std::size_t k = 1; k < firsts.size(); ++k) EXPECT_EQ(firsts[k], ends[k - 1]);
  EXPECT_EQ(ends.back(), 2000);

  const BatchResults whole = whole_batch(spec);
  testing::expect_identical(out.results, whole);
  EXPECT_EQ(out.statistics.ok, 2000);
  EXPECT_EQ(out.statistics.q[0].max, ensemble_statistics(whole).q[0].max);
}

// The slices of an earlier run, reproduced: a durable server job run again after a restart
// reproduces its stored chunks only if its slices end where they ended (service/server/).
TEST(RunPath, GivenSliceEndsComeFirstThenSizesAdapt) {
  const RunSpec spec = scara_sweep(2000);
  ExecuteOptions options;
  options.threads = 2;
  options.slice_target_s = 1e-9;  // after the given ends: 32 systems a slice
  options.slice_ends = {5, 17, 1000};
  std::vector<int> ends;
  options.on_slice = [&](const SliceDone& slice) { ends.push_back(slice.systems_done); };
  const RunOutcome out = execute(spec, options);
  ASSERT_EQ(out.end, RunEnd::kCompleted);
  ASSERT_GT(ends.size(), 4u);
  EXPECT_EQ(std::vector<int>(ends.begin(), ends.begin() + 4),
            (std::vector<int>{5, 17, 1000, 1032}));
  EXPECT_EQ(ends.back(), 2000);
  testing::expect_identical(out.results, whole_batch(spec));
}

TEST(RunPath, SlicesStayWithinTheirMemory) {
  const RunSpec spec = scara_sweep(2000);
  const SliceCosts costs = slice_costs(spec);
  ExecuteOptions options;
  options.threads = 2;
  options.keep_trajectories = false;
  options.slice_bytes = kSlicesAlive * 100 * costs.per_system;  // 100 systems a slice
  int largest = 0;
  options.on_slice = [&](const SliceDone& slice) {
    largest = std::max(largest, slice.batch.count);
  };
  EXPECT_EQ(execute(spec, options).systems_done, 2000);
  EXPECT_EQ(largest, 100);

  options.slice_bytes = kSlicesAlive * costs.per_trajectory;  // one recorded system a slice
  std::vector<std::size_t> recorded;
  options.on_slice = [&](const SliceDone& slice) {
    if (!slice.results.traj_ids.empty()) recorded.push_back(slice.results.traj_ids.size());
  };
  EXPECT_EQ(execute(spec, options).systems_done, 2000);
  EXPECT_EQ(recorded, std::vector<std::size_t>(4, 1));
}

TEST(RunPath, AStopKeepsTheSlicesThatFinished) {
  const RunSpec spec = scara_sweep(2000);
  CancelFlag cancel;
  ExecuteOptions options;
  options.threads = 2;
  options.slice_target_s = 1e-9;
  options.cancel = &cancel;
  options.on_slice = [&](const SliceDone& slice) {
    if (slice.systems_done >= 96) cancel.request();
  };
  const RunOutcome out = execute(spec, options);
  EXPECT_EQ(out.end, RunEnd::kCancelled);
  EXPECT_EQ(out.systems_done, 96);
  EXPECT_EQ(out.statistics.ok, 0);  // statistics are of completed runs only
  const BatchResults whole = whole_batch(spec);
  for (int i = 0; i < 96; ++i) EXPECT_EQ(out.results.q_at(1, i), whole.q_at(1, i)) << i;

  ExecuteOptions late = options;
  late.cancel = nullptr;
  late.timeout_s = 1e-12;  // past before the first slice
  const RunOutcome timed_out = execute(spec, late);
  EXPECT_EQ(timed_out.end, RunEnd::kTimedOut);
  EXPECT_EQ(timed_out.systems_done, 0);
}

// Slices are finished (copied into the run's results, handed to on_slice) on the run's worker
// thread, so that the next slice integrates meanwhile; in order, and a failure there ends the run.
TEST(RunPath, SlicesAreFinishedOffTheIntegratingThreadInOrder) {
  const RunSpec spec = scara_sweep(2000);
  ExecuteOptions options;
  options.threads = 2;
  options.slice_target_s = 1e-9;
  const auto caller = std::this_thread::get_id();
  std::set<std::thread::id> finishing;
  int last_end = 0;
  options.on_slice = [&](const SliceDone& slice) {
    finishing.insert(std::this_thread::get_id());
    EXPECT_EQ(slice.first, last_end);
    last_end = slice.systems_done;
  };
  const RunOutcome out = execute(spec, options);
  EXPECT_EQ(last_end, 2000);
  ASSERT_EQ(finishing.size(), 1u);
  EXPECT_NE(*finishing.begin(), caller);
  testing::expect_identical(out.results, whole_batch(spec));

  // It throws late, while the integrating thread waits for it with the next slice's inputs
  // queued behind it: the worker skips them and the run still ends.
  options.on_slice = [&](const SliceDone& slice) {
    if (slice.systems_done < 64) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    throw std::runtime_error("disk on fire");
  };
  EXPECT_THROW(execute(spec, options), std::runtime_error);
}

// The last round is copied on the integrating thread and handed on by the worker while the
// statistics are computed: it still comes last, with every step counted, and a failure in handing
// it on still ends the run.
TEST(RunPath, TheLastSliceIsHandedOnAfterTheOthersWhateverTheStatistics) {
  const RunSpec spec = scara_sweep(2000);
  ExecuteOptions options;
  options.threads = 2;
  options.slice_target_s = 1e-9;
  std::int64_t last_steps = 0;
  int last_end = 0;
  options.on_slice = [&](const SliceDone& slice) {
    EXPECT_EQ(slice.first, last_end);
    EXPECT_GT(slice.steps_done, last_steps);
    last_end = slice.systems_done;
    last_steps = slice.steps_done;
  };
  const RunOutcome out = execute(spec, options);
  EXPECT_EQ(last_end, 2000);
  EXPECT_EQ(last_steps, out.steps);
  const BatchResults whole = whole_batch(spec);
  std::int64_t steps = 0;
  for (auto s : whole.steps) steps += s;
  EXPECT_EQ(out.steps, steps);
  EXPECT_EQ(out.statistics.steps.mean, ensemble_statistics(whole).steps.mean);
  EXPECT_EQ(out.statistics.q[1].p95, ensemble_statistics(whole).q[1].p95);

  options.on_slice = [](const SliceDone& slice) {
    if (slice.systems_done == 2000) throw std::runtime_error("disk full at the end");
  };
  EXPECT_THROW(execute(spec, options), std::runtime_error);
}

// Nothing after the last round hides its hand-on (a server encodes, stores and streams it), so
// when handing on is slow the last rounds shrink, each to at least half of what is left, down to
// one that leaves no round of the smallest size (32 systems on 2 threads) behind it.
TEST(RunPath, TheLastRoundsShrinkWhenHandingOnIsSlow) {
  const RunSpec spec = scara_sweep(2000);
  ExecuteOptions options;
  options.threads = 2;
  options.slice_target_s = 1e9;  // else slices grow 4x a round: 32, 32, 128, 512, 2048
  options.keep_trajectories = false;
  std::vector<int> sizes;
  options.on_slice = [&](const SliceDone& slice) {
    sizes.push_back(slice.batch.count);
    std::this_thread::sleep_for(std::chrono::microseconds(50 * slice.batch.count));
  };
  const RunOutcome out = execute(spec, options);
  ASSERT_EQ(out.end, RunEnd::kCompleted);
  const auto largest = std::max_element(sizes.begin(), sizes.end());
  ASSERT_GT(sizes.end() - largest, 4) << "no shrinking tail";
  for (auto k = largest + 1; k != sizes.end(); ++k) {
    EXPECT_LE(*k, *(k - 1));
    EXPECT_GE(2 * *k, 2000 - std::accumulate(sizes.begin(), k, 0) - 1);  // half of what was left
  }
  EXPECT_LT(sizes.back(), 64);
  const BatchResults whole = whole_batch(spec);
  for (int i = 0; i < 2000; ++i) EXPECT_EQ(out.results.q_at(1, i), whole.q_at(1, i)) << i;
}

}  // namespace
}  // namespace ukes
