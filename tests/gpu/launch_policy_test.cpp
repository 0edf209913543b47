// The CUDA backend's layout decisions, which are plain host code: which path a model takes and how
// many systems go to the device at once.
#include "kernels/backend/gpu/launch_policy.hpp"

#include <gtest/gtest.h>

#include "kernels/models/catalogue.hpp"
#include "kernels/models/user/buckets.hpp"

namespace ukes {
namespace {

template <class Model>
GpuPath automatic_path() {
  return choose_gpu_path(GpuPath::kAuto, Model::kN, kRows<Model>);
}

// The performance model predicts the fused kernel ahead of the warp path for every catalogue
// model (scripts/perf_model.py --check, ctest PerfModel.PolicyFollowsTheModel).
#define UKES_EXPECT_FUSED(name, Type) EXPECT_EQ(automatic_path<models::Type>(), GpuPath::kFused);
TEST(LaunchPolicy, EveryCatalogueModelRunsOnTheFusedKernel){UKES_CATALOGUE(UKES_EXPECT_FUSED)}
#undef UKES_EXPECT_FUSED

TEST(LaunchPolicy, TheFusedKernelTakesWhatTheLargestUserBucketHolds) {
  EXPECT_EQ(kFusedMaxDimension, kMaxGpuUserBucket);
  EXPECT_EQ(choose_gpu_path(GpuPath::kAuto, 16, 16), GpuPath::kFused);
  EXPECT_EQ(choose_gpu_path(GpuPath::kAuto, 17, 4), GpuPath::kCusolver);
  EXPECT_EQ(choose_gpu_path(GpuPath::kAuto, 4, 17), GpuPath::kCusolver);
  EXPECT_EQ(choose_gpu_path(GpuPath::kAuto, 32, 32), GpuPath::kCusolver);
}

// The GPU module interprets user models in fewer buckets than the CPU: each model runs in the
// smallest of them that holds it, and models past the largest have no GPU code.
TEST(LaunchPolicy, AUserModelRunsInTheSmallestGpuBucketThatHoldsIt) {
  for (int n = 1; n <= kUserModelCapacity; ++n) {
    const int bucket = user_bucket_for(n, n);
    const int gpu = gpu_user_bucket_for(bucket);
    if (bucket > kMaxGpuUserBucket) {
      EXPECT_EQ(gpu, 0) << "n = " << n;
      continue;
    }
    EXPECT_GE(gpu, bucket) << "n = " << n;
    EXPECT_EQ(user_bucket_for(gpu, gpu), gpu) << "n = " << n;  // a bucket of the CPU's too
    bool held = false;  // the module holds that bucket, and none between
    for_each_model(GpuUserBuckets{}, [&]<class M>() {
      held = held || M::kN == gpu;
      EXPECT_FALSE(M::kN >= bucket && M::kN < gpu) << "n = " << n << ": bucket " << M::kN;
    });
    EXPECT_TRUE(held) << "n = " << n;
  }
  EXPECT_EQ(gpu_user_bucket_for(0), 0);  // a built-in model has none
  EXPECT_EQ(gpu_user_bucket_for(4), 4);
  EXPECT_EQ(gpu_user_bucket_for(8), 16);
  EXPECT_EQ(gpu_user_bucket_for(12), 16);
  EXPECT_EQ(gpu_user_bucket_for(32), 0);
}

TEST(LaunchPolicy, TheWarpPathRunsOnlyWhenAskedFor) {
  for (int n = 1; n <= 32; ++n)
    EXPECT_NE(choose_gpu_path(GpuPath::kAuto, n, n), GpuPath::kWarp) << "n = " << n;
  EXPECT_EQ(choose_gpu_path(GpuPath::kWarp, 2, 1), GpuPath::kWarp);
}

TEST(LaunchPolicy, AnExplicitPathIsKept) {
  EXPECT_EQ(choose_gpu_path(GpuPath::kCusolver, 2, 1), GpuPath::kCusolver);
  EXPECT_EQ(choose_gpu_path(GpuPath::kFused, 20, 10), GpuPath::kFused);
}

TEST(ChunkPlan, WholeBatchWhenItFits) {
  EXPECT_EQ(plan_chunk_systems(1000, 100, 1 << 20, 256), 1000);
  EXPECT_EQ(plan_chunk_systems(0, 100, 1 << 20, 256), 0);
}

TEST(ChunkPlan, ChunksAreWholeGranulesThatFitTheBudget) {
  const int chunk = plan_chunk_systems(1'000'000, 1000, 10'000'000, 4096);
  EXPECT_EQ(chunk % 4096, 0);
  EXPECT_LE(static_cast<std::size_t>(chunk) * 1000, 10'000'000u);
  EXPECT_GT(static_cast<std::size_t>(chunk + 4096) * 1000, 10'000'000u);
}

TEST(ChunkPlan, AtLeastOneGranuleEvenWhenTheBudgetIsTiny) {
  EXPECT_EQ(plan_chunk_systems(100'000, 1000, 10, 4096), 4096);
  EXPECT_EQ(plan_chunk_systems(100, 1000, 10, 4096), 100);
}

// A run of 10^6 systems of 1000 B each side, 10 kB per recorded trajectory.
ChunkMemory million_systems() {
  ChunkMemory m;
  m.total = 1'000'000;
  m.host_per_system = 1000;
  m.device_per_system = 3000;
  m.per_trajectory = 10'000;
  m.device_budget = std::size_t{8} << 30;
  m.pinned_budget = std::size_t{64} << 20;
  return m;
}

TEST(ChunkPlan, ThePinnedMirrorsStayWithinThePinnedBudget) {
  const ChunkMemory m = million_systems();
  const ChunkPlan plan = plan_chunks(m, m.total, 4096);
  EXPECT_EQ(plan.chunk % 4096, 0);
  EXPECT_LE(static_cast<std::size_t>(plan.chunk) * m.host_per_system, m.pinned_budget);
  EXPECT_GT(static_cast<std::size_t>(plan.chunk + 4096) * m.host_per_system, m.pinned_budget);
  EXPECT_EQ(plan.trajectory_capacity, 0);  // nothing recorded
}

TEST(ChunkPlan, TheDeviceBudgetBindsWhenItIsTheSmaller) {
  ChunkMemory m = million_systems();
  m.device_budget = std::size_t{24} << 20;
  const ChunkPlan plan = plan_chunks(m, m.total, 4096);
  EXPECT_LE(static_cast<std::size_t>(plan.chunk) * m.device_per_system, m.device_budget);
  EXPECT_GT(static_cast<std::size_t>(plan.chunk + 4096) * m.device_per_system, m.device_budget);
}

TEST(ChunkPlan, RecordedTrajectoriesAreHeldWholeOnlyWithinHalfOfEachBudget) {
  ChunkMemory m = million_systems();
  m.trajectory_slots = 4000;  // 40 MB: within half the device budget, not within half the pinned
  ChunkPlan plan = plan_chunks(m, m.total, 4096);
  EXPECT_EQ(plan.trajectory_capacity, plan.chunk);  // a slot per chunk system
  EXPECT_LE(static_cast<std::size_t>(plan.chunk) * (m.host_per_system + m.per_trajectory),
            m.pinned_budget);
  m.trajectory_slots = 300;  // 3 MB fit whole
  plan = plan_chunks(m, m.total, 4096);
  EXPECT_EQ(plan.trajectory_capacity, 300);
  EXPECT_LE(static_cast<std::size_t>(plan.chunk) * m.host_per_system + 300 * m.per_trajectory,
            m.pinned_budget);
}

TEST(ChunkPlan, NoMoreThanWantedNorThanTheBatch) {
  ChunkMemory m = million_systems();
  EXPECT_EQ(plan_chunks(m, 8192, 4096).chunk, 8192);
  m.total = 100;
  const ChunkPlan plan = plan_chunks(m, 8192, 4096);
  EXPECT_EQ(plan.chunk, 100);
  m.trajectory_slots = 100;
  EXPECT_EQ(plan_chunks(m, 8192, 4096).trajectory_capacity, 100);
}

}  // namespace
}  // namespace ukes
