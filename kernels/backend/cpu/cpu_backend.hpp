// Multi-threaded CPU backend: the same SystemKernel the GPU runs, launched over a thread pool.
//
// Systems are handed out in fixed-size chunks from an atomic counter. Each system's result depends
// only on its own inputs, so the output is bit-identical whatever the thread count or schedule.
#pragma once

#include "kernels/ensemble/run_settings.hpp"

namespace ukes {

// threads <= 0: one per hardware thread. Once settings.cancel asks to stop, systems being
// integrated stop at their next poll and systems not reached are marked kCancelled.
template <class Model, class T>
void run_batch_cpu(const BatchInputView& in, const RunSettings<T>& settings,
                   const BatchOutputView& out, int threads);

int default_cpu_threads();

}  // namespace ukes
