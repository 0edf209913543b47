// The percentile convention of the statistics, checked independently of our own implementations:
// numpy's default ("linear") percentile, worked by hand from its definition (virtual index
// h = (n - 1) p between the sorted values), through the Thrust statistics and through the shared
// percentile_sorted().
#include <gtest/gtest.h>
#include <thrust/execution_policy.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/backend/thrust/ensemble_statistics_thrust.hpp"
#include "kernels/ensemble/percentile.hpp"

namespace ukes {
namespace {

// Relative: the hand values are exact, the computed ones carry a rounding or two of h and t.
void expect_hand_value(double computed, double hand) {
  EXPECT_NEAR(computed, hand, 4e-16 * std::abs(hand));
}

// One coordinate, every system ok, final q = `values` (given unsorted).
Summary thrust_summary_of(const std::vector<double>& values) {
  const int count = static_cast<int>(values.size());
  const std::vector<std::int32_t> status(values.size(), 0);
  const std::vector<double> zeros(values.size(), 0.0);
  const std::vector<std::int64_t> steps(values.size(), 1);
  ThrustStatisticsInput in{count, 1, 0, status.data(), values.data(), zeros.data(), nullptr};
  in.force_max = zeros.data();
  in.control_effort_max = zeros.data();
  in.steps = steps.data();
  return ensemble_statistics_thrust(thrust::host, in).q.at(0);
}

TEST(PercentileConvention, OddCountMatchesNumpy) {
  // np.percentile([1, 2, 3, 4, 10], [50, 95, 99]): h = 4 p = 2, 3.8, 3.96 -> 3, 4 + 0.8 * 6,
  // 4 + 0.96 * 6.
  const Summary s = thrust_summary_of({10, 3, 1, 4, 2});
  EXPECT_EQ(s.p50, 3.0);
  expect_hand_value(s.p95, 8.8);
  expect_hand_value(s.p99, 9.76);
  EXPECT_EQ(s.min, 1.0);
  EXPECT_EQ(s.max, 10.0);
}

TEST(PercentileConvention, EvenCountMatchesNumpy) {
  // np.percentile([-3, 0.5, 2, 7], [50, 95, 99]): h = 3 p = 1.5, 2.85, 2.97 -> (0.5 + 2) / 2,
  // 2 + 0.85 * 5, 2 + 0.97 * 5.
  const Summary s = thrust_summary_of({7, -3, 2, 0.5});
  EXPECT_EQ(s.p50, 1.25);
  expect_hand_value(s.p95, 6.25);
  expect_hand_value(s.p99, 6.85);
}

TEST(PercentileConvention, EndsAndMidpointOfTheSharedFormula) {
  const double x[] = {-1.0, 2.0, 4.0, 16.0};
  EXPECT_EQ(percentile_sorted(x, 4, 0.0), -1.0);  // p = 0: the minimum
  EXPECT_EQ(percentile_sorted(x, 4, 1.0), 16.0);  // p = 1: the maximum (no index past the end)
  EXPECT_EQ(percentile_sorted(x, 4, 0.5), 3.0);   // h = 1.5: halfway between 2 and 4
  const double y[] = {0.0, 1.0, 5.0, 6.0, 8.0};
  EXPECT_EQ(percentile_sorted(y, 5, 0.25), 1.0);         // h = 1: on an order statistic
  expect_hand_value(percentile_sorted(y, 5, 0.1), 0.4);  // h = 0.4: 0 + 0.4 * 1, from below
  expect_hand_value(percentile_sorted(y, 5, 0.6), 5.4);  // h = 2.4: 5 + 0.4 * 1
  EXPECT_EQ(percentile_sorted(x, 1, 0.99), -1.0);        // one value is every percentile
}

}  // namespace
}  // namespace ukes
