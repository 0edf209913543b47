// The stiff method's parts (kernels/integrators/rosenbrock.hpp, kernels/uk/dynamics_jacobian.hpp)
// against independent formulations: a forced, damped oscillator's closed-form solution (order 4,
// the f_t term of a non-autonomous system), the stability function at infinity (L-stability), the
// full 2n x 2n linear system the second-order reduction stands for (dense Eigen), and every
// catalogue model's right-hand side differentiated by central differences.
#include "kernels/integrators/rosenbrock.hpp"

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <random>

#include "kernels/autodiff/dual.hpp"
#include "kernels/ensemble/ensemble.hpp"
#include "kernels/models/dispatch.hpp"
#include "kernels/uk/dynamics_jacobian.hpp"

namespace ukes {
namespace {

// q'' + c q' + k q = F cos(w t), underdamped: the state at t in closed form.
struct ForcedOscillator {
  double c = 0.4, k = 4.0, F = 1.5, w = 1.3;
  double q0 = 1.0, qd0 = 0.0;

  void rhs(double t, const Vec<double, 2>& x, Vec<double, 2>& dx) const {
    dx[0] = x[1];
    dx[1] = F * std::cos(w * t) - c * x[1] - k * x[0];
  }
  SecondOrderJacobian<double, 1> jacobian(double t) const {
    SecondOrderJacobian<double, 1> J;
    J.dq(0, 0) = -k;
    J.dqd(0, 0) = -c;
    J.dt[0] = -F * w * std::sin(w * t);
    return J;
  }
  // Particular solution A cos wt + B sin wt, plus the homogeneous one meeting (q0, qd0).
  double exact_q(double t) const {
    const double d = k - w * w, det = d * d + c * c * w * w;
    const double A = F * d / det, B = F * c * w / det;
    const double decay = c / 2, omega = std::sqrt(k - decay * decay);
    const double C1 = q0 - A, C2 = (qd0 - B * w + decay * C1) / omega;
    return A * std::cos(w * t) + B * std::sin(w * t) +
           std::exp(-decay * t) * (C1 * std::cos(omega * t) + C2 * std::sin(omega * t));
  }
  // The error at t = 5 after fixed steps of RODAS4, and the largest local error estimate's norm.
  double error_after(int steps, double* largest_estimate = nullptr) const {
    const double h = 5.0 / steps;
    Vec<double, 2> x{{q0, qd0}}, k1, y;
    const auto f = [this](double t, const Vec<double, 2>& z, Vec<double, 2>& dz) { rhs(t, z, dz); };
    double estimate = 0;
    for (int s = 0; s < steps; ++s) {
      const double t = s * h;
      rhs(t, x, k1);
      const SecondOrderJacobian<double, 1> J = jacobian(t);
      SecondOrderW<double, 1> W;
      EXPECT_TRUE(W.factor(J, h, 1));
      // With rtol 0 and atol 1 the norm is the RMS of the estimate itself.
      estimate = std::max(estimate, rodas4_step(f, t, x, k1, J, W, h, 0.0, 1.0, y, 1, 2));
      x = y;
    }
    if (largest_estimate) *largest_estimate = estimate;
    return std::abs(x[0] - exact_q(5.0));
  }
};

TEST(Rodas4, ConvergesAtOrderFourWithAThirdOrderErrorEstimate) {
  const ForcedOscillator o;
  double estimate_coarse = 0, estimate_fine = 0;
  const double coarse = o.error_after(100, &estimate_coarse);
  const double fine = o.error_after(200, &estimate_fine);
  // Global error h^4: halving h divides it by 16; the local estimate (h^4, an order-3 method's
  // local error) likewise.
  EXPECT_GT(coarse / fine, 14.0) << coarse << " " << fine;
  EXPECT_LT(coarse / fine, 18.0) << coarse << " " << fine;
  EXPECT_GT(estimate_coarse / estimate_fine, 13.0);
  EXPECT_LT(fine, 1e-8);
}

// y'' = -k y - c y' with k h^2 and c h huge (a double eigenvalue at -1e6, h lambda = -1e5): an
// L-stable method's R(z) -> 0 as z -> -inf (RODAS4's like 9 / |z|), so one step all but removes the
// solution; an A-stable method that is not L-stable (the trapezoidal rule, say) keeps |R| near 1.
TEST(Rodas4, IsLStable) {
  const double k = 1e12, c = 2e6, h = 0.1;
  const auto f = [&](double, const Vec<double, 2>& x, Vec<double, 2>& dx) {
    dx[0] = x[1];
    dx[1] = -k * x[0] - c * x[1];
  };
  SecondOrderJacobian<double, 1> J;
  J.dq(0, 0) = -k;
  J.dqd(0, 0) = -c;
  J.dt[0] = 0;
  SecondOrderW<double, 1> W;
  ASSERT_TRUE(W.factor(J, h, 1));
  Vec<double, 2> x{{1.0, 0.0}}, k1, y;
  f(0, x, k1);
  rodas4_step(f, 0.0, x, k1, J, W, h, 1e-6, 1e-6, y, 1, 2);
  EXPECT_LT(std::abs(y[0]), 1e-3);
  EXPECT_LT(std::abs(y[1]), 1e-3 * std::sqrt(k));
}

TEST(Rodas4, TheSecondOrderReductionSolvesTheWholeSystem) {
  constexpr int n = 4;
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-3, 3);
  SecondOrderJacobian<double, n> J;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      J.dq(i, j) = u(rng);
      J.dqd(i, j) = u(rng);
    }
    J.dt[i] = u(rng);
  }
  for (double h : {1e-4, 0.1, 3.0}) {
    SecondOrderW<double, n> W;
    ASSERT_TRUE(W.factor(J, h, n));
    Vec<double, 2 * n> r, k;
    for (int d = 0; d < 2 * n; ++d) r[d] = u(rng);
    W.solve(J, r, k, n);
    // W = I / (h gamma) - [[0, I], [dq, dqd]], dense.
    Eigen::MatrixXd full = Eigen::MatrixXd::Identity(2 * n, 2 * n) / (h * rodas4::gamma);
    for (int i = 0; i < n; ++i) {
      full(i, n + i) -= 1.0;
      for (int j = 0; j < n; ++j) {
        full(n + i, j) -= J.dq(i, j);
        full(n + i, n + j) -= J.dqd(i, j);
      }
    }
    Eigen::VectorXd ke(2 * n), re(2 * n);
    for (int d = 0; d < 2 * n; ++d) ke[d] = k[d], re[d] = r[d];
    EXPECT_LT((full * ke - re).norm(), 1e-12 * (full.norm() * ke.norm() + re.norm())) << h;
  }
}

// Every catalogue model at a state off its defaults: the Jacobian by duals against central
// differences of the same right-hand side in doubles.
struct JacobianAgainstDifferences {
  const ModelInfo* info;
  std::mt19937* rng;

  template <class Model>
  void operator()() const {
    constexpr int N = Model::kN;
    const Model model{};
    std::vector<double> p = info->default_params();
    std::vector<Dual<double>> pd(p.begin(), p.end());
    Vec<double, N> q, qd;
    for (int j = 0; j < N; ++j) {
      std::uniform_real_distribution<double> jitter(-0.05, 0.05);
      q[j] = info->q0[static_cast<std::size_t>(j)] + jitter(*rng);
      qd[j] = info->qd0[static_cast<std::size_t>(j)] + jitter(*rng);
    }
    const double t = 0.3;
    DynamicsSettings<double> s;  // Baumgarte terms on, so that b's derivative counts too
    s.alpha = 5.0;
    s.beta = 20.0;
    const DynamicsSettings<Dual<double>> sd = settings_in<Dual<double>>(s);
    const auto on_duals = [&](const Vec<Dual<double>, N>& qs, const Vec<Dual<double>, N>& qds,
                              Dual<double> ts) {
      return evaluate_dynamics<Model, Dual<double>>(model, qs, qds, ts, pd.data(), sd);
    };
    SecondOrderJacobian<double, N> J;
    ASSERT_TRUE(second_order_jacobian(on_duals, q, qd, t, N, J)) << info->name;

    const auto qdd = [&](Vec<double, N> qa, Vec<double, N> qda, double ta) {
      return evaluate_dynamics<Model, double>(model, qa, qda, ta, p.data(), s).qdd;
    };
    for (int k = 0; k <= 2 * N; ++k) {
      Vec<double, N> qp = q, qm = q, qdp = qd, qdm = qd;
      double tp = t, tm = t, step;
      if (k < N) {
        step = 1e-6 * std::max(1.0, std::abs(q[k]));
        qp[k] += step, qm[k] -= step;
      } else if (k < 2 * N) {
        step = 1e-6 * std::max(1.0, std::abs(qd[k - N]));
        qdp[k - N] += step, qdm[k - N] -= step;
      } else {
        step = 1e-6;
        tp += step, tm -= step;
      }
      const Vec<double, N> plus = qdd(qp, qdp, tp), minus = qdd(qm, qdm, tm);
      for (int i = 0; i < N; ++i) {
        const double difference = (plus[i] - minus[i]) / (2 * step);
        const double ad = k < N ? J.dq(i, k) : k < 2 * N ? J.dqd(i, k - N) : J.dt[i];
        EXPECT_NEAR(ad, difference, 1e-5 * (1 + std::abs(difference)))
            << info->name << ": d qdd[" << i << "] / d input " << k;
      }
    }
  }
};

TEST(DynamicsJacobian, EveryCatalogueModelMatchesCentralDifferences) {
  std::mt19937 rng(2026);
  int checked = 0;
  for (const ModelInfo& info : catalogue_info()) {
    ASSERT_TRUE(dispatch_model_of(info, JacobianAgainstDifferences{&info, &rng})) << info.name;
    ++checked;
  }
  EXPECT_EQ(checked, 15);
}

}  // namespace
}  // namespace ukes
