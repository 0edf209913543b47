// Micro-benchmarks of the numerical core, one piece at a time (FP64, one thread):
//   - the pseudoinverse (factor + one apply) of a few sizes, square, wide and tall: as the UK
//     solve takes it (QR for these well-conditioned matrices) and forced through the Jacobi SVD
//     (the route of rank-deficient and nearly singular matrices);
//   - one UK right-hand side (evaluate_dynamics: mass, forces, constraint form by AD, Cholesky,
//     pseudoinverse) per catalogue model, at its default state;
//   - one RK4 step (four evaluations of x' = (qd, qdd)) per model.
// An ensemble run costs per system-step about the RK4 step here plus the kernel's bookkeeping.
//
//   build/benchmarks/bench_micro --benchmark_filter='Rk4Step/scara'
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>

#include "kernels/integrators/rk4.hpp"
#include "kernels/linalg/pinv.hpp"
#include "kernels/models/catalogue.hpp"
#include "kernels/uk/dynamics.hpp"

namespace {

// A deterministic, well-conditioned matrix: entries from a 64-bit LCG in [-1, 1), diagonal
// shifted so that square ones are far from singular.
template <int R, int C>
ukes::Mat<double, R, C> test_matrix() {
  std::uint64_t state = 0x9e3779b97f4a7c15ULL;
  ukes::Mat<double, R, C> B;
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < C; ++c) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      B(r, c) = static_cast<double>(state >> 11) * 0x1.0p-52 - 1.0;
    }
    if (r < C) B(r, r) += 2.0;
  }
  return B;
}

template <int R, int C>
void BM_PseudoInverse(benchmark::State& state) {
  const ukes::Mat<double, R, C> B = test_matrix<R, C>();
  auto r = ukes::Vec<double, R>::zero();
  for (int i = 0; i < R; ++i) r[i] = 1.0 + i;
  for (auto _ : state) {
    benchmark::DoNotOptimize(&B);
    const ukes::PseudoInverse<double, R, C> P(B);
    const ukes::Vec<double, C> x = P.apply(r);
    benchmark::DoNotOptimize(x);
  }
}
BENCHMARK(BM_PseudoInverse<1, 2>)->Name("PseudoInverse/1x2");
BENCHMARK(BM_PseudoInverse<4, 4>)->Name("PseudoInverse/4x4");
BENCHMARK(BM_PseudoInverse<8, 9>)->Name("PseudoInverse/8x9");
BENCHMARK(BM_PseudoInverse<9, 8>)->Name("PseudoInverse/9x8");
BENCHMARK(BM_PseudoInverse<10, 10>)->Name("PseudoInverse/10x10");

template <int R, int C>
void BM_PseudoInverseJacobi(benchmark::State& state) {
  using P = ukes::PseudoInverse<double, R, C>;
  const ukes::Mat<double, R, C> B = test_matrix<R, C>();
  auto r = ukes::Vec<double, R>::zero();
  for (int i = 0; i < R; ++i) r[i] = 1.0 + i;
  for (auto _ : state) {
    benchmark::DoNotOptimize(&B);
    ukes::Mat<double, P::XR, P::XC> X;
    for (int i = 0; i < R; ++i)
      for (int j = 0; j < C; ++j) (P::kTransposed ? X(j, i) : X(i, j)) = B(i, j);
    const P Pj(typename P::Factors(ukes::JacobiSvd<double, P::XR, P::XC>(X)),
               ukes::default_rank_rtol<double>(R, C));
    const ukes::Vec<double, C> x = Pj.apply(r);
    benchmark::DoNotOptimize(x);
  }
}
BENCHMARK(BM_PseudoInverseJacobi<4, 4>)->Name("PseudoInverseJacobi/4x4");
BENCHMARK(BM_PseudoInverseJacobi<8, 9>)->Name("PseudoInverseJacobi/8x9");
BENCHMARK(BM_PseudoInverseJacobi<10, 10>)->Name("PseudoInverseJacobi/10x10");

// The model's default state, parameters and gains: what one system of an ensemble sees.
template <class Model>
struct DefaultSystem {
  double p[ukes::kParamCount<Model>];
  ukes::Vec<double, Model::kN> q, qd;
  ukes::DynamicsSettings<double> settings;
  DefaultSystem() {
    for (int k = 0; k < ukes::kParamCount<Model>; ++k) p[k] = Model::kParams[k].value;
    Model::initial_state(p, q, qd);
    settings.alpha = Model::kGains.alpha;
    settings.beta = Model::kGains.beta;
  }
};

template <class Model>
void BM_UkAcceleration(benchmark::State& state) {
  const DefaultSystem<Model> sys;
  for (auto _ : state) {
    benchmark::DoNotOptimize(&sys);
    const auto e =
        ukes::evaluate_dynamics<Model, double>(Model{}, sys.q, sys.qd, 0.1, sys.p, sys.settings);
    benchmark::DoNotOptimize(e.qdd);
  }
}

// x' = (qd, qdd) by evaluate_dynamics: the ensemble kernel's right-hand side without its
// bookkeeping (statistics, status), so that this stays independent of the kernel's internals.
template <class Model>
struct FirstOrderRhs {
  static constexpr int kN = Model::kN;
  const DefaultSystem<Model>& sys;
  void operator()(double t, const ukes::Vec<double, 2 * kN>& x, ukes::Vec<double, 2 * kN>& dx) {
    ukes::Vec<double, kN> q, qd;
    for (int j = 0; j < kN; ++j) {
      q[j] = x[j];
      qd[j] = x[kN + j];
    }
    const auto e = ukes::evaluate_dynamics<Model, double>(Model{}, q, qd, t, sys.p, sys.settings);
    for (int j = 0; j < kN; ++j) {
      dx[j] = qd[j];
      dx[kN + j] = e.qdd[j];
    }
  }
};

template <class Model>
void BM_Rk4Step(benchmark::State& state) {
  constexpr int n = Model::kN;
  const DefaultSystem<Model> sys;
  ukes::Vec<double, 2 * n> x, k1;
  for (int j = 0; j < n; ++j) {
    x[j] = sys.q[j];
    x[n + j] = sys.qd[j];
  }
  FirstOrderRhs<Model> f{sys};
  f(0.0, x, k1);
  for (auto _ : state) {
    benchmark::DoNotOptimize(&x);
    const ukes::Vec<double, 2 * n> y = ukes::rk4_step(f, 0.0, x, k1, 1e-3);
    benchmark::DoNotOptimize(y);
  }
}

// Registered for every catalogue model, named Benchmark/<model>.
const bool kRegistered = [] {
  ukes::for_each_model([]<class Model>() {
    // Appended rather than concatenated: GCC 12 flags "literal" + string with -Wrestrict.
    std::string uk = "UkAcceleration/", step = "Rk4Step/";
    uk += Model::kName;
    step += Model::kName;
    benchmark::RegisterBenchmark(uk.c_str(), BM_UkAcceleration<Model>);
    benchmark::RegisterBenchmark(step.c_str(), BM_Rk4Step<Model>);
  });
  return true;
}();

}  // namespace

BENCHMARK_MAIN();
