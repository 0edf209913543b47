// The per-system steps of one staged right-hand-side evaluation, around the two batched
// factorizations (an executor runs each step over all systems,
// kernels/staged/staged_integrator.hpp):
//
//   assemble  M, Q, A, b at the system's requested state     -> batched Cholesky M = L L^T
//   reduce    a = M^-1 Q, B = A L^-T                          -> batched SVD B = U S V^T
//   combine   B^+ from (U, S, V), the UK solve's finish, then the integrator takes the result
//
// The batched matrices live in the layouts cuSOLVER wants (column-major, one matrix after the
// other), whichever executor factors them: both executors run exactly these steps on exactly
// these layouts, and differ only in the two factorizations.
#pragma once

#include <atomic>
#include <cstddef>

#include "kernels/ensemble/system_kernel.hpp"
#include "kernels/uk/dynamics.hpp"

namespace ukes {

// What one system keeps from assemble to combine.
template <class Model, class T>
struct StageScratch {
  ConstraintForm<Model, T> form;
  Vec<T, kRows<Model>> bs;  // stabilized right-hand side
  Vec<T, Model::kN> a;      // Q after assemble, a = M^-1 Q after reduce
  bool mass_ok;             // M's lower triangle finite (assemble), then factored (reduce)
  bool b_finite;            // B = A L^-T finite: its SVD is the batched one
};

// The batch's buffers (device memory for the CUDA executor, host memory for the CPU one).
template <class Model, class T>
struct StagedWorkspace {
  static constexpr int kN = Model::kN;
  static constexpr int kM = kRows<Model>;
  static constexpr int kS = kM < kN ? kM : kN;  // singular values per system

  int count = 0;
  SystemKernel<Model, T>* systems = nullptr;  // [count]
  StageScratch<Model, T>* scratch = nullptr;  // [count]
  T* mass = nullptr;         // [count][n x n], column-major: M in, its factor L (lower) out
  int* mass_info = nullptr;  // [count]: 0 when M was factored (potrfBatched's info)
  T* b = nullptr;            // [count][m x n], column-major, lda = m: B, the SVD's input
  T* s = nullptr;            // [count][min(m, n)]
  T* u = nullptr;            // [count][m x m], column-major, ldu = m
  T* v = nullptr;            // [count][n x n], column-major, ldv = n
  int* active = nullptr;     // one counter: systems still integrating after combine (or none)

  UKES_HD T* mass_of(int i) const { return mass + static_cast<std::size_t>(i) * kN * kN; }
  UKES_HD T* b_of(int i) const { return b + static_cast<std::size_t>(i) * kM * kN; }
  UKES_HD T* s_of(int i) const { return s + static_cast<std::size_t>(i) * kS; }
  UKES_HD T* u_of(int i) const { return u + static_cast<std::size_t>(i) * kM * kM; }
  UKES_HD T* v_of(int i) const { return v + static_cast<std::size_t>(i) * kN * kN; }
};

// Column-major storage of a fixed-size matrix (leading dimension = R).
template <class T, int R, int C>
UKES_HD void store_column_major(const Mat<T, R, C>& X, T* out) {
  for (int c = 0; c < C; ++c)
    for (int r = 0; r < R; ++r) out[c * R + r] = X(r, c);
}

template <class T, int R, int C>
UKES_HD Mat<T, R, C> load_column_major(const T* in) {
  Mat<T, R, C> X;
  for (int c = 0; c < C; ++c)
    for (int r = 0; r < R; ++r) X(r, c) = in[c * R + r];
  return X;
}

// The Cholesky factor as the triangular solves expect it: lower triangle of the factored buffer
// (the strict upper triangle still holds M), upper triangle zero.
template <class T, int N>
UKES_HD Mat<T, N, N> load_lower_factor(const T* in) {
  Mat<T, N, N> L;
  for (int c = 0; c < N; ++c)
    for (int r = 0; r < N; ++r) L(r, c) = r >= c ? in[c * N + r] : T(0);
  return L;
}

// What the fused Cholesky checks as it goes: every pivot finite and positive (a factorization
// that reports success on non-finite input must not pass either).
template <class T, int N>
UKES_HD bool factor_usable(const Mat<T, N, N>& L) {
  for (int j = 0; j < N; ++j)
    if (!(L(j, j) > T(0)) || !isfinite(L(j, j))) return false;
  return true;
}

template <class T, int R, int C>
UKES_HD bool all_finite(const Mat<T, R, C>& X) {
  for (int k = 0; k < R * C; ++k)
    if (!isfinite(X.a[k])) return false;
  return true;
}

// One more system still integrating (atomically: executors may run a batch's systems on many
// threads). Drivers that follow each system's active() themselves (the warp kernel) pass no
// counter.
UKES_HD inline void count_active(int* counter) {
  if (counter == nullptr) return;
#if defined(__CUDA_ARCH__)
  atomicAdd(counter, 1);
#else
  std::atomic_ref<int>(*counter).fetch_add(1, std::memory_order_relaxed);
#endif
}

// Step 0: loads and assembles system i, which then wants its first evaluation.
template <class Model, class T>
UKES_HD void stage_begin(const StagedWorkspace<Model, T>& ws, const BatchInputView& in,
                         const RunSettings<T>& s, const BatchOutputView& out, int i) {
  SystemKernel<Model, T>& sys = ws.systems[i];
  sys.begin(in, s, i, out);
  if (sys.active()) count_active(ws.active);
}

// Step 1: M, Q and the constraint form at the state the system wants evaluated. Systems that are
// done, and states whose M is not finite (the fused Cholesky rejects those), factor an identity
// instead: nothing non-finite enters the batched factorizations.
template <class Model, class T>
UKES_HD void stage_assemble(const StagedWorkspace<Model, T>& ws, const RunSettings<T>& s, int i) {
  constexpr int n = Model::kN;
  const SystemKernel<Model, T>& sys = ws.systems[i];
  Mat<T, n, n> M = Mat<T, n, n>::identity();
  if (sys.active()) {
    StageScratch<Model, T>& sc = ws.scratch[i];
    Vec<T, n> q, qd;
    SystemKernel<Model, T>::split(sys.request_state(), q, qd);
    const DynamicsInputs<Model, T> d =
        dynamics_inputs<Model, T>(sys.model(), q, qd, sys.request_time(), sys.params(), s.dynamics);
    M = d.M;
    sc.a = d.Q;  // becomes M^-1 Q once M is factored
    sc.form = d.form;
    sc.bs = d.bs;
    sc.mass_ok = true;
    for (int c = 0; c < n; ++c)
      for (int r = c; r < n; ++r) sc.mass_ok = sc.mass_ok && isfinite(M(r, c));
    if (!sc.mass_ok) M = Mat<T, n, n>::identity();
  }
  store_column_major(M, ws.mass_of(i));
}

// Step 2, after the batched Cholesky: a = M^-1 Q and B = A L^-T for the batched SVD (zero where
// there is nothing to factor: done systems, failed M, non-finite B).
template <class Model, class T>
UKES_HD void stage_reduce(const StagedWorkspace<Model, T>& ws, int i) {
  constexpr int n = Model::kN;
  constexpr int m = kRows<Model>;
  Mat<T, m, n> B = Mat<T, m, n>::zero();
  if (ws.systems[i].active()) {
    StageScratch<Model, T>& sc = ws.scratch[i];
    const Mat<T, n, n> L = load_lower_factor<T, n>(ws.mass_of(i));
    sc.mass_ok = sc.mass_ok && ws.mass_info[i] == 0 && factor_usable(L);
    sc.b_finite = false;
    if (sc.mass_ok) {
      sc.a = cholesky_solve(L, sc.a);
      if constexpr (m > 0) {
        const Mat<T, m, n> Bi = right_solve_lower_transpose(L, sc.form.A);
        sc.b_finite = all_finite(Bi);
        if (sc.b_finite) B = Bi;
      }
    }
  }
  if constexpr (m > 0) store_column_major(B, ws.b_of(i));
}

// Step 3, after the batched SVD: the UK solve's finish with B^+ from (U, S, V) under the same rank
// rule as the fused path, then the integrator consumes the evaluation. A non-finite B (never
// given to the batched SVD) goes through the fused path's own Jacobi SVD, so that such states
// behave exactly as there. Counts the systems still active afterwards.
template <class Model, class T>
UKES_HD void stage_combine(const StagedWorkspace<Model, T>& ws, const RunSettings<T>& s,
                           const BatchOutputView& out, int i) {
  constexpr int n = Model::kN;
  constexpr int m = kRows<Model>;
  using Kernel = SystemKernel<Model, T>;
  SystemKernel<Model, T>& sys = ws.systems[i];
  if (!sys.active()) return;
  const StageScratch<Model, T>& sc = ws.scratch[i];
  const typename Kernel::State& x = sys.request_state();
  const T t = sys.request_time();

  UkSolution<T, n> uk = uk_mass_failure<T, n>();
  if (sc.mass_ok) {
    const Mat<T, n, n> L = load_lower_factor<T, n>(ws.mass_of(i));
    Vec<T, n> q, qd;
    Kernel::split(x, q, qd);
    const ModelNonIdealForce<Model, T> nonideal{sys.model(), q, qd, t, sys.params()};
    uk.a = sc.a;
    if constexpr (m > 0) {
      using Pinv = PseudoInverse<T, m, n>;
      const T rtol = rank_rtol_of(s.dynamics, sys.model());
      const T* U = ws.u_of(i);
      const T* S = ws.s_of(i);
      const T* V = ws.v_of(i);
      const Pinv Bp = sc.b_finite
                          ? Pinv(Pinv::factors_from_svd([U](int r, int k) { return U[k * m + r]; },
                                                        [S](int k) { return S[k]; },
                                                        [V](int c, int k) { return V[k * n + c]; }),
                                 rtol)
                          : Pinv(right_solved_lower_transpose(L, sc.form.A), rtol);
      uk_finish(L, sc.form.A, sc.bs, Bp, nonideal, uk);
    } else {
      uk_finish(L, sc.form.A, sc.bs, NoPseudoInverse{}, nonideal, uk);
    }
  }

  const DynamicsEval<Model, T> e = dynamics_report<Model, T>(sc.form, sc.bs, uk);

  typename Kernel::State dx;
  Kernel::derivative_of(x, e, dx);
  sys.take(s, out, dx, Kernel::observation_of(e));
  if (sys.active()) count_active(ws.active);
}

}  // namespace ukes
