// The measurement both ensemble benchmarks make: `count` systems of a model at its defaults, 200
// RK4 steps each on `threads` CPU threads, reported as system-steps per second (one RK4 step of
// one system = four UK right-hand sides).
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>
#include <numeric>

#include "kernels/ensemble/ensemble.hpp"

namespace ukes::bench {

inline void measure_rk4_throughput(benchmark::State& state, const ModelInfo& model, int count,
                                   int threads) {
  constexpr double kDt = 1e-3;
  constexpr int kStepsPerSystem = 200;
  const Batch batch = Batch::defaults(model, count);
  EnsembleSettings s = EnsembleSettings::for_model(model);
  s.method = Method::kRk4;
  s.dt = kDt;
  s.t_end = s.t0 + kDt * kStepsPerSystem;
  s.samples = 2;
  s.threads = threads;
  BatchResults r;
  std::int64_t system_steps = 0;
  for (auto _ : state) {
    run_ensemble_cpu(batch, s, r);
    system_steps += std::accumulate(r.steps.begin(), r.steps.end(), std::int64_t{0});
    benchmark::DoNotOptimize(r.q.data());
  }
  state.counters["system_steps_per_s"] =
      benchmark::Counter(static_cast<double>(system_steps), benchmark::Counter::kIsRate);
  state.counters["threads"] = threads;
}

}  // namespace ukes::bench
