// Unconstrained particle in polar coordinates (UK review, example 1): a system with zero
// constraint rows, where the UK equation reduces to M qdd = Q.
#pragma once

#include "kernels/models/model_concept.hpp"

namespace ukes::models {

struct ProjectilePolar {
  static constexpr const char* kName = "projectile_polar";
  static constexpr const char* kSource =
      "UK review, example 1: unconstrained particle in polar coordinates";
  static constexpr int kN = 2;
  static constexpr int kPositionRows = 0;
  static constexpr int kVelocityRows = 0;
  static constexpr bool kNonIdeal = false;
  enum Param { g };
  static constexpr ParamSpec kParams[] = {{"g", 9.81}};
  static constexpr const char* kCoordinates[] = {"r", "th"};
  static constexpr double kTEnd = 0.5;
  static constexpr Gains kGains = {};

  template <class T>
  UKES_HD static void mass(const Vec<T, kN>&, T, const T*, Mat<T, kN, kN>& M) {
    M = Mat<T, kN, kN>::identity();
  }

  template <class T>
  UKES_HD static void force(const Vec<T, kN>& q, const Vec<T, kN>& qd, T, const T* p,
                            Vec<T, kN>& Q) {
    const T r = q[0];
    Q[0] = r * qd[1] * qd[1] - p[g] * sin(q[1]);
    Q[1] = (-T(2) * qd[0] * qd[1] - p[g] * cos(q[1])) / r;
  }

  template <class S, class T>
  UKES_HD static void position_rows(const Vec<S, kN>&, S, const T*, S*) {}

  template <class S, class T>
  UKES_HD static void velocity_rows(const Vec<S, kN>&, const Vec<S, kN>&, S, const T*, S*) {}

  template <class T>
  UKES_HD static void initial_state(const T*, Vec<T, kN>& q, Vec<T, kN>& qd) {
    q[0] = T(1);
    q[1] = T(0.78539816339744831);  // pi / 4
    qd[0] = T(1);
    qd[1] = T(0);
  }
};

}  // namespace ukes::models
