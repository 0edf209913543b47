// The FP64 operations a second this CPU's lanes can do at most, measured: the denominator of a
// model's share of peak (benchmarks/compare.py). Independent chains of multiply-adds in the lane
// vectors the process runs (the widest this CPU has, or the one UKES_CPU_ISA names;
// kernels/backend/cpu/cpu_isa.hpp), compiled with the lanes' options in their library, on T
// threads at once, best of five. Reckoned from /proc/cpuinfo instead, the peak takes the clock
// listed there, while a loaded core runs at its boost clock: the 2-core EPYC VM of
// benchmarks/README.md lists 2.45 GHz and does 16 operations a cycle at about 2.85.
//
// An operation is what op_count counts (benchmarks/perf_model/op_count.cpp): a fused
// multiply-add is two.
//
//   build/benchmarks/fp64_peak [--threads T]
//
// prints one JSON line: {"fp64_peak_ops_per_s": ..., "threads": T, "isa": "avx2", ...}.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "kernels/backend/cpu/simd/lane_functions.hpp"

namespace {

using ukes::CpuIsa;

volatile double g_result;  // the chains' values, so that they are computed

// Operations done by one thread's `rounds` rounds of chains in `isa`'s lanes.
double chains(CpuIsa isa, long rounds) {
  double result = 0, ops = 0;
  ukes::with_lane_isa(isa,
                      [&]<CpuIsa kIsa>() { ops = ukes::lane_fma_chains<kIsa>(rounds, result); });
  g_result = g_result + result;
  return ops;
}

struct Timing {
  double ops, seconds;
};

// `threads` threads running `rounds` rounds each, started together.
Timing timed(CpuIsa isa, int threads, long rounds) {
  std::vector<double> ops(static_cast<std::size_t>(threads));
  std::vector<std::thread> pool;
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t t = 0; t < ops.size(); ++t) {
    pool.emplace_back([&, t] { ops[t] = chains(isa, rounds); });
  }
  for (auto& th : pool) th.join();
  Timing timing{0, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()};
  for (const double o : ops) timing.ops += o;
  return timing;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = static_cast<int>(std::thread::hardware_concurrency());
  for (int k = 1; k < argc; ++k) {
    if (std::strcmp(argv[k], "--threads") == 0 && k + 1 < argc) {
      threads = std::atoi(argv[++k]);
    } else {
      std::fprintf(stderr, "usage: fp64_peak [--threads T]\n");
      return 2;
    }
  }
  if (threads < 1) {
    std::fprintf(stderr, "fp64_peak: --threads must be at least 1\n");
    return 2;
  }
  const CpuIsa isa = ukes::cpu_isa();
  if (isa == CpuIsa::kScalar) {
    std::fprintf(stderr, "fp64_peak: the process runs no lanes (UKES_CPU_ISA=scalar)\n");
    return 2;
  }
  long rounds = 1 << 16;
  while (timed(isa, 1, rounds).seconds < 0.1) rounds *= 2;
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    const Timing t = timed(isa, threads, rounds);
    best = std::max(best, t.ops / t.seconds);
  }
  // The clock at which a core with two multiply-add units, each taking a vector a cycle, would do
  // what was measured (an SSE2 core multiplies and adds on units of their own).
  const int per_cycle = 4 * ukes::cpu_isa_lanes(isa);
  std::printf(
      "{\"fp64_peak_ops_per_s\": %.6g, \"threads\": %d, \"isa\": \"%s\", "
      "\"ops_per_cycle_per_core\": %d, \"effective_ghz\": %.3f}\n",
      best, threads, ukes::cpu_isa_name(isa), per_cycle, best / threads / per_cycle / 1e9);
  return 0;
}
