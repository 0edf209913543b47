// Definition of run_batch_cpu, included only by the per-model instantiation units that CMake
// generates (one translation unit per model keeps builds parallel and incremental).
#pragma once

#include <algorithm>
#include <atomic>
#include <thread>
#include <type_traits>
#include <vector>

#include "kernels/backend/cpu/cpu_backend.hpp"
#include "kernels/backend/cpu/jit/cpu_jit.hpp"
#include "kernels/ensemble/stiff_system.hpp"
#include "kernels/ensemble/system_kernel.hpp"
#include "kernels/uk/servo_derivatives.hpp"

namespace ukes {

// Whether a model's systems share lanes (kernels/backend/cpu/simd/): those CMake builds lanes for,
// the built-ins and the user-model buckets, whose units (instantiate_model.cpp.in) say so. A model
// of a test's own runs per system.
template <class Model>
inline constexpr bool kLaneModel = false;

// The per-system path: each system on its own SystemKernel (StiffSystem for the stiff method),
// over `threads` (> 0) threads.
template <class Model, class T>
void run_systems_cpu(const BatchInputView& in, const RunSettings<T>& settings,
                     const BatchOutputView& out, int threads) {
  constexpr int kChunk = 16;
  const int count = in.count;
  threads = std::max(1, std::min(threads, (count + kChunk - 1) / kChunk));
  std::atomic<int> next{0};
  auto worker = [&] {
    for (;;) {
      const int begin = next.fetch_add(kChunk);
      if (begin >= count) return;
      const int end = std::min(count, begin + kChunk);
      for (int i = begin; i < end; ++i) {
        if (stop_requested(settings.cancel)) {
          out.status[i] = static_cast<std::int32_t>(Status::kCancelled);
        } else if (settings.method == Method::kRosenbrock) {
          StiffSystem<Model, T>::template run<true, true>(in, settings, i, out);
        } else {
          // Servo rows of a higher relative degree are followed for every model with series;
          // events are located when the run has any.
          SystemKernel<Model, T>::template run<kTakesSeries<Model, T>, true>(in, settings, i, out);
        }
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

template <class Model, class T>
void run_batch_cpu(const BatchInputView& in, const RunSettings<T>& settings,
                   const BatchOutputView& out, int threads, CpuIsa isa) {
  if (threads <= 0) threads = default_cpu_threads();
  // An instruction set this CPU lacks would stop the process; its systems run per system.
  const bool lanes =
      kLaneModel<Model> && isa != CpuIsa::kScalar && lanes_take(settings) && cpu_supports(isa);
  if constexpr (cpu_jit::kInterpretedBucket < Model >> 0) {
    // A user model's own code, compiled for it where it can be (cpu_jit.hpp): its lanes, or its
    // per-system path.
    if (in.program != nullptr) {
      const cpu_jit::CompiledRun<T> compiled =
          cpu_jit::compiled_run<T>(*in.program, cpu_jit::kInterpretedBucket<Model>,
                                   lanes ? isa : CpuIsa::kScalar, settings.cancel);
      if (compiled != nullptr) return compiled(in, settings, out, threads);
    }
  }
  if constexpr (std::is_same_v<T, double> && kLaneModel<Model>) {
    if (lanes) {
      switch (isa) {
#define UKES_CPU_ISA_CASE(Name, spelling, width)                                  \
  case CpuIsa::k##Name:                                                           \
    if constexpr (CpuIsa::k##Name != CpuIsa::kScalar) {                           \
      return run_batch_lanes<Model, CpuIsa::k##Name>(in, settings, out, threads); \
    }                                                                             \
    break;
        UKES_CPU_ISAS(UKES_CPU_ISA_CASE)
#undef UKES_CPU_ISA_CASE
      }
    }
  }
  run_systems_cpu<Model, T>(in, settings, out, threads);
}

}  // namespace ukes
