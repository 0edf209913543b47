// Results of the CPU ensemble engine are bit-identical whatever the thread count: every output
// buffer (final state, statistics, step counts, trajectories) for threads = 1, 2, 3, 8, on a
// batch of a few hundred perturbed duffing systems in fp64 and fp32, and on smaller perturbed
// batches of every other catalogue model.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/ensemble/ensemble.hpp"

namespace ukes {
namespace {

template <class V>
bool same_bits(const V& a, const V& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(a[0])) == 0);
}

// Compares every buffer byte for byte (NaN-safe, -0.0 distinct from 0.0).
void expect_identical(const BatchResults& a, const BatchResults& b, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_TRUE(same_bits(a.status, b.status)) << "status";
  EXPECT_TRUE(same_bits(a.t, b.t)) << "t";
  EXPECT_TRUE(same_bits(a.q, b.q)) << "q";
  EXPECT_TRUE(same_bits(a.qd, b.qd)) << "qd";
  EXPECT_TRUE(same_bits(a.residual_max, b.residual_max)) << "residual_max";
  EXPECT_TRUE(same_bits(a.force_max, b.force_max)) << "force_max";
  EXPECT_TRUE(same_bits(a.inconsistency_max, b.inconsistency_max)) << "inconsistency_max";
  EXPECT_TRUE(same_bits(a.steps, b.steps)) << "steps";
  EXPECT_TRUE(same_bits(a.rejected, b.rejected)) << "rejected";
  EXPECT_TRUE(same_bits(a.traj_slot, b.traj_slot)) << "traj_slot";
  EXPECT_TRUE(same_bits(a.traj_q, b.traj_q)) << "traj_q";
  EXPECT_TRUE(same_bits(a.traj_qd, b.traj_qd)) << "traj_qd";
  EXPECT_TRUE(same_bits(a.traj_residual, b.traj_residual)) << "traj_residual";
  EXPECT_TRUE(same_bits(a.traj_force, b.traj_force)) << "traj_force";
}

// Duffing with every dynamical parameter and the initial condition perturbed; the initial
// condition stays on the rheonomic constraint (x1 - x2 = 0, x1d - x2d = A0 omega at t = 0).
Batch perturbed_duffing(const ModelInfo& m, int count, std::uint64_t seed) {
  Batch b = Batch::defaults(m, count);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const int A0 = m.param_index("A0"), omega = m.param_index("omega");
  for (int i = 0; i < count; ++i) {
    for (std::size_t k = 0; k < m.params.size(); ++k)
      b.param(int(k), i) = m.params[k].value * (1.0 + 0.2 * u(rng));
    const double dx = 0.3 * u(rng), dv = 0.5 * u(rng);
    b.q(0, i) = 1.0 + dx;
    b.q(1, i) = 1.0 + dx;
    b.qd(1, i) = 2.0 + dv;
    b.qd(0, i) = b.qd(1, i) + b.param(A0, i) * b.param(omega, i);
  }
  return b;
}

std::vector<std::int32_t> every_third(int count) {
  std::vector<std::int32_t> ids;
  for (int i = count - 1; i >= 0; i -= 3) ids.push_back(i);  // unordered on purpose
  return ids;
}

TEST(Determinism, DuffingBitIdenticalAcrossThreadCounts) {
  const ModelInfo* m = find_model("duffing");
  ASSERT_NE(m, nullptr);
  constexpr int kCount = 300;
  const Batch batch = perturbed_duffing(*m, kCount, 2024);
  const auto ids = every_third(kCount);
  for (Precision precision : {Precision::kFp64, Precision::kFp32}) {
    EnsembleSettings s = EnsembleSettings::for_model(*m);
    s.precision = precision;
    s.rtol = s.atol = precision == Precision::kFp64 ? 1e-9 : 1e-5;
    s.samples = 21;
    s.threads = 1;
    BatchResults ref;
    run_ensemble_cpu(batch, s, ref, ids);
    int ok = 0;
    for (int i = 0; i < kCount; ++i) ok += ref.status[i] == 0;
    EXPECT_EQ(ok, kCount) << "the perturbed systems are all healthy";
    for (int threads : {2, 3, 8}) {
      s.threads = threads;
      BatchResults r;
      run_ensemble_cpu(batch, s, r, ids);
      expect_identical(ref, r,
                       std::string(precision == Precision::kFp64 ? "fp64" : "fp32") + " threads " +
                           std::to_string(threads));
    }
  }
}

// The same for every catalogue model: default parameters, initial conditions perturbed by
// 1e-3 relative (off the constraint set for constrained models, which is fine: determinism does
// not care about the status), the first simulated second (or t_end if shorter).
TEST(Determinism, EveryModelBitIdenticalAcrossThreadCounts) {
  constexpr int kCount = 40;
  for (const ModelInfo& m : catalogue_info()) {
    Batch batch = Batch::defaults(m, kCount);
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (int i = 1; i < kCount; ++i) {
      for (int j = 0; j < m.n; ++j) {
        batch.q(j, i) += 1e-3 * (1 + std::abs(m.q0[j])) * u(rng);
        batch.qd(j, i) += 1e-3 * (1 + std::abs(m.qd0[j])) * u(rng);
      }
    }
    EnsembleSettings s = EnsembleSettings::for_model(m);
    s.t_end = std::min(m.t_end, 1.0);
    s.samples = 11;
    s.threads = 1;
    BatchResults ref;
    run_ensemble_cpu(batch, s, ref, every_third(kCount));
    for (int threads : {2, 3, 8}) {
      s.threads = threads;
      BatchResults r;
      run_ensemble_cpu(batch, s, r, every_third(kCount));
      expect_identical(ref, r, m.name + " threads " + std::to_string(threads));
    }
  }
}

// A system's result does not depend on its batch: system i alone equals system i in the batch.
TEST(Determinism, SystemIndependentOfBatchComposition) {
  const ModelInfo* m = find_model("duffing");
  ASSERT_NE(m, nullptr);
  const Batch batch = perturbed_duffing(*m, 50, 99);
  EnsembleSettings s = EnsembleSettings::for_model(*m);
  s.samples = 6;
  s.threads = 3;
  BatchResults all;
  run_ensemble_cpu(batch, s, all, {17});
  Batch one = Batch::defaults(*m, 1);
  for (std::size_t k = 0; k < m->params.size(); ++k)
    one.param(int(k), 0) = batch.params[k * 50 + 17];
  for (int j = 0; j < m->n; ++j) {
    one.q(j, 0) = batch.q0[std::size_t(j) * 50 + 17];
    one.qd(j, 0) = batch.qd0[std::size_t(j) * 50 + 17];
  }
  BatchResults single;
  run_ensemble_cpu(one, s, single, {0});
  EXPECT_EQ(all.status[17], single.status[0]);
  EXPECT_EQ(all.t[17], single.t[0]);
  for (int j = 0; j < m->n; ++j) EXPECT_EQ(all.q_at(j, 17), single.q_at(j, 0));
  EXPECT_EQ(all.steps[17], single.steps[0]);
  EXPECT_EQ(all.force_max[17], single.force_max[0]);
  EXPECT_TRUE(same_bits(all.traj_q, single.traj_q));
  EXPECT_TRUE(same_bits(all.traj_force, single.traj_force));
}

}  // namespace
}  // namespace ukes
