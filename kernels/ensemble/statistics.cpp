// Ensemble statistics: order statistics and moments of the final states of the ok systems.
#include "kernels/ensemble/statistics.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <functional>
#include <thread>
#include <vector>

#include "kernels/ensemble/percentile.hpp"

namespace ukes {

Summary summarize(std::vector<double> values) {
  std::erase_if(values, [](double v) { return !std::isfinite(v); });
  Summary s;
  s.count = static_cast<std::int64_t>(values.size());
  if (values.empty()) {
    s.min = s.max = s.mean = s.std = s.p50 = s.p95 = s.p99 = NAN;
    return s;
  }
  std::sort(values.begin(), values.end());
  const double n = static_cast<double>(values.size());
  double sum = 0.0;
  for (double v : values) sum += v;
  s.mean = sum / n;
  double ss = 0.0;
  for (double v : values) ss += (v - s.mean) * (v - s.mean);
  s.std = std::sqrt(ss / n);
  s.min = values.front();
  s.max = values.back();
  s.p50 = percentile_sorted(values.data(), values.size(), 0.50);
  s.p95 = percentile_sorted(values.data(), values.size(), 0.95);
  s.p99 = percentile_sorted(values.data(), values.size(), 0.99);
  return s;
}

namespace {

// Calls summarize_column(k) for k in [0, columns) on up to `threads` threads.
template <class F>
void for_each_column(int columns, int threads, const F& summarize_column) {
  std::atomic<int> next{0};
  const auto work = [&] {
    for (int k = next++; k < columns; k = next++) summarize_column(k);
  };
  std::vector<std::jthread> helpers;
  for (int t = 1; t < std::min(threads, columns); ++t) helpers.emplace_back(work);
  work();
}

// A summary's destination, and how its column's values at given systems are gathered (the loop
// inside, so that a value costs no indirect call).
struct Column {
  Summary* summary;
  std::function<void(const std::vector<int>& ids, std::vector<double>& values)> gather;
};

template <class ValueOf>
Column column(Summary* summary, ValueOf value_of) {
  return {summary, [value_of](const std::vector<int>& ids, std::vector<double>& values) {
            for (std::size_t m = 0; m < ids.size(); ++m) values[m] = value_of(ids[m]);
          }};
}

}  // namespace

EnsembleStatistics ensemble_statistics(const BatchResults& r, int threads) {
  EnsembleStatistics e;
  e.count = r.count;
  std::vector<int> ok_ids;
  ok_ids.reserve(static_cast<std::size_t>(r.count));
  for (int i = 0; i < r.count; ++i) {
    const std::int32_t st = r.status[static_cast<std::size_t>(i)];
    if (st >= 0 && st < kStatusCount) ++e.by_status[static_cast<std::size_t>(st)];
    if (ended_as_asked(static_cast<Status>(st))) ok_ids.push_back(i);
  }
  e.ok = static_cast<std::int64_t>(ok_ids.size());
  e.failed = e.count - e.ok;

  std::vector<Column> columns;
  e.q.resize(static_cast<std::size_t>(r.n));
  e.qd.resize(static_cast<std::size_t>(r.n));
  e.residual.resize(static_cast<std::size_t>(std::max(0, r.residual_slots)));
  for (int j = 0; j < r.n; ++j) {
    columns.push_back(
        column(&e.q[static_cast<std::size_t>(j)], [&r, j](int i) { return r.q_at(j, i); }));
    columns.push_back(
        column(&e.qd[static_cast<std::size_t>(j)], [&r, j](int i) { return r.qd_at(j, i); }));
  }
  for (int slot = 0; slot < r.residual_slots; ++slot)
    columns.push_back(column(&e.residual[static_cast<std::size_t>(slot)],
                             [&r, slot](int i) { return r.residual_at(slot, i); }));
#define UKES_SUMMARIZE_SCALAR(name, encoding) \
  columns.push_back(column(                   \
      &e.name, [&r](int i) { return static_cast<double>(r.name[static_cast<std::size_t>(i)]); }));
  UKES_SUMMARIZED_SCALARS(UKES_SUMMARIZE_SCALAR)
#undef UKES_SUMMARIZE_SCALAR

  for_each_column(static_cast<int>(columns.size()), threads, [&](int k) {
    const Column& c = columns[static_cast<std::size_t>(k)];
    std::vector<double> values(ok_ids.size());
    c.gather(ok_ids, values);
    *c.summary = summarize(std::move(values));
  });
  return e;
}

}  // namespace ukes
