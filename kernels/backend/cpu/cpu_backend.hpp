// Multi-threaded CPU backend: the same SystemKernel the GPU runs, launched over a thread pool.
//
// Systems are handed out in fixed-size chunks from an atomic counter. Each system's result depends
// only on its own inputs, so the output is bit-identical whatever the thread count or schedule.
// FP64 runs take SIMD lanes, several systems per core in lockstep, where the CPU has them
// (kernels/backend/cpu/simd/lane_batch_impl.hpp, docs/CPU_LANES.md).
#pragma once

#include <type_traits>

#include "kernels/backend/cpu/cpu_isa.hpp"
#include "kernels/ensemble/run_settings.hpp"

namespace ukes {

// threads <= 0: one per hardware thread. Once settings.cancel asks to stop, systems being
// integrated stop at their next poll and systems not reached are marked kCancelled. `isa`: the
// instruction set of the lanes where the run takes them (lanes_take; kScalar: never), the
// process's choice unless a test asks for another (kernels/backend/cpu/cpu_isa.hpp).
template <class Model, class T>
void run_batch_cpu(const BatchInputView& in, const RunSettings<T>& settings,
                   const BatchOutputView& out, int threads, CpuIsa isa = cpu_isa());

// Whether a run takes the lanes: FP64 RK4 or DOPRI5 without a controller (controlled and stiff
// runs, and FP32, take the per-system path).
template <class T>
bool lanes_take(const RunSettings<T>& s) {
  if constexpr (std::is_same_v<T, double>) {
    return !s.control.active && (s.method == Method::kRk4 || s.method == Method::kDopri5);
  } else {
    (void)s;
    return false;
  }
}

// The lane backend for one model and instruction set: defined in
// kernels/backend/cpu/simd/lane_batch_impl.hpp, built per variant, the only symbols its library
// exports (kernels/backend/cpu/simd/exports.map).
template <class Model, CpuIsa kIsa>
void run_batch_lanes(const BatchInputView& in, const RunSettings<double>& settings,
                     const BatchOutputView& out, int threads);

int default_cpu_threads();

}  // namespace ukes
