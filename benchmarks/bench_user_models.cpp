// The same mechanism as a built-in model and as a user model (its definition in
// client/examples/models/, run through the compiled program): system-steps per second of each, RK4,
// 1 and 2 threads, measured in the same run. The ratio is the price of defining a model at run
// time instead of compiling it in (target: within 2x).
//
//   build/benchmarks/bench_user_models
// Measured figures: benchmarks/README.md, "User models".
#include <benchmark/benchmark.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "benchmarks/rk4_throughput.hpp"
#include "kernels/models/user/compiled_model.hpp"

namespace {

constexpr int kSystems = 4000;

std::shared_ptr<const ukes::ModelInfo> definition_of(const std::string& name) {
  std::ifstream in(std::string(UKES_SOURCE_DIR) + "/client/examples/models/" + name + ".json");
  std::stringstream text;
  text << in.rdbuf();
  return ukes::make_user_model_info(ukes::parse_user_model_text(text.str()));
}

void run(benchmark::State& state, const ukes::ModelInfo& model) {
  ukes::bench::measure_rk4_throughput(state, model, kSystems, static_cast<int>(state.range(0)));
}

void BM_BuiltIn(benchmark::State& state, const char* name) { run(state, *ukes::find_model(name)); }

void BM_UserModel(benchmark::State& state, const char* name) {
  const auto model = definition_of(name);
  state.counters["bucket"] = model->user->bucket;
  run(state, *model);
}

void Threads(benchmark::internal::Benchmark* b) {
  b->Arg(1)->Arg(2)->ArgName("threads")->Unit(benchmark::kMillisecond)->UseRealTime();
}

#define UKES_BENCH_PAIR(model)                                  \
  BENCHMARK_CAPTURE(BM_BuiltIn, model, #model)->Apply(Threads); \
  BENCHMARK_CAPTURE(BM_UserModel, model, #model)->Apply(Threads);
UKES_BENCH_PAIR(scara)
UKES_BENCH_PAIR(four_bar)
UKES_BENCH_PAIR(swarm)
#undef UKES_BENCH_PAIR

}  // namespace

BENCHMARK_MAIN();
