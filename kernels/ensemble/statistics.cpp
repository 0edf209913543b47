// Ensemble statistics: order statistics and moments of the final states of the ok systems.
#include "kernels/ensemble/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

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

EnsembleStatistics ensemble_statistics(const BatchResults& r) {
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

  std::vector<double> column(ok_ids.size());
  auto summarize_ok = [&](auto&& value_of) {
    for (std::size_t k = 0; k < ok_ids.size(); ++k) column[k] = value_of(ok_ids[k]);
    return summarize(column);
  };
  for (int j = 0; j < r.n; ++j) {
    e.q.push_back(summarize_ok([&](int i) { return r.q_at(j, i); }));
    e.qd.push_back(summarize_ok([&](int i) { return r.qd_at(j, i); }));
  }
  for (int slot = 0; slot < r.residual_slots; ++slot)
    e.residual.push_back(summarize_ok([&](int i) { return r.residual_at(slot, i); }));
#define UKES_SUMMARIZE_SCALAR(name, encoding) \
  e.name = summarize_ok(                      \
      [&](int i) { return static_cast<double>(r.name[static_cast<std::size_t>(i)]); });
  UKES_SUMMARIZED_SCALARS(UKES_SUMMARIZE_SCALAR)
#undef UKES_SUMMARIZE_SCALAR
  return e;
}

}  // namespace ukes
