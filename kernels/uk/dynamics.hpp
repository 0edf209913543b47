// One right-hand-side evaluation of a catalogue model: unconstrained dynamics, second-order
// constraint form with Baumgarte terms, and the UK solve.
#pragma once

#include "kernels/uk/constraint_form.hpp"
#include "kernels/uk/uk_solver.hpp"

namespace ukes {

// Per-run numerical settings shared by every evaluation.
template <class T>
struct DynamicsSettings {
  T alpha = T(0);  // Baumgarte gains
  T beta = T(0);
  T rank_rtol = T(-1);  // < 0: the pseudoinverse's default, max(m, n) eps
};

template <class Model, class T>
struct DynamicsEval {
  static constexpr int kN = Model::kN;
  Vec<T, kN> qdd;
  Vec<T, kN> Qc;  // total constraint force, ideal + non-ideal
  ConstraintForm<Model, T> form;
  T inconsistency = T(0);  // |A qdd - b_stab|
  T rhs_norm = T(0);       // |b_stab|, the scale the inconsistency is judged against
  int rank = 0;
  T conditioning = T(1);  // see UkSolution::conditioning
  bool mass_ok = false;
};

template <class Model, class T>
struct ModelNonIdealForce {
  static constexpr bool kActive = Model::kNonIdeal;
  const Vec<T, Model::kN>& q;
  const Vec<T, Model::kN>& qd;
  T t;
  const T* p;
  UKES_HD void operator()(const Vec<T, Model::kN>& Qc_ideal, Vec<T, Model::kN>& C) const {
    Model::nonideal_force(q, qd, t, p, Qc_ideal, C);
  }
};

template <class Model, class T>
UKES_HD DynamicsEval<Model, T> evaluate_dynamics(const Vec<T, Model::kN>& q,
                                                 const Vec<T, Model::kN>& qd, T t, const T* p,
                                                 const DynamicsSettings<T>& s) {
  constexpr int n = Model::kN;
  constexpr int m = kRows<Model>;
  DynamicsEval<Model, T> e;
  Mat<T, n, n> M;
  Vec<T, n> Q;
  Model::mass(q, t, p, M);
  Model::force(q, qd, t, p, Q);
  e.form = constraint_form<Model, T>(q, qd, t, p);
  const Vec<T, m> bs = stabilized_rhs(e.form, s.alpha, s.beta);
  const T rtol = s.rank_rtol < T(0) ? default_rank_rtol<T>(m, n) : s.rank_rtol;
  const auto uk = uk_solve(M, Q, e.form.A, bs, ModelNonIdealForce<Model, T>{q, qd, t, p}, rtol);
  e.mass_ok = uk.mass_ok;
  e.qdd = uk.qdd;
  e.Qc = uk.Qc_ideal + uk.Qc_nonideal;
  e.inconsistency = uk.inconsistency;
  e.rhs_norm = norm2(bs);
  e.rank = uk.rank;
  e.conditioning = uk.conditioning;
  return e;
}

}  // namespace ukes
