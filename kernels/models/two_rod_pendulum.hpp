// Bob held by two rods, one from the origin, one from (L1, 0, L2): out-of-plane motion
// (UK thesis, sec. 3.4).
#pragma once

#include "kernels/models/model_concept.hpp"

namespace ukes::models {

struct TwoRodPendulum {
  static constexpr const char* kName = "two_rod_pendulum";
  static constexpr const char* kSource =
      "UK thesis sec. 3.4: bob held by two rods, out-of-plane motion";
  static constexpr int kN = 3;
  static constexpr int kPositionRows = 2;
  static constexpr int kVelocityRows = 0;
  static constexpr bool kNonIdeal = false;
  enum Param { L1, L2, g, m };
  static constexpr ParamSpec kParams[] = {{"L1", 1.0}, {"L2", 1.0}, {"g", 10.0}, {"m", 1.0}};
  static constexpr const char* kCoordinates[] = {"x", "y", "z"};
  static constexpr double kTEnd = 3.0;
  static constexpr Gains kGains = {};

  template <class T>
  UKES_HD static void mass(const Vec<T, kN>&, T, const T* p, Mat<T, kN, kN>& M) {
    M = Mat<T, kN, kN>::zero();
    for (int j = 0; j < kN; ++j) M(j, j) = p[m];
  }

  // Gravity along +x.
  template <class T>
  UKES_HD static void force(const Vec<T, kN>&, const Vec<T, kN>&, T, const T* p, Vec<T, kN>& Q) {
    Q[0] = p[m] * p[g];
    Q[1] = T(0);
    Q[2] = T(0);
  }

  template <class S, class T>
  UKES_HD static void position_rows(const Vec<S, kN>& q, S, const T* p, S* phi) {
    const S dx = q[0] - p[L1];
    const S dz = q[2] - p[L2];
    phi[0] = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] - p[L2] * p[L2];
    phi[1] = dx * dx + q[1] * q[1] + dz * dz - p[L1] * p[L1];
  }

  template <class S, class T>
  UKES_HD static void velocity_rows(const Vec<S, kN>&, const Vec<S, kN>&, S, const T*, S*) {}

  // The seed's (1, 0, 0) with velocity (0, 4, 0), generalized to any rod lengths: the point of the
  // two spheres' intersection in the plane y = 0 other than (0, 0, L2), i.e.
  // (2 L1 L2^2, 0, L2 (L2^2 - L1^2)) / (L1^2 + L2^2); the y axis is tangent to both spheres there.
  template <class T>
  UKES_HD static void initial_state(const T* p, Vec<T, kN>& q, Vec<T, kN>& qd) {
    const T s = p[L1] * p[L1] + p[L2] * p[L2];
    q[0] = T(2) * p[L1] * p[L2] * p[L2] / s;
    q[1] = T(0);
    q[2] = p[L2] * (p[L2] * p[L2] - p[L1] * p[L1]) / s;
    qd[0] = T(0);
    qd[1] = T(4);
    qd[2] = T(0);
  }
};

}  // namespace ukes::models
