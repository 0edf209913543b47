// Ensemble throughput of the CPU backend: system-steps per second (one RK4 step of one system =
// four UK right-hand sides) for representative catalogue models, by batch size and thread count.
//
//   build/benchmarks/bench_ensemble --benchmark_filter='scara|four_bar|duffing'
#include <benchmark/benchmark.h>

#include <cstdint>
#include <numeric>

#include "kernels/ensemble/ensemble.hpp"

namespace {

constexpr double kDt = 1e-3;
constexpr int kStepsPerSystem = 200;

void BM_EnsembleRk4(benchmark::State& state, const char* model) {
  const ukes::ModelInfo* info = ukes::find_model(model);
  if (!info) {
    state.SkipWithError("unknown model");
    return;
  }
  const int count = static_cast<int>(state.range(0));
  const int threads = static_cast<int>(state.range(1));
  const ukes::Batch batch = ukes::Batch::defaults(*info, count);
  ukes::EnsembleSettings s = ukes::EnsembleSettings::for_model(*info);
  s.method = ukes::Method::kRk4;
  s.dt = kDt;
  s.t_end = s.t0 + kDt * kStepsPerSystem;
  s.samples = 2;
  s.threads = threads;
  ukes::BatchResults r;
  std::int64_t system_steps = 0;
  for (auto _ : state) {
    ukes::run_ensemble_cpu(batch, s, r);
    system_steps += std::accumulate(r.steps.begin(), r.steps.end(), std::int64_t{0});
    benchmark::DoNotOptimize(r.q.data());
  }
  state.counters["system_steps_per_s"] =
      benchmark::Counter(static_cast<double>(system_steps), benchmark::Counter::kIsRate);
  state.counters["threads"] = threads;
}

void Sizes(benchmark::internal::Benchmark* b) {
  for (int threads : {1, 2})
    for (int count : {1000, 10000}) b->Args({count, threads});
  b->ArgNames({"N", "threads"})->Unit(benchmark::kMillisecond)->UseRealTime();
}

BENCHMARK_CAPTURE(BM_EnsembleRk4, scara, "scara")->Apply(Sizes);
BENCHMARK_CAPTURE(BM_EnsembleRk4, four_bar, "four_bar")->Apply(Sizes);
BENCHMARK_CAPTURE(BM_EnsembleRk4, duffing, "duffing")->Apply(Sizes);
BENCHMARK_CAPTURE(BM_EnsembleRk4, swarm, "swarm")->Apply(Sizes);

}  // namespace

BENCHMARK_MAIN();
