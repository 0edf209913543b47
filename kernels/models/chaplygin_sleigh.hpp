// Chaplygin sleigh: a rigid body on a knife edge that cannot slip sideways (constrained Lagrangian
// notes). q = (x, y, th): centre of mass and heading; the blade sits at P = (x, y) - a (cos th, sin
// th).
#pragma once

#include "kernels/models/model_concept.hpp"

namespace ukes::models {

struct ChaplyginSleigh {
  static constexpr const char* kName = "chaplygin_sleigh";
  static constexpr const char* kSource =
      "Constrained Lagrangian notes: nonholonomic knife edge (Chaplygin sleigh)";
  static constexpr int kN = 3;
  static constexpr int kPositionRows = 0;
  static constexpr int kVelocityRows = 1;
  static constexpr bool kNonIdeal = false;
  enum Param { m, I, a };
  static constexpr ParamSpec kParams[] = {{"m", 1.0}, {"I", 0.1}, {"a", 0.5}};
  static constexpr const char* kCoordinates[] = {"x", "y", "th"};
  static constexpr double kTEnd = 20.0;
  static constexpr Gains kGains = {};

  template <class T>
  UKES_HD static void mass(const Vec<T, kN>&, T, const T* p, Mat<T, kN, kN>& M) {
    M = Mat<T, kN, kN>::zero();
    M(0, 0) = p[m];
    M(1, 1) = p[m];
    M(2, 2) = p[I];
  }

  template <class T>
  UKES_HD static void force(const Vec<T, kN>&, const Vec<T, kN>&, T, const T*, Vec<T, kN>& Q) {
    Q = Vec<T, kN>::zero();
  }

  template <class S, class T>
  UKES_HD static void position_rows(const Vec<S, kN>&, S, const T*, S*) {}

  // The blade's sideways velocity: n . P' with n = (-sin th, cos th).
  template <class S, class T>
  UKES_HD static void velocity_rows(const Vec<S, kN>& q, const Vec<S, kN>& qd, S, const T* p,
                                    S* psi) {
    psi[0] = -sin(q[2]) * qd[0] + cos(q[2]) * qd[1] - p[a] * qd[2];
  }

  template <class T>
  UKES_HD static void initial_state(const T* p, Vec<T, kN>& q, Vec<T, kN>& qd) {
    q[0] = T(0);
    q[1] = T(0);
    q[2] = T(0);
    qd[0] = T(1);
    qd[2] = T(1);
    qd[1] = p[a] * qd[2];
  }
};

}  // namespace ukes::models
