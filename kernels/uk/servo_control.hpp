// Constraint-following control under model uncertainty: the UK force as a controller designed on
// a nominal model and applied to a plant whose parameters differ (Udwadia, Proc. R. Soc. A 459,
// 2003 and 464, 2008; Udwadia & Wanichanon, J. Appl. Mech. 81, 2014). docs/CONTROL.md derives
// every equation here.
//
// A run's rows split into servo rows S (the controller's to meet) and physical rows P (the
// plant's own constraints, met exactly by the UK equation). At the plant's state the controller
// evaluates its model (hat: parameters p^): M^ = L L^T, Q^, and A, b_stab of both row sets. Its
// nominal constrained motion under an applied force f is
//     qdd(f) = qdd0 + L^-T N L^-1 f,   N = I - B_P^+ B_P,   B_P = A_P L^-T,
// qdd0 the UK acceleration of the physical rows alone. Asking A_S qdd(f) = b_S for f = B u:
//     full actuation (B = I, Gauss weighting u^T M^-1 u):  u = L G^+ r,  G = A_S L^-T N,
//     an actuation matrix B (least norm |u|):              u = G^+ r,    G = A_S L^-T N L^-1 B^,
//     r = b_S - A_S qdd0 (+ the robust term),
// B^ the controller's B (listed coordinates: columns of I; a user model's matrix of expressions
// at p^). Without physical rows and with full actuation this is u = M^1/2 (A M^-1/2)^+ (b - A
// M^-1 Q): the UK constraint force of the controller's model, so with p^ = p the plant moves
// exactly as the UK equation says. The plant then integrates the UK equation of its physical rows
// with applied force Q + B u (B at its own parameters), its non-ideal law (if any) fed the ideal
// force Qc_P + B u.
#pragma once

#include <cstdint>

#include "kernels/uk/actuation.hpp"
#include "kernels/uk/dynamics.hpp"

namespace ukes {

// How a run controls its systems (every system alike; the controller's parameters are per
// system, BatchInputView::control_params).
template <class T>
struct ControlSettings {
  bool active = false;
  std::uint64_t servo_rows = 0;  // bit r: row r (position rows first) is a servo row
  Actuation actuation = Actuation::kFull;
  std::uint64_t actuated = ~std::uint64_t{0};  // kCoordinates: bit j, coordinate j is actuated
  T gain = T(0);  // robust term: r -= gain sigma / (|sigma| + epsilon); 0: none
  T epsilon = T(1e-3);
  // Bit r: servo row r sees the input only through derivatives beyond its own order (a position
  // row's second, a velocity row's first); relative_degree[r] says through which.
  std::uint64_t higher_degree_rows = 0;
  std::uint8_t relative_degree[kMaxControlRows] = {};
};

// The same settings in scalar S (a right-hand side evaluated on duals,
// kernels/uk/dynamics_jacobian.hpp).
template <class S, class T>
UKES_HD ControlSettings<S> settings_in(const ControlSettings<T>& c) {
  ControlSettings<S> r;
  r.active = c.active;
  r.servo_rows = c.servo_rows;
  r.actuation = c.actuation;
  r.actuated = c.actuated;
  r.gain = S(c.gain);
  r.epsilon = S(c.epsilon);
  r.higher_degree_rows = c.higher_degree_rows;
  for (int k = 0; k < kMaxControlRows; ++k) r.relative_degree[k] = c.relative_degree[k];
  return r;
}

UKES_HD UKES_INLINE bool has_bit(std::uint64_t mask, int k) {
  return k < kMaxControlRows && ((mask >> k) & 1u) != 0;
}

// The mask of rows 0 .. rows - 1 (rows <= kMaxControlRows): "control.rows": "all".
UKES_HD UKES_INLINE std::uint64_t all_rows_mask(int rows) {
  return rows >= kMaxControlRows ? ~std::uint64_t{0} : (std::uint64_t{1} << rows) - 1;
}

// A and b with the rows outside `mask` zeroed: a zero row constrains nothing.
template <class T, int R, int C>
UKES_HD void keep_rows(std::uint64_t mask, Mat<T, R, C>& A, Vec<T, R>& b) {
  for (int r = 0; r < R; ++r) {
    if (has_bit(mask, r)) continue;
    b[r] = T(0);
    for (int j = 0; j < C; ++j) A(r, j) = T(0);
  }
}

// The robust term's sliding variable per servo row: sigma = phid + lambda phi for position rows,
// psi for velocity rows, with lambda the slower root of s^2 + alpha s + beta (alpha / 2 when the
// roots are complex), so that sigma -> 0 makes the Baumgarte error dynamics hold.
template <class Model, class T>
UKES_HD Vec<T, kRows<Model>> sliding_variable(const ConstraintForm<Model, T>& form,
                                              const DynamicsSettings<T>& s, std::uint64_t servo) {
  const T disc = s.alpha * s.alpha - T(4) * s.beta;
  const T lambda = disc > T(0) ? (s.alpha - sqrt(disc)) / T(2) : s.alpha / T(2);
  auto sigma = Vec<T, kRows<Model>>::zero();
  for (int r = 0; r < kRows<Model>; ++r) {
    if (!has_bit(servo, r)) continue;
    sigma[r] = r < form.position_rows ? form.rate[r] + lambda * form.value[r] : form.value[r];
  }
  return sigma;
}

// Whether every row of the model is a servo row. The physical rows' B_P is then zero, and so is
// B_P^+: the controller's nominal motion and the plant's are unconstrained, and no factorization
// of the zero matrix is spent to find that (zero_matrix_pinv).
template <class Model, class T>
UKES_HD bool every_row_servo(const Model& model, const ControlSettings<T>& c) {
  const int rows = model_shape(model).rows();
  for (int r = 0; r < rows; ++r)
    if (!has_bit(c.servo_rows, r)) return false;
  return true;
}

// The pseudoinverse of a zero matrix, of the type make_pinv gives: rank 0, applied it gives 0
// (the rank rule keeps no singular value of zero factors).
template <class Pinv, class T>
UKES_HD UKES_INLINE Pinv zero_matrix_pinv(T rtol) {
  return Pinv(typename Pinv::Factors{}, rtol);
}

// The physical rows' pseudoinverse B_P^+, B_P = A_P L^-T.
template <class Model, class T, class Factor, int R, int N>
UKES_HD UKES_INLINE auto physical_rows_pinv(const Model& model, const Factor& L,
                                            const Mat<T, R, N>& A_phys, T rtol, bool none) {
  using Pinv =
      decltype(make_pinv(right_solved_lower_transpose(L, A_phys), rtol, active_block(model)));
  if (none) return zero_matrix_pinv<Pinv>(rtol);
  return make_pinv(right_solved_lower_transpose(L, A_phys), rtol, active_block(model));
}

// uk_solve (kernels/uk/uk_solver.hpp) for the plant when every row is a servo row: A is zero, so
// the solution is a = M^-1 Q with the non-ideal law's force added, as uk_solve finds it.
template <class Model, class T, int R, int N, class NonIdeal>
UKES_HD UkSolution<T, N> uk_solve_zero_rows(const Model& model, const Mat<T, N, N>& mass,
                                            const Vec<T, N>& Q, const Mat<T, R, N>& A,
                                            const Vec<T, R>& b, const NonIdeal& nonideal, T rtol) {
  CholeskyFactor<T, N> L;
  T shift;  // any augmentation adds shift A^T A = 0: the factor is that of M
  if (!factor_mass_or_augmented(mass, A, L, shift)) return uk_mass_failure<T, N>();
  UkSolution<T, N> s;
  s.a = cholesky_solve(L, Q);
  using Pinv = decltype(make_pinv(right_solved_lower_transpose(L, A), rtol, active_block(model)));
  uk_finish(L, A, b, zero_matrix_pinv<Pinv>(rtol), nonideal, s);
  return s;
}

// v - B_P^+ (B_P v): the part of v in the null space of the physical rows' B_P = A_P L^-T.
template <class T, int R, int N, class Factor, class Pinv>
UKES_HD Vec<T, N> null_part(const Factor& L, const Mat<T, R, N>& A_phys, const Pinv& Bp,
                            const Vec<T, N>& v) {
  if constexpr (R > 0) {
    return v - Bp.apply(A_phys * solve_lower_transpose(L, v));
  } else {
    (void)L, (void)A_phys, (void)Bp;
    return v;
  }
}

// Whether Model has an actuation matrix of expressions (a user model's hook). A run spec asks
// Actuation::kMatrix of no other model (service/runspec/run_spec.cpp), so the kernels of the
// others carry no code for it.
template <class Model, class T>
inline constexpr bool kHasActuationMatrix = requires(const Model& model, const Vec<T, Model::kN>& x,
                                                     T t, const T* p,
                                                     Mat<T, Model::kN, Model::kN>& B) {
  model.actuation(x, x, t, p, B);
};

// The actuation matrix B (n x n, zero past its k columns) at (q, qd, t) with parameters p.
template <class Model, class T>
UKES_HD Mat<T, Model::kN, Model::kN> actuation_matrix(const Model& model,
                                                      const Vec<T, Model::kN>& q,
                                                      const Vec<T, Model::kN>& qd, T t,
                                                      const T* p) {
  Mat<T, Model::kN, Model::kN> B = Mat<T, Model::kN, Model::kN>::zero();
  model.actuation(q, qd, t, p, B);
  return B;
}

// G = A_S L^-T N (full actuation) or A_S L^-T N L^-1 B (listed coordinates), row by row: row i
// is N L^-1 a_i (resp. its L^-T N L^-1 a_i at the actuated coordinates, B being columns of I) for
// the servo row a_i of A. For an actuation matrix, A_S L^-T N L^-1 (servo_control multiplies B).
template <class T, int R, int N, class Factor, class Pinv>
UKES_HD Mat<T, R, N> servo_gain_matrix(const Factor& L, const Mat<T, R, N>& A_servo,
                                       const Mat<T, R, N>& A_phys, const Pinv& Bp,
                                       const ControlSettings<T>& c) {
  Mat<T, R, N> G = Mat<T, R, N>::zero();
  for (int i = 0; i < R; ++i) {
    if (!has_bit(c.servo_rows, i)) continue;
    Vec<T, N> a;
    for (int j = 0; j < N; ++j) a[j] = A_servo(i, j);
    Vec<T, N> g = null_part(L, A_phys, Bp, solve_lower(L.L, a));
    if (c.actuation != Actuation::kFull) g = solve_lower_transpose(L, g);
    for (int j = 0; j < N; ++j)
      G(i, j) = c.actuation != Actuation::kCoordinates || has_bit(c.actuated, j) ? g[j] : T(0);
  }
  return G;
}

// The control u the controller commands at the plant's state (q, qd, t), from its own model
// (parameters p_hat): the force itself for full actuation and listed coordinates (B u = u), the
// k actuator inputs (then zeros) for an actuation matrix. NaN when the controller's mass is not
// positive definite (not even with its physical rows).
template <class Model, class T>
UKES_HD Vec<T, Model::kN> servo_control(const Model& model, const Vec<T, Model::kN>& q,
                                        const Vec<T, Model::kN>& qd, T t, const T* p_hat,
                                        const DynamicsSettings<T>& s, const ControlSettings<T>& c) {
  constexpr int n = Model::kN;
  constexpr int m = kRows<Model>;
  if constexpr (m == 0) {
    (void)model, (void)q, (void)qd, (void)t, (void)p_hat, (void)s, (void)c;
    return Vec<T, n>::zero();  // nothing to follow (a run spec never asks it)
  } else {
    DynamicsInputs<Model, T> in = dynamics_inputs<Model, T>(model, q, qd, t, p_hat, s);
    Mat<T, m, n> A_servo = in.form.A, A_phys = in.form.A;
    Vec<T, m> b_servo = in.bs, b_phys = in.bs;
    keep_rows(c.servo_rows, A_servo, b_servo);
    keep_rows(~c.servo_rows, A_phys, b_phys);

    CholeskyFactor<T, n> L;
    T shift;
    Vec<T, n> u;
    if (!factor_mass_or_augmented(in.M, A_phys, L, shift)) {
      for (int j = 0; j < n; ++j) u[j] = T(NAN);
      return u;
    }
    const T rtol = rank_rtol_of(s, model);
    // qdd0: the nominal motion under the physical rows alone (with their non-ideal forces).
    UkSolution<T, n> nominal;
    nominal.a = cholesky_solve(L, in.Q);
    const auto Bp = physical_rows_pinv(model, L, A_phys, rtol, every_row_servo(model, c));
    uk_finish(L, A_phys, b_phys, Bp, ModelNonIdealForce<Model, T>{model, q, qd, t, p_hat}, nominal);

    Vec<T, m> r = b_servo - A_servo * nominal.qdd;
    if (c.gain > T(0)) {
      const Vec<T, m> sigma = sliding_variable(in.form, s, c.servo_rows);
      r = r - (c.gain / (norm2(sigma) + c.epsilon)) * sigma;
    }
    Mat<T, m, n> G = servo_gain_matrix(L, A_servo, A_phys, Bp, c);
    if constexpr (kHasActuationMatrix<Model, T>) {
      if (c.actuation == Actuation::kMatrix)
        G = G * actuation_matrix<Model, T>(model, q, qd, t, p_hat);
    }
    const Vec<T, n> x = make_pinv(G, rtol, active_block(model)).apply(r);
    return c.actuation == Actuation::kFull ? lower_times(L, x) : x;
  }
}

// The plant's right-hand side under the control u (servo_control's): the UK equation of its
// physical rows with applied force Q + B u. The evaluation's form holds every row at the plant
// (servo rows: the tracking error), its constraint force the physical rows' alone.
template <class Model, class T>
UKES_HD DynamicsEval<Model, T> controlled_plant_dynamics(
    const Model& model, const Vec<T, Model::kN>& q, const Vec<T, Model::kN>& qd, T t, const T* p,
    const DynamicsSettings<T>& s, const ControlSettings<T>& c, Vec<T, Model::kN> u) {
  if constexpr (kHasActuationMatrix<Model, T>) {
    // The force B u the plant feels, its B at its own parameters.
    if (c.actuation == Actuation::kMatrix) u = actuation_matrix<Model, T>(model, q, qd, t, p) * u;
  }
  DynamicsInputs<Model, T> in = dynamics_inputs<Model, T>(model, q, qd, t, p, s);
  Mat<T, kRows<Model>, Model::kN> A_phys = in.form.A;
  Vec<T, kRows<Model>> b_phys = in.bs;
  keep_rows(~c.servo_rows, A_phys, b_phys);
  // A non-ideal law (friction) sees the ideal force the plant feels: the physical rows' and the
  // control's (docs/CONTROL.md, "Non-ideal constraints").
  const ModelNonIdealForce<Model, T> nonideal{model, q, qd, t, p};
  const ShiftedNonIdeal<T, Model::kN, ModelNonIdealForce<Model, T>> with_control{nonideal,
                                                                                 T(-1) * u};
  const T rtol = rank_rtol_of(s, model);
  const auto uk =
      every_row_servo(model, c)
          ? uk_solve_zero_rows(model, in.M, in.Q + u, A_phys, b_phys, with_control, rtol)
          : uk_solve(in.M, in.Q + u, A_phys, b_phys, with_control, rtol, active_block(model));
  DynamicsEval<Model, T> e = dynamics_report<Model, T>(in.form, b_phys, uk);
  e.control = u;
  return e;
}

// One right-hand side of a controlled system: the control from the controller's model, then the
// plant under it.
template <class Model, class T>
UKES_HD DynamicsEval<Model, T> evaluate_controlled_dynamics(
    const Model& model, const Vec<T, Model::kN>& q, const Vec<T, Model::kN>& qd, T t, const T* p,
    const T* p_hat, const DynamicsSettings<T>& s, const ControlSettings<T>& c) {
  if constexpr (kRows<Model> == 0) {
    (void)p_hat, (void)c;
    return evaluate_dynamics<Model, T>(model, q, qd, t, p, s);
  } else {
    return controlled_plant_dynamics<Model, T>(
        model, q, qd, t, p, s, c, servo_control<Model, T>(model, q, qd, t, p_hat, s, c));
  }
}

// evaluate_controlled_dynamics for a controller with servo rows of a higher relative degree
// (ControlSettings::higher_degree_rows). kernels/uk/servo_derivatives.hpp defines it: the CPU
// backend and the host emulation compile it ahead of time, the CUDA module only in the kernels it
// compiles at run time (kernels/backend/device/system_kernels.hpp, FusedSystem).
template <class Model, class T>
UKES_HD DynamicsEval<Model, T> evaluate_servo_derivative_dynamics(
    const Model& model, const Vec<T, Model::kN>& q, const Vec<T, Model::kN>& qd, T t, const T* p,
    const T* p_hat, const DynamicsSettings<T>& s, const ControlSettings<T>& c);

}  // namespace ukes
