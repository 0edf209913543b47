// Servo rows of a higher relative degree: rows the actuators reach only through further
// derivatives, as a flexible joint's link row is reached by motor torques only through its springs
// (docs/CONTROL.md, "Relative degree"; the control law of input-output linearization, Isidori,
// "Nonlinear Control Systems", 3rd ed., Springer 1995, sec. 4.1, on the controller's nominal
// model).
//
// A servo row e (phi or psi) of relative degree r is differentiated along the controller's own
// motion until the input appears: e^(k) for k < r do not depend on the control, and
//     e^(r) = e^(r)_0 + g u,   g = d e^(r-1) / d qd . M^-1 B,
// the first the drift's r-th derivative, the second the change of the (r-1)-th derivative when the
// velocity moves along M^-1 B (the only way u moves the state). The controller asks
//     p(d/dt) e = 0,   p(s) = p_o(s) (s + alpha)^(r - o),
// the row's own Baumgarte polynomial p_o (s^2 + alpha s + beta for position rows, o = 2;
// s + alpha for velocity rows, o = 1) with a pole at -alpha for every further derivative. Rows of
// their own order keep the UK weighting of kernels/uk/servo_control.hpp; all rows together give
//     G x = r,  x = G^+ r,
// as there. Both e^(k) and g come from one Taylor-mode evaluation per actuator column
// (kernels/autodiff/taylor.hpp): the state's series along the drift, with the velocity's tangent
// seeded along that column's M^-1 B e_j.
//
// Every row is a servo row here (the run spec refuses physical rows beside them: the controller's
// nominal motion would be a UK motion, whose series this does not form), and the robust term is
// not applied (the spec refuses it). Device code compiles it only where it is asked for
// (kernels/backend/device/system_kernels.hpp, FusedSystem's kServoDerivatives).
#pragma once

#include "kernels/autodiff/taylor.hpp"
#include "kernels/uk/servo_control.hpp"

namespace ukes {

// A quantity's series along the controller's motion through the highest relative degree, each
// coefficient with its tangent along one actuator column.
template <class T>
using ServoSeries = Taylor<Dual<T>, kMaxRelativeDegree>;

// Whether Model's mass and force take series (every catalogue and user model does; a test's
// hand-written model need not, and then its CPU backend compiles no servo derivatives).
template <class Model, class T>
inline constexpr bool kTakesSeries = requires(const Model& model,
                                              const Vec<ServoSeries<T>, Model::kN>& x,
                                              ServoSeries<T> t, const T* p,
                                              Mat<ServoSeries<T>, Model::kN, Model::kN>& M,
                                              Vec<ServoSeries<T>, Model::kN>& Q) {
  model.mass(x, t, p, M);
  model.force(x, x, t, p, Q);
};

// The order of a row: 2 for position rows, 1 for velocity rows.
UKES_HD UKES_INLINE int row_order(int row, int position_rows) {
  return row < position_rows ? 2 : 1;
}

// The coefficients p_0 .. p_r (p_r = 1) of p(s) = p_o(s) (s + alpha)^(r - o).
template <class T>
UKES_HD void servo_polynomial(int order, int degree, T alpha, T beta,
                              T (&poly)[kMaxRelativeDegree + 1]) {
  for (int k = 0; k <= kMaxRelativeDegree; ++k) poly[k] = T(0);
  if (order == 2) {
    poly[0] = beta, poly[1] = alpha, poly[2] = T(1);
  } else {
    poly[0] = alpha, poly[1] = T(1);
  }
  for (int d = order; d < degree; ++d) {  // times (s + alpha)
    for (int k = d + 1; k > 0; --k) poly[k] = poly[k - 1] + alpha * poly[k];
    poly[0] = alpha * poly[0];
  }
}

// The controller's motion without control from (q, qd) at t, as series through order `order`,
// with the velocity's tangent `dqd`: q_{k+1} = qd_k / (k + 1), qd_{k+1} = a_k / (k + 1), where
// a(s) = M(q(s))^-1 Q(q(s), qd(s), t + s) has M_0 a_k = Q_k - sum_{j=1..k} M_j a_{k-j}. M_0 is
// the plain mass (q's tangent is zero), factored once as L. Pass k evaluates the model on the
// coefficients known so far, truncated at k (Taylor::order), and reads its k-th coefficients,
// which depend on no later ones.
template <class Model, class T>
UKES_HD void drift_series(const Model& model, const CholeskyFactor<T, Model::kN>& L,
                          const Vec<T, Model::kN>& q, const Vec<T, Model::kN>& qd,
                          const ServoSeries<T>& ts, const T* p, const Vec<T, Model::kN>& dqd,
                          int order, Vec<ServoSeries<T>, Model::kN>& qs,
                          Vec<ServoSeries<T>, Model::kN>& qds) {
  constexpr int n = Model::kN;
  using S = Dual<T>;
  for (int j = 0; j < n; ++j) {
    qs[j] = ServoSeries<T>(S(q[j]));
    qds[j] = ServoSeries<T>(S(qd[j], dqd[j]));
  }
  Vec<S, n> accel[kMaxRelativeDegree];  // a_0 .. a_{order-1}
  Mat<ServoSeries<T>, n, n> M;
  Vec<ServoSeries<T>, n> Q;
  for (int k = 0; k < order; ++k) {
    for (int j = 0; j < n; ++j) {
      qs[j].set(k + 1, qds[j].coefficient(k) / S(k + 1));
      qs[j].order = qds[j].order = k;
    }
    model.mass(qs, ts, p, M);
    model.force(qs, qds, ts, p, Q);
    Vec<T, n> value, tangent;
    for (int i = 0; i < n; ++i) {
      S rhs = Q[i].coefficient(k);
      for (int m = 1; m <= k; ++m)
        for (int j = 0; j < n; ++j) rhs -= M(i, j).coefficient(m) * accel[k - m][j];
      value[i] = rhs.v;
      tangent[i] = rhs.d;
    }
    const Vec<T, n> a_value = cholesky_solve(L, value), a_tangent = cholesky_solve(L, tangent);
    for (int j = 0; j < n; ++j) {
      accel[k][j] = S(a_value[j], a_tangent[j]);
      qds[j].set(k + 1, accel[k][j] / S(k + 1));
    }
  }
  for (int j = 0; j < n; ++j) qs[j].order = qds[j].order = order;
}

// The rows' series along a motion given as series (position rows first, then velocity rows).
template <class Model, class T>
UKES_HD void row_series(const Model& model, const Vec<ServoSeries<T>, Model::kN>& qs,
                        const Vec<ServoSeries<T>, Model::kN>& qds, const ServoSeries<T>& ts,
                        const T* p, ServoSeries<T> (&rows)[kRows<Model>]) {
  const ModelShape shape = model_shape(model);
  if constexpr (kPositionCapacity < Model >> 0) {
    ServoSeries<T> phi[kPositionCapacity<Model>];
    if (shape.position_rows > 0) model.position_rows(qs, ts, p, phi);
    for (int r = 0; r < shape.position_rows; ++r) rows[r] = phi[r];
  }
  if constexpr (kVelocityCapacity < Model >> 0) {
    ServoSeries<T> psi[kVelocityCapacity<Model>];
    if (shape.velocity_rows > 0) model.velocity_rows(qs, qds, ts, p, psi);
    for (int r = 0; r < shape.velocity_rows; ++r) rows[shape.position_rows + r] = psi[r];
  }
}

// Column j of the actuation, as a force: L e_j for full actuation (x weighted as in
// servo_control), e_j for a listed coordinate (zero for the others), B^ e_j for a matrix.
template <class T, int N>
UKES_HD Vec<T, N> actuation_column(const ControlSettings<T>& c, const CholeskyFactor<T, N>& L,
                                   const Mat<T, N, N>& B_hat, int j) {
  Vec<T, N> f = Vec<T, N>::zero();
  for (int i = 0; i < N; ++i) {
    if (c.actuation == Actuation::kFull) {
      f[i] = i >= j ? L.L(i, j) : T(0);
    } else if (c.actuation == Actuation::kMatrix) {
      f[i] = B_hat(i, j);
    }
  }
  if (c.actuation == Actuation::kCoordinates && has_bit(c.actuated, j)) f[j] = T(1);
  return f;
}

// Rows of a higher relative degree into G x = r: for each actuator column, the drift's series with
// that column's tangent; g from the tangents, the drift's derivatives from the values.
template <class Model, class T>
UKES_HD void higher_degree_equations(const Model& model, const CholeskyFactor<T, Model::kN>& L,
                                     const Mat<T, Model::kN, Model::kN>& B_hat,
                                     const Vec<T, Model::kN>& q, const Vec<T, Model::kN>& qd, T t,
                                     const T* p_hat, const DynamicsSettings<T>& s,
                                     const ControlSettings<T>& c,
                                     Mat<T, kRows<Model>, Model::kN>& G, Vec<T, kRows<Model>>& r) {
  constexpr int n = Model::kN;
  constexpr int m = kRows<Model>;
  const ModelShape shape = model_shape(model);
  int order = 0;
  for (int i = 0; i < shape.rows(); ++i)
    if (has_bit(c.higher_degree_rows, i)) order = max_of(order, int(c.relative_degree[i]));
  ServoSeries<T> ts{Dual<T>(t)};
  ts.set(1, Dual<T>(T(1)));
  Vec<ServoSeries<T>, n> qs, qds;
  ServoSeries<T> rows[m];
  T factorial[kMaxRelativeDegree + 1] = {T(1)};
  for (int k = 1; k <= kMaxRelativeDegree; ++k) factorial[k] = factorial[k - 1] * T(k);
  bool drift_read = false;
  for (int j = 0; j <= n; ++j) {
    // Columns 0 .. n-1; a last pass with no tangent only when no column gave the drift.
    if (j == n && drift_read) break;
    const Vec<T, n> f = j < n ? actuation_column(c, L, B_hat, j) : Vec<T, n>::zero();
    if (j < n && norm2(f) == T(0)) continue;
    drift_series(model, L, q, qd, ts, p_hat, cholesky_solve(L, f), order, qs, qds);
    row_series(model, qs, qds, ts, p_hat, rows);
    for (int i = 0; i < shape.rows(); ++i) {
      if (!has_bit(c.higher_degree_rows, i)) continue;
      const int degree = c.relative_degree[i];
      if (j < n) G(i, j) = factorial[degree - 1] * rows[i].coefficient(degree - 1).d;
      if (drift_read) continue;
      T poly[kMaxRelativeDegree + 1];
      servo_polynomial(row_order(i, shape.position_rows), degree, s.alpha, s.beta, poly);
      T sum = T(0);
      for (int k = 0; k <= degree; ++k) sum += poly[k] * factorial[k] * rows[i].coefficient(k).v;
      r[i] = -sum;
    }
    drift_read = true;
  }
}

// servo_control (kernels/uk/servo_control.hpp) with rows of a higher relative degree: those rows'
// G and r from their series, the others' as there, every row a servo row.
template <class Model, class T>
UKES_HD Vec<T, Model::kN> servo_control_with_derivatives(
    const Model& model, const Vec<T, Model::kN>& q, const Vec<T, Model::kN>& qd, T t,
    const T* p_hat, const DynamicsSettings<T>& s, const ControlSettings<T>& c) {
  constexpr int n = Model::kN;
  constexpr int m = kRows<Model>;
  const DynamicsInputs<Model, T> in = dynamics_inputs<Model, T>(model, q, qd, t, p_hat, s);
  CholeskyFactor<T, n> L;
  Vec<T, n> u;
  if (!cholesky(in.M, L)) {
    for (int j = 0; j < n; ++j) u[j] = T(NAN);
    return u;
  }
  const T rtol = rank_rtol_of(s, model);
  const auto no_rows = Mat<T, m, n>::zero();
  const auto Bp = physical_rows_pinv(model, L, no_rows, rtol, true);
  Mat<T, m, n> G = servo_gain_matrix(L, in.form.A, no_rows, Bp, c);
  Mat<T, n, n> B_hat = Mat<T, n, n>::zero();
  if constexpr (kHasActuationMatrix<Model, T>) {
    if (c.actuation == Actuation::kMatrix) {
      B_hat = actuation_matrix<Model, T>(model, q, qd, t, p_hat);
      G = G * B_hat;
    }
  }
  Vec<T, m> r = in.bs - in.form.A * cholesky_solve(L, in.Q);
  higher_degree_equations(model, L, B_hat, q, qd, t, p_hat, s, c, G, r);
  const Vec<T, n> x = make_pinv(G, rtol, active_block(model)).apply(r);
  return c.actuation == Actuation::kFull ? lower_times(L, x) : x;
}

template <class Model, class T>
UKES_HD DynamicsEval<Model, T> evaluate_servo_derivative_dynamics(
    const Model& model, const Vec<T, Model::kN>& q, const Vec<T, Model::kN>& qd, T t, const T* p,
    const T* p_hat, const DynamicsSettings<T>& s, const ControlSettings<T>& c) {
  if constexpr (kRows<Model> == 0 || !kTakesSeries<Model, T>) {
    // No run asks it of such a model (a spec's control needs rows; only test models lack series).
    return evaluate_controlled_dynamics<Model, T>(model, q, qd, t, p, p_hat, s, c);
  } else {
    return controlled_plant_dynamics<Model, T>(
        model, q, qd, t, p, s, c,
        servo_control_with_derivatives<Model, T>(model, q, qd, t, p_hat, s, c));
  }
}

}  // namespace ukes
