// Planar pendulum in polar coordinates, the rod as a constraint r = L (constrained Lagrangian
// notes).
#pragma once

#include "kernels/models/model_concept.hpp"

namespace ukes::models {

struct PendulumPolar {
  static constexpr const char* kName = "pendulum_polar";
  static constexpr const char* kSource =
      "Constrained Lagrangian notes: planar pendulum in polar coordinates";
  static constexpr int kN = 2;
  static constexpr int kPositionRows = 1;
  static constexpr int kVelocityRows = 0;
  static constexpr bool kNonIdeal = false;
  enum Param { m, L, g, fx };
  static constexpr ParamSpec kParams[] = {{"m", 1.0}, {"L", 1.0}, {"g", 9.81}, {"fx", 0.0}};
  // th from the downward vertical; fx is a horizontal force on the bob.
  static constexpr const char* kCoordinates[] = {"r", "th"};
  static constexpr double kTEnd = 10.0;
  static constexpr Gains kGains = {};

  template <class T>
  UKES_HD static void mass(const Vec<T, kN>& q, T, const T* p, Mat<T, kN, kN>& M) {
    M(0, 0) = p[m];
    M(0, 1) = T(0);
    M(1, 0) = T(0);
    M(1, 1) = p[m] * q[0] * q[0];
  }

  template <class T>
  UKES_HD static void force(const Vec<T, kN>& q, const Vec<T, kN>& qd, T, const T* p,
                            Vec<T, kN>& Q) {
    const T r = q[0], rd = qd[0], thd = qd[1];
    const T s = sin(q[1]), c = cos(q[1]);
    Q[0] = p[m] * r * thd * thd + p[m] * p[g] * c + p[fx] * s;
    Q[1] = -T(2) * p[m] * r * rd * thd - p[m] * p[g] * r * s + p[fx] * r * c;
  }

  template <class S, class T>
  UKES_HD static void position_rows(const Vec<S, kN>& q, S, const T* p, S* phi) {
    phi[0] = q[0] - p[L];
  }

  template <class S, class T>
  UKES_HD static void velocity_rows(const Vec<S, kN>&, const Vec<S, kN>&, S, const T*, S*) {}

  template <class T>
  UKES_HD static void initial_state(const T* p, Vec<T, kN>& q, Vec<T, kN>& qd) {
    q[0] = p[L];
    q[1] = T(1.0471975511965976);  // pi / 3
    qd[0] = T(0);
    qd[1] = T(0);
  }
};

}  // namespace ukes::models
