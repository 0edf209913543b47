// The benchmark models (scara, four_bar, swarm, duffing) written again with Eigen, independently of
// kernels/: mass matrix M(q), forces Q(q, qd, t), and the constraint rows already in second-order
// form A qdd = b (derived by hand from docs/MODELS.md), with the rows' values and rates for the
// Baumgarte terms. Default parameters only: the peers integrate the default systems from
// perturbed initial conditions that the ensemble driver writes.
#pragma once

#include <Eigen/Dense>
#include <cmath>

namespace ukes::peers {

template <int N, int M>
struct ConstraintRows {
  Eigen::Matrix<double, M, N> A;
  Eigen::Matrix<double, M, 1> b;      // unstabilized
  Eigen::Matrix<double, M, 1> value;  // phi (position rows), psi (velocity rows)
  Eigen::Matrix<double, M, 1> rate;   // phid (position rows)
};

struct ScaraEigen {
  static constexpr const char* kName = "scara";
  static constexpr int kN = 4, kM = 4, kPositionRows = 4;
  static constexpr double kAlpha = 30.0, kBeta = 225.0;
  using VecN = Eigen::Matrix<double, kN, 1>;
  static constexpr double m1 = 20, m2 = 15, m3 = 15, m4 = 0.5, l0 = 0, l1 = 0.2, l2 = 0.25,
                          r1 = 0.1, r2 = 0.125, Iz1 = 0.27, Iz2 = 0.31, Iz3 = 0.02, Iz4 = 0.0001,
                          g = 9.81, xc = 0, yc = 0.35, R = 0.05, Omega = 1.2566370614359172,
                          vz = 0.02, psi0 = 0;
  static constexpr double Al = Iz1 + r1 * r1 * m1 + l1 * l1 * (m2 + m3 + m4);
  static constexpr double Be = Iz2 + Iz3 + Iz4 + l2 * l2 * (m3 + m4) + m2 * r2 * r2;
  static constexpr double Ga = l1 * l2 * (m3 + m4) + l1 * m2 * r2;
  static constexpr double De = Iz3 + Iz4;

  static Eigen::Matrix<double, kN, kN> mass(const VecN& q) {
    const double c2 = std::cos(q[1]);
    Eigen::Matrix<double, kN, kN> M;
    M << Al + Be + 2 * Ga * c2, Be + Ga * c2, De, 0,  //
        Be + Ga * c2, Be, De, 0,                      //
        De, De, De, 0,                                //
        0, 0, 0, m4;
    return M;
  }
  static VecN force(const VecN& q, const VecN& qd, double) {
    const double s2 = std::sin(q[1]);
    return VecN(Ga * s2 * qd[1] * (2 * qd[0] + qd[1]), -Ga * s2 * qd[0] * qd[0], 0.0, -m4 * g);
  }
  static ConstraintRows<kN, kM> rows(const VecN& q, const VecN& qd, double t) {
    const double s1 = std::sin(q[0]), c1 = std::cos(q[0]);
    const double s12 = std::sin(q[0] + q[1]), c12 = std::cos(q[0] + q[1]);
    const double sw = std::sin(Omega * t), cw = std::cos(Omega * t);
    const double w1 = qd[0], w12 = qd[0] + qd[1];
    ConstraintRows<kN, kM> r;
    r.A << -l1 * c1 - l2 * c12, -l2 * c12, 0, 0,  //
        -l1 * s1 - l2 * s12, -l2 * s12, 0, 0,     //
        1, 1, 1, 0,                               //
        0, 0, 0, 1;
    r.b << -(l1 * s1 * w1 * w1 + l2 * s12 * w12 * w12 + R * Omega * Omega * sw),
        l1 * c1 * w1 * w1 + l2 * c12 * w12 * w12 - R * Omega * Omega * cw, 0, 0;
    r.value << -l1 * s1 - l2 * s12 - xc - R * sw, l1 * c1 + l2 * c12 - yc - R * cw,
        q[0] + q[1] + q[2] - psi0, q[3] + l0 - vz * t;
    // phid = A qd + d phi / dt.
    r.rate = r.A * qd;
    r.rate += Eigen::Matrix<double, kM, 1>(-R * Omega * cw, R * Omega * sw, 0.0, -vz);
    return r;
  }
};

struct FourBarEigen {
  static constexpr const char* kName = "four_bar";
  static constexpr int kN = 9, kM = 8, kPositionRows = 8;
  static constexpr double kAlpha = 0.0, kBeta = 0.0;
  using VecN = Eigen::Matrix<double, kN, 1>;
  static constexpr double L1 = 1, L2 = 3, L3 = 2, d = 2.5, m1 = 1, m2 = 3, m3 = 2, g = 9.81,
                          tau = 0;

  static Eigen::Matrix<double, kN, kN> mass(const VecN&) {
    Eigen::Matrix<double, kN, 1> diag;
    diag << m1, m1, m1 * L1 * L1 / 12, m2, m2, m2 * L2 * L2 / 12, m3, m3, m3 * L3 * L3 / 12;
    return diag.asDiagonal();
  }
  static VecN force(const VecN&, const VecN&, double) {
    VecN Q = VecN::Zero();
    Q[1] = -m1 * g;
    Q[2] = tau;
    Q[4] = -m2 * g;
    Q[7] = -m3 * g;
    return Q;
  }
  // Bar k (0, 1, 2) has centre (x, y) at q[3k], q[3k + 1] and angle q[3k + 2]; its ends are
  // centre -+ h (cos th, sin th). d^2/dt^2 (h cos th) = -h sin th thdd - h cos th thd^2, so a row
  // holding +h cos th puts -h sin th in A and +h cos th thd^2 in b (and the same for sin).
  static ConstraintRows<kN, kM> rows(const VecN& q, const VecN& qd, double) {
    const double h[3] = {0.5 * L1, 0.5 * L2, 0.5 * L3};
    double c[3], s[3], w2[3];
    for (int k = 0; k < 3; ++k) {
      c[k] = std::cos(q[3 * k + 2]);
      s[k] = std::sin(q[3 * k + 2]);
      w2[k] = qd[3 * k + 2] * qd[3 * k + 2];
    }
    ConstraintRows<kN, kM> r;
    r.A.setZero();
    // E_1^- = O1: x1 - h1 c1 = 0, y1 - h1 s1 = 0.
    r.A(0, 0) = 1;
    r.A(0, 2) = h[0] * s[0];
    r.b[0] = -h[0] * c[0] * w2[0];
    r.value[0] = q[0] - h[0] * c[0];
    r.A(1, 1) = 1;
    r.A(1, 2) = -h[0] * c[0];
    r.b[1] = -h[0] * s[0] * w2[0];
    r.value[1] = q[1] - h[0] * s[0];
    // E_k^+ = E_{k+1}^-: (x_k + h_k c_k) - (x_{k+1} - h_{k+1} c_{k+1}) = 0, and for y.
    for (int k = 0; k < 2; ++k) {
      const int rx = 2 + 2 * k, ry = rx + 1, a = 3 * k, n = 3 * (k + 1);
      r.A(rx, a) = 1;
      r.A(rx, a + 2) = -h[k] * s[k];
      r.A(rx, n) = -1;
      r.A(rx, n + 2) = -h[k + 1] * s[k + 1];
      r.b[rx] = h[k] * c[k] * w2[k] + h[k + 1] * c[k + 1] * w2[k + 1];
      r.value[rx] = q[a] + h[k] * c[k] - (q[n] - h[k + 1] * c[k + 1]);
      r.A(ry, a + 1) = 1;
      r.A(ry, a + 2) = h[k] * c[k];
      r.A(ry, n + 1) = -1;
      r.A(ry, n + 2) = h[k + 1] * c[k + 1];
      r.b[ry] = h[k] * s[k] * w2[k] + h[k + 1] * s[k + 1] * w2[k + 1];
      r.value[ry] = q[a + 1] + h[k] * s[k] - (q[n + 1] - h[k + 1] * s[k + 1]);
    }
    // E_3^+ = O4: x3 + h3 c3 - d = 0, y3 + h3 s3 = 0.
    r.A(6, 6) = 1;
    r.A(6, 8) = -h[2] * s[2];
    r.b[6] = h[2] * c[2] * w2[2];
    r.value[6] = q[6] + h[2] * c[2] - d;
    r.A(7, 7) = 1;
    r.A(7, 8) = h[2] * c[2];
    r.b[7] = h[2] * s[2] * w2[2];
    r.value[7] = q[7] + h[2] * s[2];
    r.rate = r.A * qd;  // scleronomic
    return r;
  }
};

struct SwarmEigen {
  static constexpr const char* kName = "swarm";
  static constexpr int kRobots = 5;
  static constexpr int kN = 2 * kRobots, kM = 2 * kRobots, kPositionRows = 0;
  static constexpr double kAlpha = 5.0, kBeta = 0.0;
  using VecN = Eigen::Matrix<double, kN, 1>;
  static constexpr double robot_mass = 2.0, a = 0.5;

  static Eigen::Matrix<double, kN, kN> mass(const VecN&) {
    return robot_mass * Eigen::Matrix<double, kN, kN>::Identity();
  }
  static VecN force(const VecN&, const VecN&, double) { return VecN::Zero(); }
  // psi_i = qd_i + sum_j d (1 - a / r), d = q_i - q_j, r = |d|; along the motion
  // d/dt [d (1 - a / r)] = dd (1 - a / r) + d a (d . dd) / r^3, so A = I and b = -that sum.
  static ConstraintRows<kN, kM> rows(const VecN& q, const VecN& qd, double) {
    ConstraintRows<kN, kM> r;
    r.A.setIdentity();
    for (int i = 0; i < kRobots; ++i) {
      double psi[2] = {qd[2 * i], qd[2 * i + 1]};
      double bi[2] = {0.0, 0.0};
      for (int j = 0; j < kRobots; ++j) {
        if (j == i) continue;
        const double dx = q[2 * i] - q[2 * j], dy = q[2 * i + 1] - q[2 * j + 1];
        const double dxd = qd[2 * i] - qd[2 * j], dyd = qd[2 * i + 1] - qd[2 * j + 1];
        const double dist = std::sqrt(dx * dx + dy * dy);
        const double w = 1.0 - a / dist;
        const double radial = a * (dx * dxd + dy * dyd) / (dist * dist * dist);
        psi[0] += dx * w;
        psi[1] += dy * w;
        bi[0] -= dxd * w + dx * radial;
        bi[1] -= dyd * w + dy * radial;
      }
      r.value[2 * i] = psi[0];
      r.value[2 * i + 1] = psi[1];
      r.b[2 * i] = bi[0];
      r.b[2 * i + 1] = bi[1];
    }
    r.rate.setZero();
    return r;
  }
};

struct DuffingEigen {
  static constexpr const char* kName = "duffing";
  static constexpr int kN = 2, kM = 1, kPositionRows = 1;
  static constexpr double kAlpha = 0.0, kBeta = 0.0;
  using VecN = Eigen::Matrix<double, kN, 1>;
  static constexpr double m1 = 2, m2 = 1, k1 = 10, k2 = 12, k1nl = 1, k2nl = 2, c1 = 0.1, c2 = 0.15,
                          A0 = 1, omega = 6.283185307179586, alpha = 1;

  static Eigen::Matrix<double, kN, kN> mass(const VecN&) { return VecN(m1, m2).asDiagonal(); }
  static VecN force(const VecN& x, const VecN& xd, double) {
    const double d = x[0] - x[1], dd = xd[0] - xd[1];
    const double nl1 = k1nl * d * d * d;
    return VecN(-(k1 * d + c1 * dd + nl1),
                -(-k1 * d + k2 * x[1] - c1 * dd + c2 * xd[1] + k2nl * x[1] * x[1] * x[1] - nl1));
  }
  // phi = x1 - x2 - A0 f(t), f = e^{-alpha t} sin(omega t).
  static ConstraintRows<kN, kM> rows(const VecN& x, const VecN& xd, double t) {
    const double e = std::exp(-alpha * t), s = std::sin(omega * t), c = std::cos(omega * t);
    const double f = e * s;
    const double fd = e * (omega * c - alpha * s);
    const double fdd = e * ((alpha * alpha - omega * omega) * s - 2 * alpha * omega * c);
    ConstraintRows<kN, kM> r;
    r.A << 1, -1;
    r.b << A0 * fdd;
    r.value << x[0] - x[1] - A0 * f;
    r.rate << xd[0] - xd[1] - A0 * fd;
    return r;
  }
};

}  // namespace ukes::peers
