// RODAS4: the L-stable, stiffly accurate Rosenbrock method of order 4 with an embedded method of
// order 3, by Hairer & Wanner ("Solving Ordinary Differential Equations II", 2nd ed., Springer
// 1996, sec. VI.4 and the code RODAS), for stiff systems: a friction ring's bead once it sticks,
// stiff springs, large Baumgarte gains. In the form of Hairer's code, with W = I / (h gamma) - J,
//     W K_i = f(t + alpha_i h, x + sum_j a_ij K_j) + sum_j (c_ij / h) K_j + h gamma_i f_t,
//     x_new = x + sum_i m_i K_i,   the local error estimate K_6 (x_new minus the 3rd-order result).
// J = df/dx and f_t = df/dt at (t, x) are exact (kernels/uk/dynamics_jacobian.hpp). Each step
// costs one Jacobian, one factorization and five right-hand sides (the sixth, at x_new, starts the
// next step). docs/INTEGRATORS.md derives the second-order reduction below and the step control.
#pragma once

#include "kernels/linalg/lu.hpp"

namespace ukes {

namespace rodas4 {
inline constexpr int kStages = 6;
inline constexpr double gamma = 0.25;

// Tables indexed [i * kStages + j] (strictly lower triangular), and by stage. Local constants of
// device functions, so that device code indexes them at run time (a namespace-scope array would
// be host memory).
UKES_HD UKES_INLINE double a(int i, int j) {
  constexpr double table[kStages * kStages] = {0,
                                               0,
                                               0,
                                               0,
                                               0,
                                               0,  //
                                               1.544,
                                               0,
                                               0,
                                               0,
                                               0,
                                               0,
                                               0.9466785280815826,
                                               0.2557011698983284,
                                               0,
                                               0,
                                               0,
                                               0,
                                               3.314825187068521,
                                               2.896124015972201,
                                               0.9986419139977817,
                                               0,
                                               0,
                                               0,
                                               1.221224509226641,
                                               6.019134481288629,
                                               12.53708332932087,
                                               -0.6878860361058950,
                                               0,
                                               0,
                                               1.221224509226641,
                                               6.019134481288629,
                                               12.53708332932087,
                                               -0.6878860361058950,
                                               1.0,
                                               0};
  return table[i * kStages + j];
}
UKES_HD UKES_INLINE double c(int i, int j) {
  constexpr double table[kStages * kStages] = {0,
                                               0,
                                               0,
                                               0,
                                               0,
                                               0,  //
                                               -5.6688,
                                               0,
                                               0,
                                               0,
                                               0,
                                               0,
                                               -2.430093356833875,
                                               -0.2063599157091915,
                                               0,
                                               0,
                                               0,
                                               0,
                                               -0.1073529058151375,
                                               -9.594562251023355,
                                               -20.47028614809616,
                                               0,
                                               0,
                                               0,
                                               7.496443313967647,
                                               -10.24680431464352,
                                               -33.99990352819905,
                                               11.70890893206160,
                                               0,
                                               0,
                                               8.083246795921522,
                                               -7.981132988064893,
                                               -31.52159432874371,
                                               16.31930543123136,
                                               -6.058818238834054,
                                               0};
  return table[i * kStages + j];
}
// The stage's time, t + alpha_i h, and the weight of f_t in it.
UKES_HD UKES_INLINE double alpha(int i) {
  constexpr double table[kStages] = {0, 0.386, 0.210, 0.630, 1, 1};
  return table[i];
}
UKES_HD UKES_INLINE double gamma_sum(int i) {
  constexpr double table[kStages] = {0.25, -0.1043, 0.1035, -0.0362, 0, 0};
  return table[i];
}
}  // namespace rodas4

// The exact first-order Jacobian of x' = (qd, qdd(t, q, qd)) in its three blocks:
//     J = [[0, I], [dq, dqd]],   f_t = (0, dt).
template <class T, int N>
struct SecondOrderJacobian {
  Mat<T, N, N> dq;   // d qdd / d q
  Mat<T, N, N> dqd;  // d qdd / d qd
  Vec<T, N> dt;      // d qdd / d t
};

// W = sigma I - J with sigma = 1 / (h gamma), solved through the n x n matrix
//     S = sigma^2 I - sigma dqd - dq:
// W (u, v) = (r1, r2) means sigma u - v = r1 and -dq u + (sigma I - dqd) v = r2, so
// v = sigma u - r1 and S u = r2 + (sigma I - dqd) r1. One n x n factorization instead of a
// 2n x 2n one: an eighth of the flops and a quarter of the storage.
template <class T, int N>
struct SecondOrderW {
  LuFactor<T, N> s;
  T sigma;

  // Over the leading n coordinates (a bucket model's own). False: S is singular at working
  // precision, and the step is retried shorter.
  UKES_HD bool factor(const SecondOrderJacobian<T, N>& J, T h, int n) {
    sigma = T(1) / (h * T(rodas4::gamma));
    Mat<T, N, N> S;
    for (int i = 0; i < N; ++i)
      for (int j = 0; j < N; ++j)
        S(i, j) = -sigma * J.dqd(i, j) - J.dq(i, j) + (i == j ? sigma * sigma : T(0));
    return lu_factor(S, s, n);
  }

  // k = W^-1 r for the first-order state r = (r1, r2) of 2N components (q's, then qd's).
  UKES_HD void solve(const SecondOrderJacobian<T, N>& J, const Vec<T, 2 * N>& r, Vec<T, 2 * N>& k,
                     int n) const {
    Vec<T, N> rhs = Vec<T, N>::zero();
    for (int i = 0; i < n; ++i) {
      T s_i = r[N + i] + sigma * r[i];
      for (int j = 0; j < n; ++j) s_i -= J.dqd(i, j) * r[j];
      rhs[i] = s_i;
    }
    const Vec<T, N> u = lu_solve(s, rhs, n);
    for (int i = 0; i < N; ++i) {
      k[i] = i < n ? u[i] : T(0);
      k[N + i] = i < n ? sigma * u[i] - r[i] : T(0);
    }
  }
};

// One trial step from (t, x) with k1 = f(t, x), J and f_t at (t, x) and W factored for h: the new
// state y and the scaled RMS norm of the error estimate over the first `size` components (accept
// when <= 1; a non-finite stage gives a non-finite norm). f(t, x, dx) is the right-hand side;
// n is the number of coordinates W was factored over.
template <class T, int N, class F>
UKES_HD T rodas4_step(F& f, T t, const Vec<T, 2 * N>& x, const Vec<T, 2 * N>& k1,
                      const SecondOrderJacobian<T, N>& J, const SecondOrderW<T, N>& W, T h, T rtol,
                      T atol, Vec<T, 2 * N>& y, int n, int size) {
  using namespace rodas4;
  constexpr int D = 2 * N;
  Vec<T, D> K[kStages];
  Vec<T, D> fi = k1, r;
  for (int i = 0; i < kStages; ++i) {
    if (i > 0) {
      for (int d = 0; d < D; ++d) {
        T s = x[d];
        for (int j = 0; j < i; ++j) s += T(a(i, j)) * K[j][d];
        y[d] = s;
      }
      f(t + T(alpha(i)) * h, y, fi);
    }
    r = fi;
    for (int j = 0; j < i; ++j) {
      const T c_over_h = T(c(i, j)) / h;  // once per stage pair, not per component
      for (int d = 0; d < D; ++d) r[d] += c_over_h * K[j][d];
    }
    for (int j = 0; j < N; ++j) r[N + j] += h * T(gamma_sum(i)) * J.dt[j];
    W.solve(J, r, K[i], n);
  }
  // Stiffly accurate: m_j = a_6j for j < 6 and m_6 = 1, so x_new is the last stage's input
  // (in y) plus K_6.
  T sum = T(0);
  for (int d = 0; d < D; ++d) {
    const T xn = y[d] + K[kStages - 1][d];
    const T scale = atol + rtol * max_of(abs(x[d]), abs(xn));
    sum += square(K[kStages - 1][d] / scale);
    y[d] = xn;
  }
  return sqrt(sum / T(size > 0 ? size : 1));
}

}  // namespace ukes
