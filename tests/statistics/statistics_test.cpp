// summarize() against hand-worked order statistics and moments (numpy's default "linear"
// percentile: virtual index h = (n - 1) p between the sorted values), and ensemble_statistics()
// on a hand-built BatchResults, on one thread and on several.
#include "kernels/ensemble/statistics.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

namespace ukes {
namespace {

void expect_summary(const Summary& s, std::int64_t count, double min, double max, double mean,
                    double std, double p50, double p95, double p99) {
  const double tol = 1e-14;  // relative: a few roundings of the hand-worked expressions
  EXPECT_EQ(s.count, count);
  EXPECT_EQ(s.min, min);
  EXPECT_EQ(s.max, max);
  EXPECT_NEAR(s.mean, mean, tol * std::abs(mean));
  EXPECT_NEAR(s.std, std, tol * std::abs(std));
  EXPECT_NEAR(s.p50, p50, tol * std::abs(p50));
  EXPECT_NEAR(s.p95, p95, tol * std::abs(p95));
  EXPECT_NEAR(s.p99, p99, tol * std::abs(p99));
}

void expect_all_nan(const Summary& s) {
  EXPECT_EQ(s.count, 0);
  for (double v : {s.min, s.max, s.mean, s.std, s.p50, s.p95, s.p99}) EXPECT_TRUE(std::isnan(v));
}

TEST(Summarize, FourValues) {
  // h50 = 1.5 -> 2.5; h95 = 2.85 -> 3 + 0.85; h99 = 2.97 -> 3 + 0.97; var = (2.25 + 0.25) * 2 / 4.
  expect_summary(summarize({1, 2, 3, 4}), 4, 1, 4, 2.5, std::sqrt(1.25), 2.5, 3.85, 3.97);
}

TEST(Summarize, UnsortedWithDuplicates) {
  // Sorted: 1 1 2 3 3 4 5 5 6 9; mean 39 / 10; squared deviations sum to 54.9.
  // h50 = 4.5 -> (3 + 4) / 2; h95 = 8.55 -> 6 + 0.55 * 3; h99 = 8.91 -> 6 + 0.91 * 3.
  expect_summary(summarize({5, 1, 4, 1, 3, 9, 2, 6, 5, 3}), 10, 1, 9, 3.9, std::sqrt(5.49), 3.5,
                 7.65, 8.73);
}

TEST(Summarize, NegativeValues) {
  // Sorted: -7.25 -2.5 -1 0.5 3 10; sum 2.75; sum of squares 169.0625.
  // h50 = 2.5 -> -1 + 0.5 * 1.5; h95 = 4.75 -> 3 + 0.75 * 7; h99 = 4.95 -> 3 + 0.95 * 7.
  const double mean = 2.75 / 6;
  expect_summary(summarize({-2.5, 0.5, -7.25, 3.0, 10.0, -1.0}), 6, -7.25, 10, mean,
                 std::sqrt(169.0625 / 6 - mean * mean), -0.25, 8.25, 9.65);
}

TEST(Summarize, ZeroToHundredHitsOrderStatisticsExactly) {
  std::vector<double> v;
  for (int k = 100; k >= 0; --k) v.push_back(k);
  // Population variance of 0..100: (101^2 - 1) / 12 = 850.
  expect_summary(summarize(v), 101, 0, 100, 50, std::sqrt(850.0), 50, 95, 99);
}

TEST(Summarize, SingleValue) {
  expect_summary(summarize({7.5}), 1, 7.5, 7.5, 7.5, 0, 7.5, 7.5, 7.5);
}

TEST(Summarize, NonFiniteValuesAreSkipped) {
  // What remains is 1 2 3: h95 = 1.9 -> 2.9, h99 = 1.98 -> 2.98, var 2/3.
  expect_summary(summarize({NAN, 1, INFINITY, 2, NAN, 3, -INFINITY}), 3, 1, 3, 2,
                 std::sqrt(2.0 / 3.0), 2, 2.9, 2.98);
}

TEST(Summarize, NothingFiniteGivesNaN) {
  expect_all_nan(summarize({}));
  expect_all_nan(summarize({NAN, NAN, INFINITY}));
}

TEST(Summarize, LargeOffsetDoesNotCancel) {
  // Two-pass variance: 1e9 + {0, 1, 2, 3} has the spread of {0, 1, 2, 3}.
  expect_summary(summarize({1e9 + 3, 1e9, 1e9 + 1, 1e9 + 2}), 4, 1e9, 1e9 + 3, 1e9 + 1.5,
                 std::sqrt(1.25), 1e9 + 1.5, 1e9 + 2.85, 1e9 + 2.97);
}

// Five systems of a model with n = 2 and 3 residual slots; systems 1 and 3 failed and carry
// values that would spoil every summary if they were counted.
BatchResults hand_built() {
  BatchResults r;
  r.count = 5;
  r.n = 2;
  r.residual_slots = 3;
  r.samples = 2;
  r.status = {static_cast<int>(Status::kOk), static_cast<int>(Status::kMaxSteps),
              static_cast<int>(Status::kOk), static_cast<int>(Status::kNonfinite),
              static_cast<int>(Status::kOk)};
  // [coordinate][system]
  r.q = {1,  1e6,  3, NAN, 5,      // q0
         -2, -1e6, 0, NAN, 8};     // q1
  r.qd = {0.5, 99, 0.5, NAN, 0.5,  // qd0: constant over ok systems
          10,  99, 20,  NAN, 60};
  r.residual_max = {1e-12, 1.0, 3e-12, NAN, 2e-12,   // slot 0
                    0,     1.0, 0,     NAN, 0,       // slot 1
                    4e-10, 1.0, 1e-10, NAN, 7e-10};  // slot 2
  r.force_max = {2.0, 1e9, 4.0, NAN, 9.0};
  r.control_effort_max = {6.0, 1e9, 0.0, NAN, 3.0};
  r.inconsistency_max = {0, 0, 0, 0, 0};
  r.t = {5, 1, 5, 2, 5};
  r.steps = {100, 1000000, 300, 7, 200};
  r.rejected = {0, 0, 0, 0, 0};
  return r;
}

void expect_hand_built_statistics(const EnsembleStatistics& e);

// On any number of threads: every column's summary in its own place, as on one.
TEST(EnsembleStatistics, CountsStatusesAndSummarizesOnlyOkSystems) {
  for (const int threads : {1, 2, 3, 7, 64}) {
    SCOPED_TRACE(threads);
    expect_hand_built_statistics(ensemble_statistics(hand_built(), threads));
  }
}

void expect_hand_built_statistics(const EnsembleStatistics& e) {
  EXPECT_EQ(e.count, 5);
  EXPECT_EQ(e.ok, 3);
  EXPECT_EQ(e.failed, 2);
  EXPECT_EQ(e.by_status[static_cast<int>(Status::kOk)], 3);
  EXPECT_EQ(e.by_status[static_cast<int>(Status::kMaxSteps)], 1);
  EXPECT_EQ(e.by_status[static_cast<int>(Status::kNonfinite)], 1);
  EXPECT_EQ(e.by_status[static_cast<int>(Status::kStepUnderflow)], 0);
  EXPECT_EQ(e.by_status[static_cast<int>(Status::kInconsistent)], 0);
  EXPECT_EQ(e.by_status[static_cast<int>(Status::kSingularMass)], 0);

  ASSERT_EQ(e.q.size(), 2u);
  ASSERT_EQ(e.qd.size(), 2u);
  ASSERT_EQ(e.residual.size(), 3u);
  // q0 over {1, 3, 5}: mean 3, var 8/3; h50 = 1 -> 3; h95 = 1.9 -> 3 + 0.9 * 2; h99 = 1.98.
  expect_summary(e.q[0], 3, 1, 5, 3, std::sqrt(8.0 / 3), 3, 4.8, 4.96);
  // q1 over {-2, 0, 8}: mean 2, squared deviations 16 + 4 + 36; h95 -> 0 + 0.9 * 8.
  expect_summary(e.q[1], 3, -2, 8, 2, std::sqrt(56.0 / 3), 0, 7.2, 7.84);
  expect_summary(e.qd[0], 3, 0.5, 0.5, 0.5, 0, 0.5, 0.5, 0.5);
  // qd1 over {10, 20, 60}: mean 30, squared deviations 400 + 100 + 900.
  expect_summary(e.qd[1], 3, 10, 60, 30, std::sqrt(1400.0 / 3), 20, 56, 59.2);
  // Residual slot 0 over {1e-12, 3e-12, 2e-12}; slot 2 over {4e-10, 1e-10, 7e-10}.
  expect_summary(e.residual[0], 3, 1e-12, 3e-12, 2e-12, std::sqrt(2.0 / 3) * 1e-12, 2e-12, 2.9e-12,
                 2.98e-12);
  expect_summary(e.residual[1], 3, 0, 0, 0, 0, 0, 0, 0);
  expect_summary(e.residual[2], 3, 1e-10, 7e-10, 4e-10, std::sqrt(6.0) * 1e-10, 4e-10, 6.7e-10,
                 6.94e-10);
  // force_max over {2, 4, 9}: mean 5, squared deviations 9 + 1 + 16.
  expect_summary(e.force_max, 3, 2, 9, 5, std::sqrt(26.0 / 3), 4, 8.5, 8.9);
  // control_effort_max over {6, 0, 3}: mean 3, squared deviations 9 + 9 + 0; h95 -> 3 + 0.9 * 3.
  expect_summary(e.control_effort_max, 3, 0, 6, 3, std::sqrt(6.0), 3, 5.7, 5.94);
  // steps over {100, 300, 200}: mean 200, var 20000/3.
  expect_summary(e.steps, 3, 100, 300, 200, std::sqrt(20000.0 / 3), 200, 290, 298);
}

TEST(EnsembleStatistics, UnknownStatusCountsAsFailedOnly) {
  BatchResults r = hand_built();
  r.status[2] = 17;
  const EnsembleStatistics e = ensemble_statistics(r);
  EXPECT_EQ(e.ok, 2);
  EXPECT_EQ(e.failed, 3);
  std::int64_t total = 0;
  for (std::int64_t c : e.by_status) total += c;
  EXPECT_EQ(total, 4);
  expect_summary(e.q[0], 2, 1, 5, 3, 2, 3, 4.8, 4.96);
}

TEST(EnsembleStatistics, NoOkSystemGivesNaNSummaries) {
  BatchResults r = hand_built();
  for (auto& s : r.status) s = static_cast<int>(Status::kStepUnderflow);
  const EnsembleStatistics e = ensemble_statistics(r);
  EXPECT_EQ(e.ok, 0);
  EXPECT_EQ(e.failed, 5);
  EXPECT_EQ(e.by_status[static_cast<int>(Status::kStepUnderflow)], 5);
  ASSERT_EQ(e.q.size(), 2u);
  expect_all_nan(e.q[0]);
  expect_all_nan(e.residual[2]);
  expect_all_nan(e.force_max);
  expect_all_nan(e.control_effort_max);
  expect_all_nan(e.steps);

  const EnsembleStatistics empty = ensemble_statistics(BatchResults{}, 4);
  EXPECT_EQ(empty.count, 0);
  EXPECT_EQ(empty.ok, 0);
  EXPECT_TRUE(empty.q.empty());
  expect_all_nan(empty.force_max);
}

// The summaries of many systems are the same bits on one thread and on several.
TEST(EnsembleStatistics, ThreadsChangeNoBit) {
  BatchResults r;
  r.count = 20000;
  r.n = 3;
  r.residual_slots = 4;
  const auto count = static_cast<std::size_t>(r.count);
  std::uint64_t state = 12345;
  const auto next = [&state] {  // a 64-bit LCG: values with every mantissa bit in use
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(state >> 11) * 0x1.0p-53 - 0.25;
  };
  for (auto* field : {&r.q, &r.qd}) field->resize(count * 3);
  r.residual_max.resize(count * 4);
  for (auto* field : {&r.force_max, &r.control_effort_max}) field->resize(count);
  for (auto* field : {&r.q, &r.qd, &r.residual_max, &r.force_max, &r.control_effort_max})
    for (double& v : *field) v = next();
  r.steps.resize(count);
  r.status.resize(count);
  for (std::size_t i = 0; i < count; ++i) {
    r.steps[i] = static_cast<std::decay_t<decltype(r.steps[i])>>(i % 977);
    r.status[i] = static_cast<int>(i % 11 == 0 ? Status::kNonfinite : Status::kOk);
  }
  const EnsembleStatistics one = ensemble_statistics(r, 1);
  const EnsembleStatistics four = ensemble_statistics(r, 4);
  const auto same = [](const Summary& a, const Summary& b) {
    return std::memcmp(&a, &b, sizeof(Summary)) == 0;
  };
  EXPECT_EQ(one.ok, four.ok);
  for (std::size_t j = 0; j < 3; ++j) {
    EXPECT_TRUE(same(one.q[j], four.q[j])) << j;
    EXPECT_TRUE(same(one.qd[j], four.qd[j])) << j;
  }
  for (std::size_t slot = 0; slot < 4; ++slot)
    EXPECT_TRUE(same(one.residual[slot], four.residual[slot])) << slot;
#define UKES_EXPECT_SAME_SCALAR(name, encoding) EXPECT_TRUE(same(one.name, four.name)) << #name;
  UKES_SUMMARIZED_SCALARS(UKES_EXPECT_SAME_SCALAR)
#undef UKES_EXPECT_SAME_SCALAR
  EXPECT_EQ(one.q[1].count, r.count - (r.count + 10) / 11);
}

}  // namespace
}  // namespace ukes
