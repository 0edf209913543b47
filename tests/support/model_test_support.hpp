// Helpers shared by the model tests (tests/models): an independent fixed-step RK4 for the reduced
// reference equations the runs are compared with, a one-system run at a model's defaults, a
// constraint-set check of a state, seeded random numbers for random states, and maxima over
// sampled trajectories, and the output arrays of one system run by SystemKernel directly.
// Header-only. Nothing here calls the engine's integrators: the reference
// solutions stay independent of the code under test.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/ensemble/ensemble.hpp"
#include "kernels/uk/constraint_form.hpp"

namespace ukes::testing {

// One classical fourth-order Runge-Kutta step of y' = f(t, y) from (t, y) with step h: the plain
// textbook scheme on std::array, f(double t, const std::array<double, D>& y) -> std::array.
template <std::size_t D, class F>
std::array<double, D> rk4_reference_step(const F& f, double t, const std::array<double, D>& y,
                                         double h) {
  const auto along = [&y](double s, const std::array<double, D>& k) {
    std::array<double, D> z;
    for (std::size_t i = 0; i < D; ++i) z[i] = y[i] + s * k[i];
    return z;
  };
  const std::array<double, D> k1 = f(t, y);
  const std::array<double, D> k2 = f(t + h / 2, along(h / 2, k1));
  const std::array<double, D> k3 = f(t + h / 2, along(h / 2, k2));
  const std::array<double, D> k4 = f(t + h, along(h, k3));
  std::array<double, D> next;
  for (std::size_t i = 0; i < D; ++i)
    next[i] = y[i] + h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
  return next;
}

// The RK4 solution of y' = f(t, y), y(t0) = y0, over [t0, t1] at the `samples` uniform times
// t0 + k (t1 - t0) / (samples - 1), k = 0 .. samples - 1 (the sample times of a run; entry 0 is
// y0). Fixed step h = (t1 - t0) / ((samples - 1) steps_per_sample), step n starting at t0 + n h.
template <std::size_t D, class F>
std::vector<std::array<double, D>> rk4_reference_samples(const F& f, double t0, double t1,
                                                         const std::array<double, D>& y0,
                                                         int samples, int steps_per_sample) {
  const double h = (t1 - t0) / (samples - 1) / steps_per_sample;
  std::vector<std::array<double, D>> out(static_cast<std::size_t>(samples));
  std::array<double, D> y = y0;
  out[0] = y;
  for (int k = 1; k < samples; ++k) {
    for (int j = 0; j < steps_per_sample; ++j)
      y = rk4_reference_step(f, t0 + ((k - 1) * steps_per_sample + j) * h, y, h);
    out[static_cast<std::size_t>(k)] = y;
  }
  return out;
}

// One system at a model's default parameters and initial condition, run on the CPU engine with
// its trajectory recorded in slot 0.
struct SystemRun {
  const ModelInfo* info = nullptr;  // null: the model is not in the catalogue and nothing ran
  EnsembleSettings settings;
  BatchResults results;
  std::vector<double> times;  // the sample times
};

// Runs `model` with `method`, rtol = atol = tol and `samples` recorded samples, after
// `adjust(EnsembleSettings&)` has changed whatever else the test needs (end time, gains).
template <class Adjust>
SystemRun run_default_system(const char* model, Method method, double tol, int samples,
                             const Adjust& adjust) {
  SystemRun run;
  run.info = find_model(model);
  if (run.info == nullptr) return run;
  run.settings = EnsembleSettings::for_model(*run.info);
  run.settings.method = method;
  run.settings.rtol = run.settings.atol = tol;
  run.settings.samples = samples;
  adjust(run.settings);
  run_ensemble_cpu(Batch::defaults(*run.info, 1), run.settings, run.results, {0});
  run.times = sample_times(run.settings);
  return run;
}

inline SystemRun run_default_system(const char* model, Method method, double tol, int samples) {
  return run_default_system(model, method, tol, samples, [](EnsembleSettings&) {});
}

// Success when the model exists and its system finished with status 0 (ok) exactly at the end
// time of the run: use as ASSERT_TRUE(ran_to_end(run)).
inline ::testing::AssertionResult ran_to_end(const SystemRun& run) {
  if (run.info == nullptr) return ::testing::AssertionFailure() << "no such model";
  const BatchResults& r = run.results;
  if (r.status.empty() || r.t.empty()) return ::testing::AssertionFailure() << "no results";
  if (r.status[0] != 0)
    return ::testing::AssertionFailure()
           << run.info->name << ": status " << r.status[0] << " ("
           << status_name(static_cast<Status>(r.status[0])) << ") at t = " << r.t[0];
  if (r.t[0] != run.settings.t_end)
    return ::testing::AssertionFailure() << run.info->name << ": stopped at t = " << r.t[0]
                                         << ", end time " << run.settings.t_end;
  return ::testing::AssertionSuccess();
}

// Success when (q, qd) at time t lies on the constraint set of Model with parameters p: on every
// row |phi| (|psi| for a velocity row) <= value_tol and |phid| <= rate_tol, the rows of
// constraint_form (the test of EXPECT_NEAR(value, 0.0, tol) row by row; NaN fails).
template <class Model>
::testing::AssertionResult on_constraint_set(const Vec<double, Model::kN>& q,
                                             const Vec<double, Model::kN>& qd, double t,
                                             const double* p, double value_tol, double rate_tol) {
  const auto f = constraint_form<Model, double>(Model{}, q, qd, t, p);
  bool ok = true;
  ::testing::Message off;
  for (int r = 0; r < kRows<Model>; ++r) {
    if (!(std::abs(f.value[r]) <= value_tol)) {
      ok = false;
      off << " value[" << r << "] = " << f.value[r] << " (tolerance " << value_tol << ")";
    }
    if (!(std::abs(f.rate[r]) <= rate_tol)) {
      ok = false;
      off << " rate[" << r << "] = " << f.rate[r] << " (tolerance " << rate_tol << ")";
    }
  }
  if (ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << Model::kName << " off the constraint set:" << off;
}

// Seeded uniform random numbers in [lo, hi) (std::mt19937, std::uniform_real_distribution):
// reproducible random states, u() draws the next number.
class UniformRandom {
 public:
  explicit UniformRandom(std::uint32_t seed, double lo = -1.0, double hi = 1.0)
      : rng_(seed), dist_(lo, hi) {}
  double operator()() { return dist_(rng_); }

 private:
  std::mt19937 rng_;
  std::uniform_real_distribution<double> dist_;
};

// The largest |residual row `row`| of trajectory slot `slot` over all its samples.
inline double max_abs_sampled_residual(const BatchResults& r, int row, int slot = 0) {
  double worst = 0;
  for (int k = 0; k < r.samples; ++k)
    worst = std::max(worst, std::abs(r.traj_residual_at(slot, k, row)));
  return worst;
}

// The largest relative deviation |value(k) - ref| / |ref| over k = 0 .. samples - 1 (e.g. the
// drift of a conserved energy along the samples of a run).
template <class F>
double max_rel_deviation(int samples, const F& value, double ref) {
  double worst = 0;
  for (int k = 0; k < samples; ++k)
    worst = std::max(worst, std::abs(value(k) - ref) / std::abs(ref));
  return worst;
}

// The per-system results of one system (no trajectories), for SystemKernel::run(in, s, 0, view()).
template <class Model>
struct OneSystemOutput {
  std::int32_t status = -1;
  double t = 0, q[Model::kN] = {}, qd[Model::kN] = {};
  double residual[kResidualSlots<Model> > 0 ? kResidualSlots<Model> : 1] = {};
  double force = 0, control_effort = 0, inconsistency = 0;
  std::int64_t steps = 0, rejected = 0;

  BatchOutputView view() {
    BatchOutputView out;
    out.count = 1;
    out.status = &status;
    out.t = &t;
    out.q = q;
    out.qd = qd;
    out.residual_max = residual;
    out.force_max = &force;
    out.control_effort_max = &control_effort;
    out.inconsistency_max = &inconsistency;
    out.steps = &steps;
    out.rejected = &rejected;
    return out;
  }
};

}  // namespace ukes::testing
