// Ensemble statistics over the systems that finished with status ok.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "kernels/ensemble/ensemble.hpp"
#include "kernels/ensemble/system_record.hpp"

namespace ukes {

struct Summary {
  std::int64_t count = 0;                      // values summarized (non-finite values are skipped)
  double min = 0, max = 0, mean = 0, std = 0;  // std: population standard deviation
  // Percentiles: linear interpolation between order statistics (numpy's default).
  double p50 = 0, p95 = 0, p99 = 0;
};

// NaN fields when no finite value is given.
Summary summarize(std::vector<double> values);

struct EnsembleStatistics {
  std::int64_t count = 0;
  std::int64_t ok = 0;  // systems that ended as asked: ok or terminated (batch_layout.hpp)
  std::int64_t failed = 0;
  std::array<std::int64_t, kStatusCount> by_status{};
  std::vector<Summary> q;         // per coordinate, final values of ok systems
  std::vector<Summary> qd;        // per coordinate
  std::vector<Summary> residual;  // per residual slot (|phi| rows, |phid| rows, |psi| rows)
  // One summary per scalar of UKES_SUMMARIZED_SCALARS (system_record.hpp): force_max,
  // control_effort_max (0 without control), steps.
#define UKES_SUMMARY_MEMBER(name, encoding) Summary name;
  UKES_SUMMARIZED_SCALARS(UKES_SUMMARY_MEMBER)
#undef UKES_SUMMARY_MEMBER
};

// Each summary sorts its column (10^6 systems with 23 columns: 2.2 s on one thread of our 2-core
// machine), so the columns are summarized on up to `threads` threads, each as on one: the same
// bits whatever the count.
EnsembleStatistics ensemble_statistics(const BatchResults& results, int threads = 1);

}  // namespace ukes
