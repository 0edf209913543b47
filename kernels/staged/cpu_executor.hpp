// The staged path on the CPU: plain loops over the systems, and the two batched factorizations
// done per system with kernels/linalg's Cholesky and Jacobi SVD, written into the same buffers
// and conventions cuSOLVER uses (B = U S V^T, column-major). It makes every step of the staged
// path, the conversion of library SVD factors included, testable without a GPU.
#pragma once

#include <atomic>
#include <vector>

#include "kernels/linalg/cholesky.hpp"
#include "kernels/linalg/pinv.hpp"
#include "kernels/staged/staged_integrator.hpp"

namespace ukes {

// As potrfBatched (lower) for system i: L over M's lower triangle, the strict upper one untouched;
// info 0 when factored.
template <class Model, class T>
void factor_mass_of(const StagedWorkspace<Model, T>& ws, int i) {
  constexpr int kN = Model::kN;
  T* buffer = ws.mass_of(i);
  Mat<T, kN, kN> L;
  const bool ok = cholesky(load_column_major<T, kN, kN>(buffer), L);
  ws.mass_info[i] = ok ? 0 : 1;
  if (!ok) return;
  for (int c = 0; c < kN; ++c)
    for (int r = c; r < kN; ++r) buffer[c * kN + r] = L(r, c);
}

// As gesvdjBatched for system i: B = U S V^T, from the Jacobi SVD of X = B (tall) or B^T (wide)
// that the fused path's PseudoInverse takes. Only the first min(m, n) columns of U and V are
// singular vectors; the rest are left zero (the combine step never reads them).
template <class Model, class T>
void factor_constraints_of(const StagedWorkspace<Model, T>& ws, int i) {
  constexpr int kN = Model::kN;
  constexpr int kM = kRows<Model>;
  if constexpr (kM > 0) {
    using Pinv = PseudoInverse<T, kM, kN>;
    const Mat<T, kM, kN> B = load_column_major<T, kM, kN>(ws.b_of(i));
    Mat<T, kM, kM> U = Mat<T, kM, kM>::zero();
    Mat<T, kN, kN> V = Mat<T, kN, kN>::zero();
    T* S = ws.s_of(i);
    if constexpr (Pinv::kTransposed) {
      // B^T = W V_x^T with W = V_B S: U_B = V_x, V_B's columns are W's normalized.
      const JacobiSvd<T, kN, kM> svd(transpose(B));
      U = svd.V;
      for (int k = 0; k < kM; ++k) {
        S[k] = svd.sigma[k];
        for (int c = 0; c < kN; ++c) V(c, k) = S[k] > T(0) ? svd.W(c, k) / S[k] : T(0);
      }
    } else {
      // B = W V^T with W = U_B S.
      const JacobiSvd<T, kM, kN> svd(B);
      V = svd.V;
      for (int k = 0; k < kN; ++k) {
        S[k] = svd.sigma[k];
        for (int r = 0; r < kM; ++r) U(r, k) = S[k] > T(0) ? svd.W(r, k) / S[k] : T(0);
      }
    }
    store_column_major(U, ws.u_of(i));
    store_column_major(V, ws.v_of(i));
  }
}

template <class Model, class T>
class CpuStagedExecutor {
  static constexpr int kN = Model::kN;
  static constexpr int kM = kRows<Model>;
  using Workspace = StagedWorkspace<Model, T>;

 public:
  explicit CpuStagedExecutor(int count)
      : systems_(static_cast<std::size_t>(count)),
        scratch_(static_cast<std::size_t>(count)),
        mass_(static_cast<std::size_t>(count) * kN * kN),
        mass_info_(static_cast<std::size_t>(count)),
        b_(static_cast<std::size_t>(count) * kM * kN),
        s_(static_cast<std::size_t>(count) * Workspace::kS),
        u_(static_cast<std::size_t>(count) * kM * kM),
        v_(static_cast<std::size_t>(count) * kN * kN) {
    ws_.count = count;
    ws_.systems = systems_.data();
    ws_.scratch = scratch_.data();
    ws_.mass = mass_.data();
    ws_.mass_info = mass_info_.data();
    ws_.b = b_.data();
    ws_.s = s_.data();
    ws_.u = u_.data();
    ws_.v = v_.data();
    ws_.active = &active_;
  }

  const Workspace& workspace() const { return ws_; }

  template <class F>
  void for_each_system(const F& f) {
    for (int i = 0; i < ws_.count; ++i) f(i);
  }

  void factor_mass() {
    for (int i = 0; i < ws_.count; ++i) factor_mass_of(ws_, i);
  }
  void factor_constraints() {
    for (int i = 0; i < ws_.count; ++i) factor_constraints_of(ws_, i);
  }

  void clear_active() { active_ = 0; }
  int active() const { return active_; }

 private:
  std::vector<SystemKernel<Model, T>> systems_;
  std::vector<StageScratch<Model, T>> scratch_;
  std::vector<T> mass_;
  std::vector<int> mass_info_;
  std::vector<T> b_, s_, u_, v_;
  int active_ = 0;
  Workspace ws_;
};

// The staged path over host buffers (the views of batch_layout.hpp).
template <class Model, class T>
void run_staged_cpu(const BatchInputView& in, const RunSettings<T>& s, const BatchOutputView& out,
                    const CancelFlag* cancel = nullptr) {
  if (in.count <= 0) return;
  CpuStagedExecutor<Model, T> ex(in.count);
  run_staged<Model, T>(ex, in, s, out, cancel);
}

}  // namespace ukes
