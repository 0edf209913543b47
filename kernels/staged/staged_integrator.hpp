// The staged path's orchestration, written once for every executor: while any system is
// integrating, each iteration evaluates one right-hand side per active system with the mass
// matrices and the constraint matrices B = A L^-T factored as two batches. Systems are
// independent: each has its own step size and its own accept/reject (DOPRI5), and a system that
// has ended simply idles (identity M, zero B) until the batch is done.
//
// An executor provides the workspace and runs the steps:
//   const StagedWorkspace<Model, T>& workspace() const;
//   template <class F> void for_each_system(const F& f);  // f(i) for every system i
//   void factor_mass();         // batched Cholesky of ws.mass (lower), info in ws.mass_info
//   void factor_constraints();  // batched SVD B = U S V^T of ws.b into ws.u, ws.s, ws.v
//   void clear_active();        // *ws.active = 0
//   int active();               // *ws.active once every step issued before has run
// CPU: kernels/staged/cpu_executor.hpp; CUDA: kernels/backend/cuda/staged_executor.cuh; the host
// emulation of the GPU module: kernels/backend/host_gpu/host_staged_executor.hpp.
#pragma once

#include <atomic>

#include "kernels/staged/staged_stages.hpp"

namespace ukes {

// The per-system steps as function objects an executor runs over the batch (on a GPU one thread
// per system); they hold views, never memory.
template <class Model, class T>
struct BeginSystems {
  StagedWorkspace<Model, T> ws;
  BatchInputView in;
  RunSettings<T> s;
  BatchOutputView out;
  UKES_HD void operator()(int i) const { stage_begin(ws, in, s, out, i); }
};

template <class Model, class T>
struct AssembleStage {
  StagedWorkspace<Model, T> ws;
  RunSettings<T> s;
  UKES_HD void operator()(int i) const { stage_assemble(ws, s, i); }
};

template <class Model, class T>
struct ReduceStage {
  StagedWorkspace<Model, T> ws;
  UKES_HD void operator()(int i) const { stage_reduce(ws, i); }
};

template <class Model, class T>
struct CombineStage {
  StagedWorkspace<Model, T> ws;
  RunSettings<T> s;
  BatchOutputView out;
  UKES_HD void operator()(int i) const { stage_combine(ws, s, out, i); }
};

// Integrates the batch. Systems poll s.cancel themselves and end kCancelled; `cancel` is also
// checked here between iterations, where the executor's host loop returns early (systems not
// finished keep no results): the GPU's stop word is set only while the host waits for a chunk.
template <class Model, class T, class Executor>
void run_staged(Executor& ex, const BatchInputView& in, const RunSettings<T>& s,
                const BatchOutputView& out, const CancelFlag* cancel) {
  const StagedWorkspace<Model, T> ws = ex.workspace();
  ex.clear_active();
  ex.for_each_system(BeginSystems<Model, T>{ws, in, s, out});
  int active = ex.active();
  while (active > 0) {
    if (cancel != nullptr && cancel->requested()) return;
    ex.for_each_system(AssembleStage<Model, T>{ws, s});
    ex.factor_mass();
    ex.for_each_system(ReduceStage<Model, T>{ws});
    if constexpr (kRows < Model >> 0) ex.factor_constraints();
    ex.clear_active();
    ex.for_each_system(CombineStage<Model, T>{ws, s, out});
    active = ex.active();
  }
}

}  // namespace ukes
