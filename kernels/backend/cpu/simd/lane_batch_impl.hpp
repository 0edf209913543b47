// The CPU backend in SIMD lanes: W systems of a batch advance side by side, each on its own
// SystemKernel state machine (kernels/ensemble/system_kernel.hpp: steps, sampling, statistics,
// projection, events, all in double), while each right-hand side, model and UK solve alike, is
// evaluated for the W at once on an xsimd batch: the generic code of kernels/uk/ on a lane type
// (kernels/backend/cpu/simd/simd_lanes.hpp).
//
// Each state machine wants one evaluation at a time, so every iteration evaluates every lane,
// whatever the methods' step counts; a lane whose system ends takes its chunk's next system.
// Chunks are fixed ranges of the batch, so which systems share an evaluation depends on the batch
// alone, never on the threads. Each lane's numbers depend on its own inputs only: the lanes'
// arithmetic is lane-wise, and a shortcut taken only when all lanes agree (skipping an update that
// is zero) adds exact zeros in the others.
//
// A lane the vector solve cannot finish (a pseudoinverse QR cannot prove full rank, or a mass not
// positive definite) is evaluated again alone on the scalar path, which decides it as it would
// without lanes (the Jacobi SVD, the augmented mass).
//
// Included only by the per-model, per-instruction-set units CMake generates from
// kernels/backend/cpu/simd/instantiate_lanes.cpp.in.
#pragma once

#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "kernels/backend/cpu/cpu_backend.hpp"
#include "kernels/backend/cpu/simd/simd_lanes.hpp"
#include "kernels/ensemble/system_kernel.hpp"

namespace ukes {

template <class Model, class Lanes>
class LaneGroup {
 public:
  static constexpr int kWidth = LaneCount<Lanes>::value;
  static constexpr int kN = Model::kN;
  static constexpr int kM = kRows<Model>;
  static constexpr int kP = kParamCount<Model>;
  using Kernel = SystemKernel<Model, double>;
  using State = typename Kernel::State;

  LaneGroup(const BatchInputView& in, const RunSettings<double>& s, const BatchOutputView& out)
      : in_(in),
        s_(s),
        out_(out),
        model_(model_for<Model>(in)),
        dynamics_(settings_in<Lanes>(s.dynamics)) {}

  // Systems [begin, end), in lanes.
  template <Method kMethod>
  void run(int begin, int end) {
    next_ = begin;
    end_ = end;
    for (int k = 0; k < kWidth; ++k) refill(k);
    while (any_active()) step<kMethod>();
  }

 private:
  bool any_active() const {
    for (int k = 0; k < kWidth; ++k)
      if (system_[k] >= 0) return true;
    return false;
  }

  // Lane k takes the chunk's next system, or goes idle (its inputs then repeat an active lane's).
  void refill(int k) {
    system_[k] = -1;
    while (next_ < end_) {
      const int i = next_++;
      if (stop_requested(s_.cancel)) {
        out_.status[i] = static_cast<std::int32_t>(Status::kCancelled);
        continue;
      }
      sys_[k].begin(in_, s_, i, out_, true);
      system_[k] = i;
      const double* p = sys_[k].params();
      for (int j = 0; j < kP; ++j) p_[j][k] = p[j];
      for (int j = 0; j < kP; ++j) p_lanes_[j] = Lanes::load_aligned(p_[j]);
      return;
    }
  }

  template <Method kMethod>
  void step() {
    const Kernel* source[kWidth];
    gather(source);
    Vec<Lanes, kN> q, qd;
    for (int j = 0; j < kN; ++j) {
      q[j] = assemble([&](int k) { return source[k]->request_state()[j]; });
      qd[j] = assemble([&](int k) { return source[k]->request_state()[kN + j]; });
    }
    const Lanes t = assemble([&](int k) { return source[k]->request_time(); });
    const DynamicsEval<Model, Lanes> e =
        evaluate_dynamics<Model, Lanes>(model_, q, qd, t, p_lanes_, dynamics_);
    scatter(e);
    for (int k = 0; k < kWidth; ++k) {
      if (system_[k] < 0) continue;
      Kernel& sys = sys_[k];
      State dx;
      if (e.mass_ok && !unsolved_[k]) {
        typename Kernel::Observation ob;
        for (int r = 0; r < kM; ++r) {
          ob.value[r] = value_[r][k];
          ob.rate[r] = rate_[r][k];
        }
        const State& y = sys.request_state();
        for (int j = 0; j < kN; ++j) {
          ob.Qc[j] = qc_[j][k];
          dx[j] = y[kN + j];
          dx[kN + j] = qdd_[j][k];
        }
        ob.control = Vec<double, kN>::zero();
        ob.inconsistency = inconsistency_[k];
        ob.rhs_norm = rhs_norm_[k];
        ob.conditioning = conditioning_[k];
        ob.mass_ok = true;
        sys.template take<kMethod, true, true>(s_, out_, dx, ob);
      } else {
        Vec<double, kN> qk, qdk;
        Kernel::split(sys.request_state(), qk, qdk);
        const DynamicsEval<Model, double> es = sys.template evaluate<true>(s_, qk, qdk);
        Kernel::derivative_of(sys.request_state(), es, dx);
        sys.template take<kMethod, true, true>(s_, out_, dx, Kernel::observation_of(es));
      }
      if (!sys.active()) refill(k);
    }
  }

  // Whose state each lane evaluates: its own system's, or for an idle lane the first active
  // one's, parameters too. The idle lane's numbers are read by nobody, but a mass it found not
  // definite would send every lane to the scalar path.
  void gather(const Kernel* (&source)[kWidth]) {
    int first = 0;
    while (system_[first] < 0) ++first;
    for (int k = 0; k < kWidth; ++k) source[k] = &sys_[system_[k] >= 0 ? k : first];
    if (!any_idle()) return;
    for (int k = 0; k < kWidth; ++k)
      if (system_[k] < 0)
        for (int j = 0; j < kP; ++j) p_[j][k] = p_[j][first];
    for (int j = 0; j < kP; ++j) p_lanes_[j] = Lanes::load_aligned(p_[j]);
  }

  // The W values f(0), ..., f(W - 1) as one vector, put together in registers: stored to an array
  // one by one and loaded as a vector, they stall on store forwarding (a quarter of this loop's own
  // time on duffing, by perf).
  template <class F>
  static Lanes assemble(F&& f) {
    return assemble(f, std::make_index_sequence<kWidth>{});
  }
  template <class F, std::size_t... k>
  static Lanes assemble(F& f, std::index_sequence<k...>) {
    return Lanes{f(static_cast<int>(k))...};
  }

  bool any_idle() const {
    for (int k = 0; k < kWidth; ++k)
      if (system_[k] < 0) return true;
    return false;
  }

  void scatter(const DynamicsEval<Model, Lanes>& e) {
    for (int j = 0; j < kN; ++j) {
      e.qdd[j].store_aligned(qdd_[j]);
      e.Qc[j].store_aligned(qc_[j]);
    }
    for (int r = 0; r < kM; ++r) {
      e.form.value[r].store_aligned(value_[r]);
      e.form.rate[r].store_aligned(rate_[r]);
    }
    e.inconsistency.store_aligned(inconsistency_);
    e.rhs_norm.store_aligned(rhs_norm_);
    e.conditioning.store_aligned(conditioning_);
    e.unsolved.store_unaligned(unsolved_);
  }

  static constexpr std::size_t kAlign = Lanes::arch_type::alignment();
  const BatchInputView& in_;
  const RunSettings<double>& s_;
  const BatchOutputView& out_;
  const Model model_;
  const DynamicsSettings<Lanes> dynamics_;
  int next_ = 0, end_ = 0;
  Kernel sys_[kWidth];
  int system_[kWidth];  // the lane's system, -1 when idle
  Lanes p_lanes_[kP > 0 ? kP : 1];
  alignas(kAlign) double p_[kP > 0 ? kP : 1][kWidth];
  alignas(kAlign) double qdd_[kN][kWidth];
  alignas(kAlign) double qc_[kN][kWidth];
  alignas(kAlign) double value_[kM > 0 ? kM : 1][kWidth];
  alignas(kAlign) double rate_[kM > 0 ? kM : 1][kWidth];
  alignas(kAlign) double inconsistency_[kWidth];
  alignas(kAlign) double rhs_norm_[kWidth];
  alignas(kAlign) double conditioning_[kWidth];
  bool unsolved_[kWidth];
};

// The lane type of each instruction set.
template <CpuIsa kIsa>
struct LaneArch;
template <>
struct LaneArch<CpuIsa::kSse2> {
  using type = xsimd::sse2;
};
template <>
struct LaneArch<CpuIsa::kAvx2> {
  using type = xsimd::fma3<xsimd::avx2>;
};
template <>
struct LaneArch<CpuIsa::kAvx512> {
  using type = xsimd::avx512f;
};

template <class Model, CpuIsa kIsa>
void run_batch_lanes(const BatchInputView& in, const RunSettings<double>& settings,
                     const BatchOutputView& out, int threads) {
  using Lanes = xsimd::batch<double, typename LaneArch<kIsa>::type>;
  // Large enough that a chunk's last lanes seldom idle long (adaptive step counts differ), small
  // enough to balance the threads.
  constexpr int kChunk = 64;
  const int count = in.count;
  threads = std::max(1, std::min(threads, (count + kChunk - 1) / kChunk));  // run_batch_cpu's
  std::atomic<int> next{0};
  auto worker = [&] {
    // On the heap: a group of a large model holds tens of kilobytes.
    auto group = std::make_unique<LaneGroup<Model, Lanes>>(in, settings, out);
    for (;;) {
      const int begin = next.fetch_add(kChunk);
      if (begin >= count) return;
      const int end = std::min(count, begin + kChunk);
      if (settings.method == Method::kRk4) {
        group->template run<Method::kRk4>(begin, end);
      } else {
        group->template run<Method::kDopri5>(begin, end);
      }
    }
  };
  if (threads == 1) {
    worker();
    return;
  }
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  for (int k = 1; k < threads; ++k) pool.emplace_back(worker);
  worker();
  for (auto& th : pool) th.join();
}

}  // namespace ukes
