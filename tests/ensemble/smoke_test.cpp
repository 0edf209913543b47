#include <gtest/gtest.h>

#include "kernels/ensemble/ensemble.hpp"

namespace ukes {
namespace {

TEST(EnsembleSmoke, DuffingRunsToEnd) {
  const ModelInfo* m = find_model("duffing");
  ASSERT_NE(m, nullptr);
  Batch b = Batch::defaults(*m, 4);
  EnsembleSettings s = EnsembleSettings::for_model(*m);
  s.rtol = s.atol = 1e-12;
  s.samples = 11;
  BatchResults r;
  run_ensemble_cpu(b, s, r, {0});
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(r.status[i], 0);
    EXPECT_DOUBLE_EQ(r.t[i], 5.0);
    EXPECT_LT(r.residual_at(0, i), 1e-9);
  }
}

}  // namespace
}  // namespace ukes
