// ensemble_statistics() (kernels/ensemble/statistics.cpp) written with Thrust, generic over the
// execution policy: the CUDA backend runs it on the per-system results it keeps in device memory
// (thrust::cuda::par.on(stream), nvcc), so that only summaries cross PCIe; the tests run the very
// same code with thrust::host (g++) against the host implementation.
//
// Work on the device: one pass counts the statuses and one compacts the ok ids; then per column
// (q, qd, residual slots, the summarized scalars) one gather of its finite ok values, one sort, two
// reductions (sum, then squared deviations from the mean: the two-pass variance of the host) and
// a 5-element transform that picks min, max and the percentiles out of the sorted values. The
// scratch buffers are allocated once per call; what comes back is three scalars per column, the
// picked order statistics of all columns in one copy, and the failed ids when asked for.
//
// Thrust reports device errors by throwing (thrust::system_error, std::bad_alloc); so does this.
#pragma once

#include <thrust/copy.h>
#include <thrust/functional.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/permutation_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/reduce.h>
#include <thrust/sort.h>
#include <thrust/transform.h>
#include <thrust/transform_reduce.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/backend/thrust/copy_to_host.hpp"
#include "kernels/backend/thrust/scratch_buffer.hpp"
#include "kernels/backend/thrust/statistics_input.hpp"
#include "kernels/core/hd.hpp"
#include "kernels/ensemble/batch_layout.hpp"
#include "kernels/ensemble/percentile.hpp"
#include "kernels/ensemble/statistics.hpp"

namespace ukes {
namespace thrust_statistics {

// Systems per status, in one reduction.
struct StatusTally {
  std::int64_t by_status[kStatusCount];
};

struct TallyOne {
  UKES_HD StatusTally operator()(std::int32_t status) const {
    StatusTally t{};
    if (status >= 0 && status < kStatusCount) t.by_status[status] = 1;
    return t;
  }
};

struct AddTallies {
  UKES_HD StatusTally operator()(const StatusTally& a, const StatusTally& b) const {
    StatusTally t{};
    for (int s = 0; s < kStatusCount; ++s) t.by_status[s] = a.by_status[s] + b.by_status[s];
    return t;
  }
};

// Ended as asked (ok or terminated, batch_layout.hpp): what the summaries are over.
struct IsOk {
  UKES_HD bool operator()(std::int32_t status) const {
    return ended_as_asked(static_cast<Status>(status));
  }
};

struct IsFailed {
  UKES_HD bool operator()(std::int32_t status) const { return !IsOk{}(status); }
};

struct IsFinite {
  UKES_HD bool operator()(double v) const { return isfinite(v); }
};

struct AsDouble {
  template <class Value>
  UKES_HD double operator()(Value v) const {
    return static_cast<double>(v);
  }
};

struct SquaredDeviation {
  double mean;
  UKES_HD double operator()(double v) const { return (v - mean) * (v - mean); }
};

// The order statistics of a Summary, in this order, picked from m >= 1 sorted values.
inline constexpr int kOrderStatistics = 5;  // min, max, p50, p95, p99

struct PickOrderStatistic {
  const double* sorted;
  std::size_t m;
  UKES_HD double operator()(int k) const {
    switch (k) {
      case 0:
        return sorted[0];
      case 1:
        return sorted[m - 1];
      case 2:
        return percentile_sorted(sorted, m, 0.50);
      case 3:
        return percentile_sorted(sorted, m, 0.95);
      default:
        return percentile_sorted(sorted, m, 0.99);
    }
  }
};

// What a column's reductions bring back; the order statistics come back later, all at once.
struct ColumnMoments {
  std::int64_t count = 0;
  double mean = 0, std = 0;
};

// Summarizes the finite values of column[ok_ids[0..ok)] (column: any random-access iterator of
// double in the policy's memory space), writing its order statistics to order_out[0..5) when it
// has any. `values` is scratch for `ok` doubles.
template <class Policy, class Column>
ColumnMoments summarize_column(const Policy& policy, Column column, const std::int32_t* ok_ids,
                               std::ptrdiff_t ok, double* values, double* order_out) {
  const auto gathered = thrust::make_permutation_iterator(column, ok_ids);
  const std::ptrdiff_t m =
      thrust::copy_if(policy, gathered, gathered + ok, values, IsFinite{}) - values;
  ColumnMoments c;
  c.count = m;
  if (m == 0) return c;
  thrust::sort(policy, values, values + m);
  // Summed in sorted order, as the host does (the device reduction's order differs only in
  // rounding).
  const double n = static_cast<double>(m);
  c.mean = thrust::reduce(policy, values, values + m, 0.0, thrust::plus<double>{}) / n;
  const double ss = thrust::transform_reduce(policy, values, values + m, SquaredDeviation{c.mean},
                                             0.0, thrust::plus<double>{});
  c.std = std::sqrt(ss / n);
  thrust::transform(policy, thrust::counting_iterator<int>(0),
                    thrust::counting_iterator<int>(kOrderStatistics), order_out,
                    PickOrderStatistic{values, static_cast<std::size_t>(m)});
  return c;
}

inline Summary make_summary(const ColumnMoments& c, const double* order) {
  Summary s;
  s.count = c.count;
  if (c.count == 0) {
    s.min = s.max = s.mean = s.std = s.p50 = s.p95 = s.p99 = NAN;
    return s;
  }
  s.mean = c.mean;
  s.std = c.std;
  s.min = order[0];
  s.max = order[1];
  s.p50 = order[2];
  s.p95 = order[3];
  s.p99 = order[4];
  return s;
}

}  // namespace thrust_statistics

// The EnsembleStatistics of ensemble_statistics() for results in the policy's memory space; with
// `failed_ids`, also the ids of the systems whose status is not ok, ascending (host memory).
template <class Policy>
EnsembleStatistics ensemble_statistics_thrust(const Policy& policy, const ThrustStatisticsInput& in,
                                              std::vector<std::int32_t>* failed_ids = nullptr) {
  namespace ts = thrust_statistics;
  const std::ptrdiff_t count = in.count;
  EnsembleStatistics e;
  e.count = count;
  const ts::StatusTally tally = thrust::transform_reduce(
      policy, in.status, in.status + count, ts::TallyOne{}, ts::StatusTally{}, ts::AddTallies{});
  for (int s = 0; s < kStatusCount; ++s)
    e.by_status[static_cast<std::size_t>(s)] = tally.by_status[s];
  e.ok = tally.by_status[static_cast<int>(Status::kOk)] +
         tally.by_status[static_cast<int>(Status::kTerminated)];
  e.failed = e.count - e.ok;

  // One id buffer: first the failed ids (when asked for), then the ok ids the columns gather by.
  ScratchBuffer<std::int32_t, Policy> ids(policy, count);
  const thrust::counting_iterator<std::int32_t> first_id(0);
  if (failed_ids != nullptr) {
    failed_ids->resize(static_cast<std::size_t>(e.failed));
    thrust::copy_if(policy, first_id, first_id + count, in.status, ids.get(), ts::IsFailed{});
    copy_to_host(policy, ids.get(), failed_ids->size(), failed_ids->data());
  }
  const std::ptrdiff_t ok =
      thrust::copy_if(policy, first_id, first_id + count, in.status, ids.get(), ts::IsOk{}) -
      ids.get();

  const int first_scalar = 2 * in.n + in.residual_slots;
  const int columns = first_scalar + kSummarizedScalars;
  ScratchBuffer<double, Policy> values(policy, ok);
  ScratchBuffer<double, Policy> order(policy, ok > 0 ? ts::kOrderStatistics * columns : 0);
  std::vector<ts::ColumnMoments> moments(static_cast<std::size_t>(columns));
  auto summarize = [&](int c, auto column) {
    if (ok == 0) return;  // every summary NaN
    moments[static_cast<std::size_t>(c)] = ts::summarize_column(
        policy, column, ids.get(), ok, values.get(), order.get() + ts::kOrderStatistics * c);
  };
  // Columns in the order of EnsembleStatistics: q, qd, residual slots, the scalars.
  const std::ptrdiff_t stride = count;
  for (int j = 0; j < in.n; ++j) {
    summarize(j, in.q + j * stride);
    summarize(in.n + j, in.qd + j * stride);
  }
  for (int r = 0; r < in.residual_slots; ++r) summarize(2 * in.n + r, in.residual_max + r * stride);
  int scalar = first_scalar;
#define UKES_SUMMARIZE_SCALAR(name, encoding) \
  summarize(scalar++, thrust::make_transform_iterator(in.name, ts::AsDouble{}));
  UKES_SUMMARIZED_SCALARS(UKES_SUMMARIZE_SCALAR)
#undef UKES_SUMMARIZE_SCALAR

  std::vector<double> picked(static_cast<std::size_t>(ts::kOrderStatistics * columns));
  if (ok > 0) copy_to_host(policy, order.get(), picked.size(), picked.data());
  auto summary = [&](int c) {
    return ts::make_summary(moments[static_cast<std::size_t>(c)],
                            picked.data() + ts::kOrderStatistics * c);
  };
  for (int j = 0; j < in.n; ++j) {
    e.q.push_back(summary(j));
    e.qd.push_back(summary(in.n + j));
  }
  for (int r = 0; r < in.residual_slots; ++r) e.residual.push_back(summary(2 * in.n + r));
  scalar = first_scalar;
#define UKES_SCALAR_SUMMARY(name, encoding) e.name = summary(scalar++);
  UKES_SUMMARIZED_SCALARS(UKES_SCALAR_SUMMARY)
#undef UKES_SCALAR_SUMMARY
  return e;
}

}  // namespace ukes
