// Ensemble throughput of the CPU backend: system-steps per second (one RK4 step of one system =
// four UK right-hand sides) for representative catalogue models, by batch size and thread count.
//
//   build/benchmarks/bench_ensemble --benchmark_filter='scara|four_bar|duffing'
#include <benchmark/benchmark.h>

#include "benchmarks/rk4_throughput.hpp"

namespace {

void BM_EnsembleRk4(benchmark::State& state, const char* model) {
  const ukes::ModelInfo* info = ukes::find_model(model);
  if (!info) {
    state.SkipWithError("unknown model");
    return;
  }
  ukes::bench::measure_rk4_throughput(state, *info, static_cast<int>(state.range(0)),
                                      static_cast<int>(state.range(1)));
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
