// From constraint rows as physics states them to the second-order form A(q, qd, t) qdd = b.
//
// Position rows phi(q, t): differentiating twice along the motion gives
//     phidd = grad(phi) qdd + D^2_v phi,   v = (qd, 1) in (q, t) space,
// so A = grad(phi) (one Dual<n> evaluation) and b = -D^2_v phi (one Jet2 evaluation, which also
// yields phi and phid as its lower coefficients).
// Velocity rows psi(q, qd, t): psid = (d psi / d qd) qdd + D_w psi, w = (qd, 0, 1), so
// A = d psi / d qd and b = -D_w psi.
// Baumgarte stabilization then replaces b by b - alpha phid - beta phi (resp. b - alpha psi).
#pragma once

#include "kernels/autodiff/dual.hpp"
#include "kernels/models/model_concept.hpp"

namespace ukes {

template <class Model, class T>
struct ConstraintForm {
  static constexpr int kN = Model::kN;
  static constexpr int kP = Model::kPositionRows;
  static constexpr int kV = Model::kVelocityRows;
  static constexpr int kM = kP + kV;

  Mat<T, kM, kN> A;  // rows in catalogue order: position rows first, then velocity rows
  Vec<T, kM> b;      // unstabilized right-hand side
  Vec<T, kM> value;  // phi (position rows), psi (velocity rows)
  Vec<T, kM> rate;   // phid (position rows); 0 for velocity rows
};

template <class Model, class T>
UKES_HD ConstraintForm<Model, T> constraint_form(const Vec<T, Model::kN>& q,
                                                 const Vec<T, Model::kN>& qd, T t, const T* p) {
  using Form = ConstraintForm<Model, T>;
  constexpr int n = Form::kN;
  Form f{};  // zero-row forms still carry one (unused) storage element
  if constexpr (Form::kP > 0) {
    using D = Dual<T, n>;
    Vec<D, n> qg;
    for (int j = 0; j < n; ++j) qg[j] = D::variable(q[j], j);
    D phi_g[Form::kP];
    Model::position_rows(qg, D(t), p, phi_g);

    using J = Jet2<T>;
    Vec<J, n> qj;
    for (int j = 0; j < n; ++j) qj[j] = J(q[j], qd[j], T(0));
    J phi_j[Form::kP];
    Model::position_rows(qj, J(t, T(1), T(0)), p, phi_j);

    for (int r = 0; r < Form::kP; ++r) {
      for (int j = 0; j < n; ++j) f.A(r, j) = phi_g[r].d[j];
      f.value[r] = phi_j[r].c0;
      f.rate[r] = phi_j[r].c1;
      f.b[r] = -T(2) * phi_j[r].c2;
    }
  }
  if constexpr (Form::kV > 0) {
    using D = Dual<T, n>;
    Vec<D, n> qc, qdg;
    for (int j = 0; j < n; ++j) {
      qc[j] = D(q[j]);
      qdg[j] = D::variable(qd[j], j);
    }
    D psi_g[Form::kV];
    Model::velocity_rows(qc, qdg, D(t), p, psi_g);

    using D1 = Dual<T, 1>;
    Vec<D1, n> qm, qdm;
    for (int j = 0; j < n; ++j) {
      qm[j] = D1(q[j]);
      qm[j].d[0] = qd[j];
      qdm[j] = D1(qd[j]);
    }
    D1 tm = D1::variable(t, 0);
    D1 psi_m[Form::kV];
    Model::velocity_rows(qm, qdm, tm, p, psi_m);

    for (int r = 0; r < Form::kV; ++r) {
      const int row = Form::kP + r;
      for (int j = 0; j < n; ++j) f.A(row, j) = psi_g[r].d[j];
      f.value[row] = psi_g[r].v;
      f.rate[row] = T(0);
      f.b[row] = -psi_m[r].d[0];
    }
  }
  return f;
}

// b with Baumgarte terms.
template <class Model, class T>
UKES_HD Vec<T, kRows<Model>> stabilized_rhs(const ConstraintForm<Model, T>& f, T alpha, T beta) {
  auto bs = Vec<T, kRows<Model>>::zero();  // zero rows: the placeholder slot is defined too
  for (int r = 0; r < Model::kPositionRows; ++r)
    bs[r] = f.b[r] - alpha * f.rate[r] - beta * f.value[r];
  for (int r = Model::kPositionRows; r < kRows<Model>; ++r) bs[r] = f.b[r] - alpha * f.value[r];
  return bs;
}

}  // namespace ukes

namespace ukes {

// Position rows alone, with their Jacobian: what position projection (assembly) needs.
template <class Model, class T>
UKES_HD void position_rows_with_jacobian(const Vec<T, Model::kN>& q, T t, const T* p,
                                         Mat<T, Model::kPositionRows, Model::kN>& Ap,
                                         Vec<T, Model::kPositionRows>& phi) {
  constexpr int n = Model::kN;
  if constexpr (Model::kPositionRows > 0) {
    using D = Dual<T, n>;
    Vec<D, n> qg;
    for (int j = 0; j < n; ++j) qg[j] = D::variable(q[j], j);
    D phi_g[Model::kPositionRows];
    Model::position_rows(qg, D(t), p, phi_g);
    for (int r = 0; r < Model::kPositionRows; ++r) {
      phi[r] = phi_g[r].v;
      for (int j = 0; j < n; ++j) Ap(r, j) = phi_g[r].d[j];
    }
  }
}

}  // namespace ukes
