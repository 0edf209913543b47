// Runs one batch through both paths on the CPU: the fused SystemKernel (run_batch_cpu) and the
// staged orchestration with the CPU executor (run_staged_cpu), and measures how far their
// results are apart. Header-only, for tests/staged.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kernels/backend/cpu/cpu_backend.hpp"
#include "kernels/ensemble/ensemble.hpp"
#include "kernels/ensemble/to_run_settings.hpp"
#include "kernels/staged/cpu_executor.hpp"

namespace ukes::testing {

// `count` systems around the model's default initial condition: system 0 exactly at it, the
// others moved by up to 2e-3 i per coordinate (and half that, opposite, per velocity).
inline Batch perturbed_batch(const ModelInfo& m, int count) {
  Batch b = Batch::defaults(m, count);
  for (int i = 1; i < count; ++i) {
    for (int j = 0; j < m.n; ++j) {
      const double e = 1e-3 * i * ((7 * j + 3 * i) % 5 - 2);
      b.q(j, i) += e;
      b.qd(j, i) -= 0.5 * e;
    }
  }
  return b;
}

struct PathRuns {
  BatchResults fused, staged;
};

// The staged side runs on `Executor` (the CPU executor, or a test's variant of it); `inspect`
// sees the executor once the run is done.
template <class Model, class T, class Executor = CpuStagedExecutor<Model, T>>
PathRuns run_both_paths(const Batch& batch, const EnsembleSettings& e,
                        const std::vector<std::int32_t>& traj_ids,
                        const std::function<void(const Executor&)>& inspect = {}) {
  PathRuns r;
  r.fused.allocate(batch, e.samples, traj_ids);
  r.staged.allocate(batch, e.samples, traj_ids);
  const RunSettings<T> s = to_run_settings<T>(e);
  // Per system, as the staged path integrates (the CPU's SIMD lanes are tests/lanes').
  run_batch_cpu<Model, T>(batch.view(), s, r.fused.view(), 1, CpuIsa::kScalar);
  Executor ex(batch.count);
  run_staged<Model, T>(ex, batch.view(), s, r.staged.view(), nullptr);
  if (inspect) inspect(ex);
  return r;
}

// The largest difference of a and b relative to `scale`; NaN against NaN is agreement, NaN
// against a number is infinitely far.
inline double scaled_difference(double a, double b, double scale) {
  if (std::isnan(a) && std::isnan(b)) return 0.0;
  if (std::isnan(a) || std::isnan(b)) return INFINITY;
  if (a == b) return 0.0;
  return std::abs(a - b) / scale;
}

// How far two runs of the same batch are apart, worst over systems:
//  state: final q and qd, relative to the system's largest |q| (resp. |qd|), at least 1e-3;
//  maxima: residual, force and inconsistency maxima, |difference| / (1 + |fused|)
//          (absolute and relative together);
//  trajectory: every recorded sample as `state`, per sample.
struct Agreement {
  double state = 0.0;
  double maxima = 0.0;
  double trajectory = 0.0;
  int status_mismatches = 0;
  int step_mismatches = 0;  // accepted or rejected step counts
  int time_mismatches = 0;  // final times not bit-equal
};

inline double vector_scale(const std::vector<double>& v, int n, int count, int i) {
  double s = 1e-3;
  for (int j = 0; j < n; ++j) {
    const double x = v[static_cast<std::size_t>(j) * count + i];
    if (std::isfinite(x)) s = std::max(s, std::abs(x));
  }
  return s;
}

inline Agreement compare_runs(const BatchResults& f, const BatchResults& g) {
  Agreement a;
  const int c = f.count, n = f.n;
  for (int i = 0; i < c; ++i) {
    if (f.status[i] != g.status[i]) ++a.status_mismatches;
    if (f.steps[i] != g.steps[i] || f.rejected[i] != g.rejected[i]) ++a.step_mismatches;
    if (f.t[i] != g.t[i]) ++a.time_mismatches;
    const double sq = vector_scale(f.q, n, c, i), sqd = vector_scale(f.qd, n, c, i);
    for (int j = 0; j < n; ++j) {
      a.state = std::max(a.state, scaled_difference(f.q_at(j, i), g.q_at(j, i), sq));
      a.state = std::max(a.state, scaled_difference(f.qd_at(j, i), g.qd_at(j, i), sqd));
    }
    auto maxima = [&](double x, double y) {
      a.maxima = std::max(a.maxima, scaled_difference(x, y, 1.0 + std::abs(x)));
    };
    for (int r = 0; r < f.residual_slots; ++r) maxima(f.residual_at(r, i), g.residual_at(r, i));
    maxima(f.force_max[i], g.force_max[i]);
    maxima(f.inconsistency_max[i], g.inconsistency_max[i]);
  }
  for (std::size_t slot = 0; slot < f.traj_ids.size(); ++slot) {
    const int sl = static_cast<int>(slot);
    for (int k = 0; k < f.samples; ++k) {
      double sq = 1e-3, sqd = 1e-3;
      for (int j = 0; j < n; ++j) {
        if (std::isfinite(f.traj_q_at(sl, k, j)))
          sq = std::max(sq, std::abs(f.traj_q_at(sl, k, j)));
        if (std::isfinite(f.traj_qd_at(sl, k, j)))
          sqd = std::max(sqd, std::abs(f.traj_qd_at(sl, k, j)));
      }
      for (int j = 0; j < n; ++j) {
        a.trajectory = std::max(
            a.trajectory, scaled_difference(f.traj_q_at(sl, k, j), g.traj_q_at(sl, k, j), sq));
        a.trajectory = std::max(
            a.trajectory, scaled_difference(f.traj_qd_at(sl, k, j), g.traj_qd_at(sl, k, j), sqd));
        const double fq = f.traj_force_at(sl, k, j);
        a.trajectory = std::max(
            a.trajectory, scaled_difference(fq, g.traj_force_at(sl, k, j), 1.0 + std::abs(fq)));
      }
      for (int r = 0; r < f.residual_slots; ++r) {
        const double fr = f.traj_residual_at(sl, k, r);
        a.trajectory = std::max(
            a.trajectory, scaled_difference(fr, g.traj_residual_at(sl, k, r), 1.0 + std::abs(fr)));
      }
    }
  }
  return a;
}

}  // namespace ukes::testing
