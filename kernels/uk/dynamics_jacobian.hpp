// The exact Jacobian of a right-hand side x' = (qd, qdd(t, q, qd)) by forward-mode automatic
// differentiation: the whole evaluation (the model's mass, forces and constraint rows, the
// constraint form, the UK solve with its pseudoinverse, a controller's own model) runs on duals,
// one seeded input at a time (kernels/autodiff/dual.hpp). What the stiff integrator needs
// (kernels/integrators/rosenbrock.hpp): d qdd / d q, d qdd / d qd and d qdd / d t.
//
// Branches (pivots, the pseudoinverse's rank decision, QR or SVD) are taken at the value, so the
// result is the derivative of the evaluation as it branches there: the true Jacobian wherever the
// rank of the constraint rows is locally constant, which is where the UK equation is smooth.
#pragma once

#include "kernels/autodiff/dual.hpp"
#include "kernels/integrators/rosenbrock.hpp"
#include "kernels/uk/servo_control.hpp"

namespace ukes {

// The 2n + 1 seeded evaluations over a model's own n coordinates (a bucket's padding keeps zero
// columns): evaluate(q, qd, t) returns the DynamicsEval on duals. False when an evaluation found
// the mass matrix not positive definite.
template <class T, int N, class Evaluate>
UKES_HD bool second_order_jacobian(const Evaluate& evaluate, const Vec<T, N>& q,
                                   const Vec<T, N>& qd, T t, int n, SecondOrderJacobian<T, N>& J) {
  using D = Dual<T>;
  J.dq = Mat<T, N, N>::zero();
  J.dqd = Mat<T, N, N>::zero();
  J.dt = Vec<T, N>::zero();
  Vec<D, N> qs, qds;
  for (int j = 0; j < N; ++j) {
    qs[j] = D(q[j], T(0));
    qds[j] = D(qd[j], T(0));
  }
  // Input k: q_k for k < n, qd_(k-n) for k < 2n, t for k = 2n.
  for (int k = 0; k <= 2 * n; ++k) {
    if (k < n) qs[k].d = T(1);
    if (k >= n && k < 2 * n) qds[k - n].d = T(1);
    const auto e = evaluate(qs, qds, D(t, k == 2 * n ? T(1) : T(0)));
    if (k < n) qs[k].d = T(0);
    if (k >= n && k < 2 * n) qds[k - n].d = T(0);
    if (!e.mass_ok) return false;
    for (int i = 0; i < n; ++i) {
      const T derivative = e.qdd[i].d;
      if (k < n) {
        J.dq(i, k) = derivative;
      } else if (k < 2 * n) {
        J.dqd(i, k - n) = derivative;
      } else {
        J.dt[i] = derivative;
      }
    }
  }
  return true;
}

}  // namespace ukes
