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

// The same settings in scalar S (a right-hand side evaluated on duals,
// kernels/uk/dynamics_jacobian.hpp).
template <class S, class T>
UKES_HD DynamicsSettings<S> settings_in(const DynamicsSettings<T>& s) {
  DynamicsSettings<S> r;
  r.alpha = S(s.alpha);
  r.beta = S(s.beta);
  r.rank_rtol = S(s.rank_rtol);
  return r;
}

template <class Model, class T>
struct DynamicsEval {
  static constexpr int kN = Model::kN;
  Vec<T, kN> qdd;
  Vec<T, kN> Qc;  // total constraint force, ideal + non-ideal
  // The control force of a controlled run (kernels/uk/servo_control.hpp); zero otherwise.
  Vec<T, kN> control = Vec<T, kN>::zero();
  ConstraintForm<Model, T> form;
  T inconsistency = T(0);  // |A qdd - b_stab|
  T rhs_norm = T(0);       // |b_stab|, the scale the inconsistency is judged against
  int rank = 0;
  T conditioning = T(1);  // see UkSolution::conditioning
  bool mass_ok = false;
  MaskOf<T> unsolved = MaskOf<T>(false);  // see UkSolution::unsolved
};

template <class Model, class T>
struct ModelNonIdealForce {
  static constexpr bool kActive = Model::kNonIdeal;
  const Model& model;
  const Vec<T, Model::kN>& q;
  const Vec<T, Model::kN>& qd;
  T t;
  const T* p;
  UKES_HD bool active() const { return has_nonideal_force(model); }
  UKES_HD void operator()(const Vec<T, Model::kN>& Qc_ideal, Vec<T, Model::kN>& C) const {
    model.nonideal_force(q, qd, t, p, Qc_ideal, C);
  }
};

// The rank tolerance of a run's pseudoinverses.
template <class T>
UKES_HD T rank_rtol_of(const DynamicsSettings<T>& s, int m, int n) {
  if constexpr (kLanes<T>) {
    return pick(s.rank_rtol < T(0), default_rank_rtol<T>(m, n), s.rank_rtol);
  } else {
    return s.rank_rtol < T(0) ? default_rank_rtol<T>(m, n) : s.rank_rtol;
  }
}
template <class Model, class T>
UKES_HD T rank_rtol_of(const DynamicsSettings<T>& s, const Model& model) {
  const ModelShape shape = model_shape(model);
  return rank_rtol_of(s, shape.rows(), shape.n);
}

// The block of the constraint matrices a model fills: all of it for a built-in.
template <class Model>
UKES_HD UKES_INLINE auto active_block(const Model& model) {
  if constexpr (BucketModel<Model>) {
    const ModelShape shape = model_shape(model);
    return ActiveBlock{shape.rows(), shape.n};
  } else {
    (void)model;
    return FullBlock{};
  }
}

// What one evaluation needs before the UK solve's factorizations (the staged path batches those).
template <class Model, class T>
struct DynamicsInputs {
  Mat<T, Model::kN, Model::kN> M;
  Vec<T, Model::kN> Q;
  ConstraintForm<Model, T> form;
  Vec<T, kRows<Model>> bs;  // stabilized right-hand side
};

template <class Model, class T>
UKES_HD DynamicsInputs<Model, T> dynamics_inputs(const Model& model, const Vec<T, Model::kN>& q,
                                                 const Vec<T, Model::kN>& qd, T t, const T* p,
                                                 const DynamicsSettings<T>& s) {
  DynamicsInputs<Model, T> in;
  model.mass(q, t, p, in.M);
  model.force(q, qd, t, p, in.Q);
  in.form = constraint_form<Model, T>(model, q, qd, t, p);
  in.bs = stabilized_rhs(in.form, s.alpha, s.beta);
  return in;
}

// How an evaluation reports a UK solution, whichever path solved it: e's form is the caller's.
template <class Model, class T>
UKES_HD void report_solution(const Vec<T, kRows<Model>>& bs, const UkSolution<T, Model::kN>& uk,
                             DynamicsEval<Model, T>& e) {
  e.mass_ok = uk.mass_ok;
  e.qdd = uk.qdd;
  e.Qc = uk.Qc_ideal + uk.Qc_nonideal;
  e.inconsistency = uk.inconsistency;
  e.rhs_norm = norm2(bs);
  e.rank = uk.rank;
  e.conditioning = uk.conditioning;
  e.unsolved = uk.unsolved;
}

template <class Model, class T>
UKES_HD DynamicsEval<Model, T> dynamics_report(const ConstraintForm<Model, T>& form,
                                               const Vec<T, kRows<Model>>& bs,
                                               const UkSolution<T, Model::kN>& uk) {
  DynamicsEval<Model, T> e;
  e.form = form;
  report_solution<Model, T>(bs, uk, e);
  return e;
}

// Lanes write the form where the evaluation reports it. Copied into DynamicsInputs and then into
// DynamicsEval, a lane form is 56 vector stores on scara, which the compiler keeps; without them
// and the zeroing write_constraint_form skips, scara ran 1.12x (benchmarks/README.md). The device
// keeps the copies: written in place, TwoRodPendulum's FP32 kernels took 224 B of stack (0 and
// 120 before), and other kernels grew too (benchmarks/kernel_resources.tsv).
template <class Model, class T>
UKES_HD DynamicsEval<Model, T> evaluate_dynamics_in_place(const Model& model,
                                                          const Vec<T, Model::kN>& q,
                                                          const Vec<T, Model::kN>& qd, T t,
                                                          const T* p,
                                                          const DynamicsSettings<T>& s) {
  constexpr int n = Model::kN;
  DynamicsEval<Model, T> e;
  Mat<T, n, n> M;
  Vec<T, n> Q;
  model.mass(q, t, p, M);
  model.force(q, qd, t, p, Q);
  write_constraint_form<Model, T>(model, q, qd, t, p, e.form);
  const Vec<T, kRows<Model>> bs = stabilized_rhs(e.form, s.alpha, s.beta);
  const auto uk = uk_solve(M, Q, e.form.A, bs, ModelNonIdealForce<Model, T>{model, q, qd, t, p},
                           rank_rtol_of(s, model), active_block(model));
  report_solution<Model, T>(bs, uk, e);
  return e;
}

template <class Model, class T>
UKES_HD DynamicsEval<Model, T> evaluate_dynamics(const Model& model, const Vec<T, Model::kN>& q,
                                                 const Vec<T, Model::kN>& qd, T t, const T* p,
                                                 const DynamicsSettings<T>& s) {
  if constexpr (kLanes<T>) {
    return evaluate_dynamics_in_place<Model, T>(model, q, qd, t, p, s);
  } else {
    const DynamicsInputs<Model, T> in = dynamics_inputs<Model, T>(model, q, qd, t, p, s);
    const auto uk =
        uk_solve(in.M, in.Q, in.form.A, in.bs, ModelNonIdealForce<Model, T>{model, q, qd, t, p},
                 rank_rtol_of(s, model), active_block(model));
    return dynamics_report<Model, T>(in.form, in.bs, uk);
  }
}

}  // namespace ukes
