// The staged path's executor in the host device API: the per-system steps and the factorizations
// of kernels/staged/cpu_executor.hpp over the API's buffers, with what cuSOLVER is free to do and
// the staged path must therefore survive made visible:
//  - potrfBatched leaves a matrix it could not factor partly overwritten: here it is all NaN;
//  - gesvdjBatched sorts the singular values in descending order and may return any sign of a
//    pair of singular vectors: here they are sorted and every other pair is negated;
//  - the columns of U or V past min(m, n) are some orthonormal completion: here they are NaN, as
//    the combine step must never read them.
#pragma once

#include <limits>
#include <utility>

#include "kernels/backend/device/staged_device_buffers.hpp"
#include "kernels/backend/host_gpu/host_api.hpp"
#include "kernels/staged/cpu_executor.hpp"

namespace ukes {
namespace host_gpu {

// As cuSOLVER's conventions above, applied to system i's factors.
template <class Model, class T>
void as_cusolver_leaves_them(const StagedWorkspace<Model, T>& ws, int i) {
  constexpr int kN = Model::kN;
  constexpr int kM = kRows<Model>;
  constexpr int kS = StagedWorkspace<Model, T>::kS;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  T* s = ws.s_of(i);
  T* u = ws.u_of(i);              // column k: u[k * kM + r]
  T* v = ws.v_of(i);              // column k: v[k * kN + c]
  for (int a = 0; a < kS; ++a) {  // selection sort, descending, columns moved with their value
    int largest = a;
    for (int b = a + 1; b < kS; ++b)
      if (s[b] > s[largest]) largest = b;
    if (largest == a) continue;
    std::swap(s[a], s[largest]);
    for (int r = 0; r < kM; ++r) std::swap(u[a * kM + r], u[largest * kM + r]);
    for (int c = 0; c < kN; ++c) std::swap(v[a * kN + c], v[largest * kN + c]);
  }
  for (int k = 1; k < kS; k += 2) {
    for (int r = 0; r < kM; ++r) u[k * kM + r] = -u[k * kM + r];
    for (int c = 0; c < kN; ++c) v[k * kN + c] = -v[k * kN + c];
  }
  for (int k = kS; k < kM; ++k)
    for (int r = 0; r < kM; ++r) u[k * kM + r] = nan;
  for (int k = kS; k < kN; ++k)
    for (int c = 0; c < kN; ++c) v[k * kN + c] = nan;
}

template <class Model, class T>
class StagedExecutor {
  using Workspace = StagedWorkspace<Model, T>;

 public:
  explicit StagedExecutor(int count) : buffers_(count) {
    active_.resize(1);
    ws_ = buffers_.view(count, active_.data());
  }

  const Workspace& workspace() const { return ws_; }

  template <class F>
  void for_each_system(const F& f) {
    parallel_for(ws_.count, f);
  }

  void factor_mass() {
    parallel_for(ws_.count, [&](int i) {
      factor_mass_of(ws_, i);
      if (ws_.mass_info[i] == 0) return;
      T* m = ws_.mass_of(i);
      for (int k = 0; k < Model::kN * Model::kN; ++k) m[k] = std::numeric_limits<T>::quiet_NaN();
    });
  }

  void factor_constraints() {
    if constexpr (kRows < Model >> 0) {
      parallel_for(ws_.count, [&](int i) {
        factor_constraints_of(ws_, i);
        as_cusolver_leaves_them(ws_, i);
      });
    }
  }

  void clear_active() { *ws_.active = 0; }
  int active() const { return *ws_.active; }

 private:
  StagedDeviceBuffers<HostApi, Model, T> buffers_;
  Buffer<int> active_;
  Workspace ws_;
};

}  // namespace host_gpu

// Runs after the work queued on `stream` (the chunk's inputs), on the calling thread, as the
// CUDA staged path blocks its caller too.
template <class Model, class T>
void HostApi::run_staged(const BatchInputView& in, const RunSettings<T>& s,
                         const BatchOutputView& out, Stream& stream, Solver&,
                         const CancelFlag* cancel) {
  if (in.count <= 0) return;
  stream.synchronize();
  host_gpu::StagedExecutor<Model, T> executor(in.count);
  ukes::run_staged<Model, T>(executor, in, s, out, cancel);
}

}  // namespace ukes
