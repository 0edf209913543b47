// Systems that fail on the staged path fail as on the fused path, and leave the other systems of
// their batch untouched.
#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

#include "kernels/models/catalogue.hpp"
#include "staged/staged_support.hpp"

namespace ukes {
namespace {

using namespace ukes::testing;

// SCARA arms whose helix centre is moved out of reach (yc = 0.6 > l1 + l2 = 0.45): the Baumgarte
// terms pull the tool towards a point the arm cannot reach and the constraint Jacobian loses rank
// (sin q2 -> 0; see tests/models/scara_test.cpp).
Batch scara_batch_with_unreachable(const ModelInfo& m, const std::vector<int>& unreachable) {
  Batch b = perturbed_batch(m, 6);
  const int yc = m.param_index("yc");
  EXPECT_GE(yc, 0);
  for (int i : unreachable) b.param(yc, i) = 0.6;
  return b;
}

// DOPRI5 reports the rank loss itself (`inconsistent`); fixed-step RK4 cannot shrink its step
// towards the singularity and blows up within a step (`nonfinite`). Either way both paths must
// report the same.
template <class T>
void check_failures(Method method) {
  const Status failed = method == Method::kDopri5 ? Status::kInconsistent : Status::kNonfinite;
  const ModelInfo* info = find_model("scara");
  ASSERT_NE(info, nullptr);
  EnsembleSettings e = EnsembleSettings::for_model(*info);
  e.method = method;
  e.precision = sizeof(T) == 8 ? Precision::kFp64 : Precision::kFp32;
  e.t_end = 2.0;
  e.samples = 21;
  if (method == Method::kRk4) e.dt = 1e-3;
  if (sizeof(T) == 4) e.rtol = e.atol = 1e-5;
  const std::vector<int> unreachable = {1, 4};
  const Batch mixed = scara_batch_with_unreachable(*info, unreachable);
  const std::vector<std::int32_t> recorded = {0, 1, 4};
  const PathRuns runs = run_both_paths<models::Scara, T>(mixed, e, recorded);
  for (int i = 0; i < mixed.count; ++i) {
    const bool fails = i == 1 || i == 4;
    std::printf("scara system %d: fused %s at t = %.6g, staged %s at t = %.6g\n", i,
                status_name(static_cast<Status>(runs.fused.status[i])), runs.fused.t[i],
                status_name(static_cast<Status>(runs.staged.status[i])), runs.staged.t[i]);
    const int expected = static_cast<int>(fails ? failed : Status::kOk);
    EXPECT_EQ(runs.fused.status[i], expected) << i;
    EXPECT_EQ(runs.staged.status[i], expected) << i;
    if (fails) {
      // Both stop where the rows become unreachable (the same instant up to rounding).
      EXPECT_LT(runs.staged.t[i], e.t_end);
      EXPECT_NEAR(runs.staged.t[i], runs.fused.t[i], 1e-6 * e.t_end) << i;
    }
  }
  // Samples a failed system never reached are NaN on both paths.
  for (int slot = 1; slot < 3; ++slot) {
    for (int k = 0; k < e.samples; ++k) {
      EXPECT_EQ(std::isnan(runs.fused.traj_q_at(slot, k, 0)),
                std::isnan(runs.staged.traj_q_at(slot, k, 0)))
          << "slot " << slot << " sample " << k;
    }
    EXPECT_TRUE(std::isnan(runs.staged.traj_q_at(slot, e.samples - 1, 0)));
  }

  // The others are untouched by their failing neighbours: bit-identical to a batch without them.
  Batch reachable = perturbed_batch(*info, 6);
  BatchResults alone;
  alone.allocate(reachable, e.samples, recorded);
  run_staged_cpu<models::Scara, T>(reachable.view(), to_run_settings<T>(e), alone.view());
  for (int i : {0, 2, 3, 5}) {
    EXPECT_EQ(alone.status[i], runs.staged.status[i]) << i;
    EXPECT_EQ(alone.t[i], runs.staged.t[i]) << i;
    EXPECT_EQ(alone.steps[i], runs.staged.steps[i]) << i;
    EXPECT_EQ(alone.force_max[i], runs.staged.force_max[i]) << i;
    for (int j = 0; j < alone.n; ++j) {
      EXPECT_EQ(alone.q_at(j, i), runs.staged.q_at(j, i)) << i;
      EXPECT_EQ(alone.qd_at(j, i), runs.staged.qd_at(j, i)) << i;
    }
  }
  for (int k = 0; k < e.samples; ++k)
    for (int j = 0; j < alone.n; ++j)
      EXPECT_EQ(alone.traj_q_at(0, k, j), runs.staged.traj_q_at(0, k, j));
}

TEST(StagedCpuFailures, UnreachableScaraRk4Fp64) { check_failures<double>(Method::kRk4); }
TEST(StagedCpuFailures, UnreachableScaraDopri5Fp64) { check_failures<double>(Method::kDopri5); }
TEST(StagedCpuFailures, UnreachableScaraDopri5Fp32) { check_failures<float>(Method::kDopri5); }

}  // namespace
}  // namespace ukes
