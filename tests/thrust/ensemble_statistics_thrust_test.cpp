// ensemble_statistics_thrust() run with thrust::host must give what the host implementation
// ensemble_statistics() gives (the CUDA backend runs the same header with a CUDA policy): counts
// and order statistics exactly, moments to 1e-14 relative (summation order is the only freedom),
// and the failed ids of a plain scan of the statuses.
#include "kernels/backend/thrust/ensemble_statistics_thrust.hpp"

#include <gtest/gtest.h>
#include <thrust/execution_policy.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "kernels/ensemble/statistics.hpp"

namespace ukes {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

BatchResults make_results(int count, int n, int residual_slots) {
  BatchResults r;
  r.count = count;
  r.n = n;
  r.residual_slots = residual_slots;
  const auto c = static_cast<std::size_t>(count);
  r.status.assign(c, static_cast<std::int32_t>(Status::kOk));
  r.q.assign(c * static_cast<std::size_t>(n), 0.0);
  r.qd.assign(c * static_cast<std::size_t>(n), 0.0);
  r.residual_max.assign(c * static_cast<std::size_t>(residual_slots), 0.0);
  r.force_max.assign(c, 0.0);
  r.control_effort_max.assign(c, 0.0);
  r.steps.assign(c, 0);
  return r;
}

// Random values of different scales and signs, with ties and signed zeros in the last q column.
void fill_random(BatchResults& r, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_int_distribution<int> small(-3, 3);
  std::uniform_int_distribution<std::int64_t> steps(10, 5'000'000'000LL);
  for (std::size_t k = 0; k < r.q.size(); ++k) r.q[k] = 1e3 * normal(rng) + 5.0;
  for (int i = 0; i < r.count; ++i) {
    const int tie = small(rng);
    r.q[static_cast<std::size_t>(r.n - 1) * r.count + i] = tie == 0 ? -0.0 : 0.25 * tie;
  }
  for (double& v : r.qd) v = 1e-6 * normal(rng);
  for (double& v : r.residual_max) v = std::abs(1e-12 * normal(rng));
  for (double& v : r.force_max) v = 1e9 + normal(rng);  // large offset: two-pass variance
  for (double& v : r.control_effort_max) v = std::abs(30.0 * normal(rng));
  for (std::int64_t& s : r.steps) s = steps(rng);
}

ThrustStatisticsInput input_of(const BatchResults& r) {
  ThrustStatisticsInput in{r.count,    r.n,         r.residual_slots,     r.status.data(),
                           r.q.data(), r.qd.data(), r.residual_max.data()};
#define UKES_INPUT_SCALAR(name, encoding) in.name = r.name.data();
  UKES_SUMMARIZED_SCALARS(UKES_INPUT_SCALAR)
#undef UKES_INPUT_SCALAR
  return in;
}

std::vector<std::int32_t> failed_ids_by_scan(const BatchResults& r) {
  std::vector<std::int32_t> ids;
  for (int i = 0; i < r.count; ++i)
    if (!ended_as_asked(static_cast<Status>(r.status[static_cast<std::size_t>(i)])))
      ids.push_back(i);
  return ids;
}

void expect_same_value(double thrust_value, double host_value, const char* what) {
  if (std::isnan(host_value)) {
    EXPECT_TRUE(std::isnan(thrust_value)) << what;
  } else {
    EXPECT_EQ(thrust_value, host_value) << what;
  }
}

void expect_close(double thrust_value, double host_value, const char* what) {
  if (std::isnan(host_value)) {
    EXPECT_TRUE(std::isnan(thrust_value)) << what;
  } else {
    EXPECT_NEAR(thrust_value, host_value, 1e-14 * std::abs(host_value)) << what;
  }
}

// `column` and `index` name the column in failure messages (index < 0: none).
void expect_same_summary(const Summary& t, const Summary& h, const char* column, int index = -1) {
  SCOPED_TRACE(index < 0 ? testing::Message() << column : testing::Message() << column << index);
  EXPECT_EQ(t.count, h.count);
  expect_same_value(t.min, h.min, "min");
  expect_same_value(t.max, h.max, "max");
  expect_same_value(t.p50, h.p50, "p50");
  expect_same_value(t.p95, h.p95, "p95");
  expect_same_value(t.p99, h.p99, "p99");
  expect_close(t.mean, h.mean, "mean");
  expect_close(t.std, h.std, "std");
}

// Runs both implementations on `r` and compares everything; returns the Thrust statistics.
EnsembleStatistics expect_matches_host(const BatchResults& r) {
  const EnsembleStatistics h = ensemble_statistics(r);
  std::vector<std::int32_t> failed{-7};  // stale content must be replaced
  const EnsembleStatistics t = ensemble_statistics_thrust(thrust::host, input_of(r), &failed);
  EXPECT_EQ(t.count, h.count);
  EXPECT_EQ(t.ok, h.ok);
  EXPECT_EQ(t.failed, h.failed);
  EXPECT_EQ(t.by_status, h.by_status);
  EXPECT_EQ(failed, failed_ids_by_scan(r));
  EXPECT_EQ(static_cast<std::int64_t>(failed.size()), h.failed);
  EXPECT_EQ(t.q.size(), h.q.size());
  EXPECT_EQ(t.qd.size(), h.qd.size());
  EXPECT_EQ(t.residual.size(), h.residual.size());
  for (std::size_t j = 0; j < std::min(t.q.size(), h.q.size()); ++j)
    expect_same_summary(t.q[j], h.q[j], "q", static_cast<int>(j));
  for (std::size_t j = 0; j < std::min(t.qd.size(), h.qd.size()); ++j)
    expect_same_summary(t.qd[j], h.qd[j], "qd", static_cast<int>(j));
  for (std::size_t k = 0; k < std::min(t.residual.size(), h.residual.size()); ++k)
    expect_same_summary(t.residual[k], h.residual[k], "residual", static_cast<int>(k));
#define UKES_SAME_SCALAR(name, encoding) expect_same_summary(t.name, h.name, #name);
  UKES_SUMMARIZED_SCALARS(UKES_SAME_SCALAR)
#undef UKES_SAME_SCALAR
  return t;
}

// Every status present (ok the most frequent), non-finite values among ok and failed systems.
BatchResults mixed_results(int count, std::uint64_t seed) {
  BatchResults r = make_results(count, 3, 4);
  fill_random(r, seed);
  for (int i = 0; i < count; ++i)
    if (i % 3 == 1) r.status[static_cast<std::size_t>(i)] = 1 + (i / 3) % (kStatusCount - 1);
  auto set = [&](std::vector<double>& v, int row, int i, double value) {
    if (i < count) v[static_cast<std::size_t>(row) * count + i] = value;
  };
  // Ok systems (i % 3 != 1) with NaN, +inf and -inf in several columns; failed ones with garbage.
  set(r.q, 0, 0, kNaN);
  set(r.q, 0, 5, kInf);
  set(r.q, 1, 3, -kInf);
  set(r.qd, 2, 6, kNaN);
  set(r.residual_max, 3, 8, kInf);
  set(r.force_max, 0, 9, kNaN);
  set(r.control_effort_max, 0, 12, kInf);
  set(r.q, 0, 1, kNaN);
  set(r.q, 1, 4, 1e300);  // would be the max if failed systems counted
  set(r.force_max, 0, 7, -kInf);
  return r;
}

TEST(EnsembleStatisticsThrust, MatchesHostOnMixedResultsOddCount) {
  const BatchResults r = mixed_results(1001, 1);
  const EnsembleStatistics t = expect_matches_host(r);
  for (int s = 0; s < kStatusCount; ++s) EXPECT_GT(t.by_status[static_cast<std::size_t>(s)], 0);
  EXPECT_EQ(t.q[0].count, t.ok - 2);  // the NaN and the inf of ok systems are skipped
  EXPECT_LT(t.q[1].max, 1e300);       // a failed system's value is not summarized
}

TEST(EnsembleStatisticsThrust, MatchesHostOnMixedResultsEvenCount) {
  const BatchResults r = mixed_results(1000, 2);
  const EnsembleStatistics t = expect_matches_host(r);
  EXPECT_EQ(t.ok + t.failed, 1000);
}

TEST(EnsembleStatisticsThrust, MatchesHostForEvenAndOddOkCounts) {
  // Small ensembles, where the percentile positions fall between and on order statistics.
  for (int count = 1; count <= 24; ++count) {
    SCOPED_TRACE(count);
    expect_matches_host(mixed_results(count, 100 + static_cast<std::uint64_t>(count)));
  }
}

TEST(EnsembleStatisticsThrust, SingleOkSystem) {
  BatchResults r = make_results(7, 2, 3);
  fill_random(r, 3);
  for (int i = 0; i < 7; ++i) r.status[static_cast<std::size_t>(i)] = i == 4 ? 0 : 1 + i % 5;
  const EnsembleStatistics t = expect_matches_host(r);
  EXPECT_EQ(t.ok, 1);
  EXPECT_EQ(t.q[0].std, 0.0);
  EXPECT_EQ(t.q[0].p99, r.q_at(0, 4));
}

TEST(EnsembleStatisticsThrust, NoOkSystemGivesNaNSummaries) {
  BatchResults r = make_results(6, 2, 2);
  fill_random(r, 4);
  for (int i = 0; i < 6; ++i) r.status[static_cast<std::size_t>(i)] = 1 + i % (kStatusCount - 1);
  const EnsembleStatistics t = expect_matches_host(r);
  EXPECT_EQ(t.ok, 0);
  EXPECT_EQ(t.failed, 6);
  EXPECT_EQ(t.steps.count, 0);
  EXPECT_TRUE(std::isnan(t.steps.mean));
}

TEST(EnsembleStatisticsThrust, ColumnWithoutFiniteValuesAmongOthersWithValues) {
  BatchResults r = make_results(5, 2, 1);
  fill_random(r, 5);
  r.status[2] = static_cast<std::int32_t>(Status::kNonfinite);
  for (int i = 0; i < 5; ++i) r.qd[static_cast<std::size_t>(1) * 5 + i] = i % 2 ? kNaN : -kInf;
  const EnsembleStatistics t = expect_matches_host(r);
  EXPECT_EQ(t.qd[1].count, 0);
  EXPECT_TRUE(std::isnan(t.qd[1].p50));
  EXPECT_EQ(t.qd[0].count, 4);
}

TEST(EnsembleStatisticsThrust, EmptyBatch) {
  const EnsembleStatistics t = expect_matches_host(make_results(0, 2, 1));
  EXPECT_EQ(t.count, 0);
}

TEST(EnsembleStatisticsThrust, StatusOutsideTheEnumIsFailedButInNoStatusCount) {
  BatchResults r = make_results(4, 1, 0);
  fill_random(r, 6);
  r.status[1] = 99;
  r.status[3] = -1;
  const EnsembleStatistics t = expect_matches_host(r);
  EXPECT_EQ(t.failed, 2);
  std::int64_t counted = 0;
  for (std::int64_t c : t.by_status) counted += c;
  EXPECT_EQ(counted, 2);
}

TEST(EnsembleStatisticsThrust, FailedIdsAreOptional) {
  const BatchResults r = mixed_results(50, 7);
  const EnsembleStatistics t = ensemble_statistics_thrust(thrust::host, input_of(r));
  EXPECT_EQ(t.failed, ensemble_statistics(r).failed);
}

}  // namespace
}  // namespace ukes
