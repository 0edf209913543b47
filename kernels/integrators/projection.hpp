// Projection onto the constraint set, M-weighted least change:
//   positions:  q  <- q  - lambda L^-T (A_p L^-T)^+ phi (Gauss–Newton on phi(q, t) = 0, the step
//                                                        halved until |phi| decreases)
//   velocities: qd <- qd - L^-T (A L^-T)^+ [phid; psi]  (exact in one step for rows affine in qd)
// with M = L L^T at the current q and the same pseudoinverse as the UK solve, so redundant rows
// and rank loss are handled alike. Used for assembly of initial conditions and, optionally, after
// each accepted step.
#pragma once

#include "kernels/linalg/cholesky.hpp"
#include "kernels/linalg/pinv.hpp"
#include "kernels/uk/constraint_form.hpp"
#include "kernels/uk/dynamics.hpp"

namespace ukes {

inline constexpr int kMaxHalvings = 12;  // line-search limit of the position projection

// A bucket model fills only its own rows: the rest of its arrays must read as zero. A built-in
// fills everything, so its arrays start uninitialized as before.
template <class Model, class X>
UKES_HD UKES_INLINE void zero_padding(X& x) {
  if constexpr (BucketModel<Model>) x = X::zero();
}

// The block of the position rows' Jacobian a model fills.
template <class Model>
UKES_HD UKES_INLINE auto position_block(const Model& model) {
  if constexpr (BucketModel<Model>) {
    const ModelShape shape = model_shape(model);
    return ActiveBlock{shape.position_rows, shape.n};
  } else {
    (void)model;
    return FullBlock{};
  }
}

template <class T>
struct ProjectionSettings {
  T tol;               // converged when every |phi| (resp. |phid|, |psi|) is at most tol
  int max_iterations;  // Gauss–Newton iterations per level
  T rank_rtol;
};

// Returns false when the rows could not be met to `tol` (or M is not positive definite).
template <class Model, class T>
UKES_HD bool project_positions(const Model& model, Vec<T, Model::kN>& q, T t, const T* p,
                               const ProjectionSettings<T>& s) {
  constexpr int n = Model::kN;
  constexpr int mp = kPositionCapacity<Model>;
  if constexpr (mp == 0) {
    return true;
  } else {
    if (model_shape(model).position_rows == 0) return true;
    Mat<T, mp, n> Ap;
    Vec<T, mp> phi;
    zero_padding<Model>(Ap);
    zero_padding<Model>(phi);
    for (int it = 0;; ++it) {
      position_rows_with_jacobian<Model, T>(model, q, t, p, Ap, phi);
      const T res = norm_inf(phi);
      if (!isfinite(res)) return false;
      if (res <= s.tol) return true;
      if (it == s.max_iterations) return false;
      Mat<T, n, n> M, L;
      model.mass(q, t, p, M);
      if (!cholesky(M, L)) return false;
      const auto Bp =
          make_pinv(right_solved_lower_transpose(L, Ap), s.rank_rtol, position_block(model));
      const Vec<T, n> dq = solve_lower_transpose(L, Bp.apply(phi));
      // Far from the constraint set (an assembly from a rough guess) the full Gauss–Newton step
      // can overshoot onto another branch or diverge: backtrack until the residual decreases.
      const T res2 = dot(phi, phi);
      T lambda = T(1);
      Vec<T, n> trial;
      for (int halvings = 0;; ++halvings) {
        for (int j = 0; j < n; ++j) trial[j] = q[j] - lambda * dq[j];
        Vec<T, mp> phi_trial;
        zero_padding<Model>(phi_trial);
        model.position_rows(trial, t, p, &phi_trial[0]);
        if (dot(phi_trial, phi_trial) < res2 || halvings == kMaxHalvings) break;
        lambda *= T(0.5);
      }
      q = trial;
    }
  }
}

template <class Model, class T>
UKES_HD bool project_velocities(const Model& model, const Vec<T, Model::kN>& q,
                                Vec<T, Model::kN>& qd, T t, const T* p,
                                const ProjectionSettings<T>& s) {
  constexpr int n = Model::kN;
  constexpr int m = kRows<Model>;
  if constexpr (m == 0) {
    return true;
  } else {
    if (model_shape(model).rows() == 0) return true;
    Mat<T, n, n> M, L;
    model.mass(q, t, p, M);
    if (!cholesky(M, L)) return false;
    for (int it = 0;; ++it) {
      const ConstraintForm<Model, T> f = constraint_form<Model, T>(model, q, qd, t, p);
      Vec<T, m> r;
      for (int k = 0; k < f.position_rows; ++k) r[k] = f.rate[k];
      for (int k = f.position_rows; k < m; ++k) r[k] = f.value[k];
      const T res = norm_inf(r);
      if (!isfinite(res)) return false;
      if (res <= s.tol) return true;
      if (it == s.max_iterations) return false;
      const auto Bp =
          make_pinv(right_solved_lower_transpose(L, f.A), s.rank_rtol, active_block(model));
      const Vec<T, n> dqd = solve_lower_transpose(L, Bp.apply(r));
      for (int j = 0; j < n; ++j) qd[j] -= dqd[j];
    }
  }
}

}  // namespace ukes
