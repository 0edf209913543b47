// The CUDA backend's layout decisions, which are plain host code: which path a model takes and how
// many systems go to the device at once.
#include "kernels/backend/gpu/launch_policy.hpp"

#include <gtest/gtest.h>

#include "kernels/models/catalogue.hpp"

namespace ukes {
namespace {

template <class Model>
GpuPath automatic_path(Precision p) {
  return choose_gpu_path(GpuPath::kAuto, Model::kN, kRows<Model>, p);
}

TEST(LaunchPolicy, SmallSystemsRunOnAThreadLargerOnesOnAWarpInFp64) {
  EXPECT_EQ(automatic_path<models::Duffing>(Precision::kFp64), GpuPath::kFused);
  EXPECT_EQ(automatic_path<models::Scara>(Precision::kFp64), GpuPath::kFused);
  EXPECT_EQ(automatic_path<models::FourBar>(Precision::kFp64), GpuPath::kWarp);  // n = 9
  EXPECT_EQ(automatic_path<models::Swarm>(Precision::kFp64), GpuPath::kWarp);    // n = 10
  EXPECT_EQ(choose_gpu_path(GpuPath::kAuto, 8, 8, Precision::kFp64), GpuPath::kFused);
  EXPECT_EQ(choose_gpu_path(GpuPath::kAuto, 9, 8, Precision::kFp64), GpuPath::kWarp);
}

TEST(LaunchPolicy, TheLargestSystemsGoToCusolver) {
  for (Precision p : {Precision::kFp64, Precision::kFp32}) {
    EXPECT_EQ(choose_gpu_path(GpuPath::kAuto, 16, 16, p), GpuPath::kWarp);
    EXPECT_EQ(choose_gpu_path(GpuPath::kAuto, 17, 4, p), GpuPath::kCusolver);
    EXPECT_EQ(choose_gpu_path(GpuPath::kAuto, 32, 32, p), GpuPath::kCusolver);
  }
}

TEST(LaunchPolicy, Fp32HalvesTheRegistersSoLargerSystemsStayOnAThread) {
  EXPECT_EQ(automatic_path<models::FourBar>(Precision::kFp32), GpuPath::kFused);
  EXPECT_EQ(automatic_path<models::Swarm>(Precision::kFp32), GpuPath::kFused);
  EXPECT_EQ(choose_gpu_path(GpuPath::kAuto, 12, 12, Precision::kFp32), GpuPath::kWarp);
}

TEST(LaunchPolicy, AnExplicitPathIsKept) {
  EXPECT_EQ(choose_gpu_path(GpuPath::kCusolver, 2, 1, Precision::kFp64), GpuPath::kCusolver);
  EXPECT_EQ(choose_gpu_path(GpuPath::kFused, 10, 10, Precision::kFp64), GpuPath::kFused);
  EXPECT_EQ(choose_gpu_path(GpuPath::kWarp, 2, 1, Precision::kFp32), GpuPath::kWarp);
}

// Thread, then warp, then cuSOLVER as n = m grows, never back.
TEST(LaunchPolicy, TheSwitchIsMonotoneInSize) {
  auto order = [](GpuPath p) { return p == GpuPath::kFused ? 0 : p == GpuPath::kWarp ? 1 : 2; };
  for (Precision p : {Precision::kFp64, Precision::kFp32}) {
    int last = 0;
    for (int n = 1; n <= 32; ++n) {
      const int now = order(choose_gpu_path(GpuPath::kAuto, n, n, p));
      EXPECT_GE(now, last) << "n = " << n;
      last = now;
    }
    EXPECT_EQ(last, 2);
  }
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

}  // namespace
}  // namespace ukes
