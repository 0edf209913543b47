// Particle under gravity with a nonholonomic Pfaffian constraint xd + 2 z yd + zd = 0
// (UK review, example 4).
#pragma once

#include "kernels/models/model_concept.hpp"

namespace ukes::models {

struct PfaffianParticle {
  static constexpr const char* kName = "pfaffian_particle";
  static constexpr const char* kSource =
      "UK review, example 4: particle with a nonholonomic Pfaffian constraint";
  static constexpr int kN = 3;
  static constexpr int kPositionRows = 0;
  static constexpr int kVelocityRows = 1;
  static constexpr bool kNonIdeal = false;
  enum Param { m, g };
  static constexpr ParamSpec kParams[] = {{"m", 1.0}, {"g", 9.81}};
  static constexpr const char* kCoordinates[] = {"x", "y", "z"};
  static constexpr double kTEnd = 5.0;
  static constexpr Gains kGains = {};

  template <class T>
  UKES_HD static void mass(const Vec<T, kN>&, T, const T* p, Mat<T, kN, kN>& M) {
    M = Mat<T, kN, kN>::zero();
    M(0, 0) = p[m];
    M(1, 1) = p[m];
    M(2, 2) = p[m];
  }

  template <class T>
  UKES_HD static void force(const Vec<T, kN>&, const Vec<T, kN>&, T, const T* p, Vec<T, kN>& Q) {
    Q[0] = T(0);
    Q[1] = T(0);
    Q[2] = -p[m] * p[g];
  }

  template <class S, class T>
  UKES_HD static void position_rows(const Vec<S, kN>&, S, const T*, S*) {}

  template <class S, class T>
  UKES_HD static void velocity_rows(const Vec<S, kN>& q, const Vec<S, kN>& qd, S, const T*,
                                    S* psi) {
    psi[0] = qd[0] + T(2) * q[2] * qd[1] + qd[2];
  }

  template <class T>
  UKES_HD static void initial_state(const T*, Vec<T, kN>& q, Vec<T, kN>& qd) {
    q = Vec<T, kN>::zero();
    qd[0] = T(1);
    qd[1] = T(1);
    qd[2] = T(-1);
  }
};

}  // namespace ukes::models
