// Asserts that two runs of the same systems gave the same results to the bit: statuses, final
// states, residual maxima, steps and recorded trajectories. For runs that must not differ at all
// (chunking, slicing, a reused device context), never for runs on different backends.
#pragma once

#include <gtest/gtest.h>

#include "kernels/ensemble/ensemble.hpp"

namespace ukes::testing {

inline void expect_identical(const BatchResults& a, const BatchResults& b) {
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.q, b.q);
  EXPECT_EQ(a.qd, b.qd);
  EXPECT_EQ(a.residual_max, b.residual_max);
  EXPECT_EQ(a.steps, b.steps);
  EXPECT_EQ(a.traj_ids, b.traj_ids);
  EXPECT_EQ(a.traj_q, b.traj_q);
  EXPECT_EQ(a.traj_residual, b.traj_residual);
}

}  // namespace ukes::testing
