// What the lanes' tests compare runs with (lanes_test.cpp, cpu_jit_test.cpp): a Monte Carlo batch
// of a model's defaults, and two runs' results held to each other within a relative bound.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "kernels/ensemble/ensemble.hpp"

namespace ukes {

// System i of a Monte Carlo batch: the model's defaults with its velocities scaled by 1 + eps_i and
// shifted by eps_i, eps_i = 1e-3 frac(0.618... i), as benchmarks/compare.py perturbs them.
inline Batch perturbed_batch(const ModelInfo& model, int first, int count) {
  Batch batch = Batch::defaults(model, count);
  for (int i = 0; i < count; ++i) {
    const double golden = 0.6180339887498949 * (first + i);
    const double eps = 1e-3 * (golden - std::floor(golden));
    for (int j = 0; j < model.n; ++j) batch.qd(j, i) = batch.qd(j, i) * (1.0 + eps) + eps;
  }
  return batch;
}

// Largest |a - b| / (1 + |b|) over two result vectors.
inline double relative_gap(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double gap = 0.0;
  for (std::size_t k = 0; k < std::min(a.size(), b.size()); ++k) {
    if (std::isnan(a[k]) && std::isnan(b[k])) continue;
    gap = std::max(gap, std::abs(a[k] - b[k]) / (1.0 + std::abs(b[k])));
  }
  return gap;
}

// Same statuses and step counts, and every number within `bound` of the reference's.
inline void expect_agreement(const BatchResults& got, const BatchResults& reference, double bound,
                             const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(got.status, reference.status);
  EXPECT_EQ(got.steps, reference.steps);
  EXPECT_EQ(got.rejected, reference.rejected);
  EXPECT_LE(relative_gap(got.t, reference.t), bound);
  EXPECT_LE(relative_gap(got.q, reference.q), bound);
  EXPECT_LE(relative_gap(got.qd, reference.qd), bound);
  EXPECT_LE(relative_gap(got.residual_max, reference.residual_max), bound);
  EXPECT_LE(relative_gap(got.force_max, reference.force_max), bound);
  EXPECT_LE(relative_gap(got.inconsistency_max, reference.inconsistency_max), bound);
  EXPECT_LE(relative_gap(got.traj_q, reference.traj_q), bound);
  EXPECT_LE(relative_gap(got.traj_qd, reference.traj_qd), bound);
  EXPECT_LE(relative_gap(got.traj_residual, reference.traj_residual), bound);
  EXPECT_LE(relative_gap(got.traj_force, reference.traj_force), bound);
}

}  // namespace ukes
