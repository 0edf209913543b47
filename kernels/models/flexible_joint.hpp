// Two-link flexible-joint manipulator under a servo constraint (UK review, sec. 8.3).
#pragma once

#include "kernels/models/model_concept.hpp"

namespace ukes::models {

struct FlexibleJoint {
  static constexpr const char* kName = "flexible_joint";
  static constexpr const char* kSource =
      "UK review sec. 8.3: two-link flexible-joint manipulator under a servo constraint";
  static constexpr int kN = 4;
  static constexpr int kPositionRows = 0;
  static constexpr int kVelocityRows = 1;
  static constexpr bool kNonIdeal = false;
  enum Param { m1, m2, l1, lc1, lc2, I1, I2, J1, J2, K1, K2, g, u1, u2 };
  static constexpr ParamSpec kParams[] = {
      {"m1", 1.0}, {"m2", 1.0}, {"l1", 1.0}, {"lc1", 0.5}, {"lc2", 0.5}, {"I1", 1.0}, {"I2", 1.0},
      {"J1", 1.0}, {"J2", 1.0}, {"K1", 1.0}, {"K2", 1.0},  {"g", 9.81},  {"u1", 0.0}, {"u2", 0.0}};
  // Link angles (from the downward vertical), then motor angles.
  static constexpr const char* kCoordinates[] = {"th1", "th2", "m1ang", "m2ang"};
  static constexpr double kTEnd = 10.0;
  static constexpr Gains kGains = {2.0, 0.0};

  // M = blockdiag(D(th), diag(J1, J2)).
  template <class T>
  UKES_HD static void mass(const Vec<T, kN>& q, T, const T* p, Mat<T, kN, kN>& M) {
    const T c2 = cos(q[1]);
    M = Mat<T, kN, kN>::zero();
    M(0, 0) = p[m2] * (p[l1] * p[l1] + p[lc2] * p[lc2] + T(2) * p[l1] * p[lc2] * c2) +
              p[m1] * p[lc1] * p[lc1] + p[I1] + p[I2];
    M(0, 1) = p[m2] * (p[lc2] * p[lc2] + p[l1] * p[lc2] * c2) + p[I2];
    M(1, 0) = M(0, 1);
    M(1, 1) = p[m2] * p[lc2] * p[lc2] + p[I2];
    M(2, 2) = p[J1];
    M(3, 3) = p[J2];
  }

  // Q = [-C thd - G - K (th - mang); K (th - mang) + u].
  template <class T>
  UKES_HD static void force(const Vec<T, kN>& q, const Vec<T, kN>& qd, T, const T* p,
                            Vec<T, kN>& Q) {
    const T h = p[m2] * p[l1] * p[lc2] * sin(q[1]);
    const T s12 = sin(q[0] + q[1]);
    const T G1 = (p[m1] * p[lc1] + p[m2] * p[l1]) * p[g] * sin(q[0]) + p[m2] * p[lc2] * p[g] * s12;
    const T G2 = p[m2] * p[lc2] * p[g] * s12;
    const T C1 = -h * qd[1] * (T(2) * qd[0] + qd[1]);
    const T C2 = h * qd[0] * qd[0];
    const T spring1 = p[K1] * (q[0] - q[2]);
    const T spring2 = p[K2] * (q[1] - q[3]);
    Q[0] = -C1 - G1 - spring1;
    Q[1] = -C2 - G2 - spring2;
    Q[2] = spring1 + p[u1];
    Q[3] = spring2 + p[u2];
  }

  template <class S, class T>
  UKES_HD static void position_rows(const Vec<S, kN>&, S, const T*, S*) {}

  // Servo constraint: the end link keeps its absolute orientation, th1d + th2d = 0.
  template <class S, class T>
  UKES_HD static void velocity_rows(const Vec<S, kN>&, const Vec<S, kN>& qd, S, const T*, S* psi) {
    psi[0] = qd[0] + qd[1];
  }

  template <class T>
  UKES_HD static void initial_state(const T*, Vec<T, kN>& q, Vec<T, kN>& qd) {
    q = Vec<T, kN>::zero();
    qd = Vec<T, kN>::zero();
    qd[0] = T(1);
    qd[1] = T(-0.1);
  }
};

}  // namespace ukes::models
