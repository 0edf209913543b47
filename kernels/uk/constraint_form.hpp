// From constraint rows as physics states them to the second-order form A(q, qd, t) qdd = b,
// each kind of row by one Jet evaluation (kernels/autodiff/jet.hpp).
//
// Position rows phi(q, t): differentiating twice along the motion gives
//     phidd = grad(phi) qdd + D^2_v phi,   v = (qd, 1) in (q, t) space,
// so with q seeded (gradient) and moving along v, A = grad(phi) and b = -D^2_v phi = -2 c2, and
// c0, c1 are phi and phid.
// Velocity rows psi(q, qd, t): psid = (d psi / d qd) qdd + D_w psi, w = (qd, 0, 1), so with qd
// seeded and (q, t) moving along w, A = d psi / d qd and b = -D_w psi = -c1; every subterm of q
// and t alone carries no gradient.
// Baumgarte stabilization then replaces b by b - alpha phid - beta phi (resp. b - alpha psi).
#pragma once

#include "kernels/autodiff/jet.hpp"
#include "kernels/models/model_concept.hpp"

namespace ukes {

// x = J::variable(value, k, rate). On the CPU written in place: a Jet built in a temporary and
// copied into the array stalls on store forwarding (a fifth of the swarm constraint form). On the
// device the copy stays: in place, scara's fused FP64 kernel went from 0 to 552 B of spills.
template <class J, class T>
UKES_HD UKES_INLINE void seed(J& x, T value, int k, T rate = T(0)) {
#ifdef __CUDA_ARCH__
  x = J::variable(value, k, rate);
#else
  x.set_variable(value, k, rate);
#endif
}

// The rows with t, and q in the velocity rows, as jets of no seeded input (Jet<T, 0>,
// kernels/autodiff/jet.hpp) where the model takes them (generated functions, kernels/models/
// generated_functions.hpp): values of those alone are then three numbers, not N + 3. Other models
// (the interpreter, whose registers are of one type) get jets that do not vary, built as they
// were before Jet<T, 0>.
template <class Model, class J, class T>
UKES_HD UKES_INLINE void position_rows_moving(const Model& model, const Vec<J, Model::kN>& qj, T t,
                                              const T* p, J* phi) {
  const Jet<T, 0> time(t, T(1), T(0));
  if constexpr (requires { model.position_rows(qj, time, p, phi); }) {
    model.position_rows(qj, time, p, phi);
  } else {
    model.position_rows(qj, J(t, T(1), T(0)), p, phi);
  }
}
template <class Model, class J, class T>
UKES_HD UKES_INLINE void velocity_rows_moving(const Model& model, const Vec<T, Model::kN>& q,
                                              const Vec<T, Model::kN>& qd,
                                              const Vec<J, Model::kN>& qdj, T t, const T* p,
                                              J* psi) {
  constexpr int n = Model::kN;
  using Unseeded = Jet<T, 0>;
  Vec<Unseeded, n> qu;  // (nvcc 13's front end crashed on a requires-expression with parameters)
  const Unseeded time(t, T(1), T(0));
  if constexpr (requires { model.velocity_rows(qu, qdj, time, p, psi); }) {
    for (int j = 0; j < n; ++j) qu[j] = Unseeded(q[j], qd[j], T(0));
    model.velocity_rows(qu, qdj, time, p, psi);
  } else {
    Vec<J, n> qj;
    for (int j = 0; j < n; ++j) qj[j] = J(q[j], qd[j], T(0));
    model.velocity_rows(qj, qdj, J(t, T(1), T(0)), p, psi);
  }
}

template <class Model, class T>
struct ConstraintForm {
  static constexpr int kN = Model::kN;
  static constexpr int kM = kRows<Model>;

  Mat<T, kM, kN> A;       // rows in catalogue order: position rows first, then velocity rows
  Vec<T, kM> b;           // unstabilized right-hand side
  Vec<T, kM> value;       // phi (position rows), psi (velocity rows)
  Vec<T, kM> rate;        // phid (position rows); 0 for velocity rows
  int position_rows = 0;  // rows [0, position_rows) are position rows
};

// Whether a form's storage holds entries no row writes: a bucket's padding, or the one placeholder
// element of a model without rows.
template <class Model>
inline constexpr bool kFormHasPadding = BucketModel<Model> || kRows<Model> == 0;

// Fills f in place (evaluate_dynamics, kernels/uk/dynamics.hpp, writes a lane form where it is
// reported). Zeroed first, except a lane form whose rows write every entry: on scara that zeroing
// is 28 vector stores that the compiler keeps.
template <class Model, class T>
UKES_HD UKES_FLATTEN void write_constraint_form(const Model& model, const Vec<T, Model::kN>& q,
                                                const Vec<T, Model::kN>& qd, T t, const T* p,
                                                ConstraintForm<Model, T>& f) {
  using Form = ConstraintForm<Model, T>;
  constexpr int n = Form::kN;
  const ModelShape shape = model_shape(model);
  if constexpr (kFormHasPadding<Model> || !kLanes<T>) f = Form{};
  f.position_rows = shape.position_rows;
  using J = Jet<T, n>;
  if constexpr (kPositionCapacity < Model >> 0) {
    if (shape.position_rows > 0) {
      Vec<J, n> qj;
      for (int j = 0; j < n; ++j) seed(qj[j], q[j], j, qd[j]);
      J phi[kPositionCapacity<Model>];
      position_rows_moving(model, qj, t, p, phi);
      for (int r = 0; r < shape.position_rows; ++r) {
        for (int j = 0; j < n; ++j) f.A(r, j) = phi[r].gradient(j);
        f.value[r] = phi[r].c0;
        f.rate[r] = phi[r].c1;
        f.b[r] = -T(2) * phi[r].c2;
      }
    }
  }
  if constexpr (kVelocityCapacity < Model >> 0) {
    if (shape.velocity_rows > 0) {
      Vec<J, n> qdj;
      for (int j = 0; j < n; ++j) seed(qdj[j], qd[j], j);
      J psi[kVelocityCapacity<Model>];
      velocity_rows_moving(model, q, qd, qdj, t, p, psi);
      for (int r = 0; r < shape.velocity_rows; ++r) {
        const int row = shape.position_rows + r;
        for (int j = 0; j < n; ++j) f.A(row, j) = psi[r].gradient(j);
        f.value[row] = psi[r].c0;
        f.rate[row] = T(0);
        f.b[row] = -psi[r].c1;
      }
    }
  }
}

template <class Model, class T>
UKES_HD ConstraintForm<Model, T> constraint_form(const Model& model, const Vec<T, Model::kN>& q,
                                                 const Vec<T, Model::kN>& qd, T t, const T* p) {
  ConstraintForm<Model, T> f;
  write_constraint_form<Model, T>(model, q, qd, t, p, f);
  return f;
}

// b with Baumgarte terms.
template <class Model, class T>
UKES_HD Vec<T, kRows<Model>> stabilized_rhs(const ConstraintForm<Model, T>& f, T alpha, T beta) {
  auto bs = Vec<T, kRows<Model>>::zero();  // zero rows: the placeholder slot is defined too
  for (int r = 0; r < f.position_rows; ++r) bs[r] = f.b[r] - alpha * f.rate[r] - beta * f.value[r];
  for (int r = f.position_rows; r < kRows<Model>; ++r) bs[r] = f.b[r] - alpha * f.value[r];
  return bs;
}

}  // namespace ukes

namespace ukes {

// Position rows alone, with their Jacobian: what position projection (assembly) needs.
template <class Model, class T>
UKES_HD UKES_FLATTEN void position_rows_with_jacobian(
    const Model& model, const Vec<T, Model::kN>& q, T t, const T* p,
    Mat<T, kPositionCapacity<Model>, Model::kN>& Ap, Vec<T, kPositionCapacity<Model>>& phi) {
  constexpr int n = Model::kN;
  if constexpr (kPositionCapacity < Model >> 0) {
    using J = Jet<T, n>;
    Vec<J, n> qj;
    for (int j = 0; j < n; ++j) seed(qj[j], q[j], j);
    J phi_j[kPositionCapacity<Model>];
    const Jet<T, 0> time(t);
    if constexpr (requires { model.position_rows(qj, time, p, phi_j); }) {
      model.position_rows(qj, time, p, phi_j);
    } else {
      model.position_rows(qj, J(t), p, phi_j);
    }
    for (int r = 0; r < model_shape(model).position_rows; ++r) {
      phi[r] = phi_j[r].c0;
      for (int j = 0; j < n; ++j) Ap(r, j) = phi_j[r].gradient(j);
    }
  }
}

}  // namespace ukes
