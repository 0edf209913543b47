// Bead on a vertical ring with Coulomb friction: a non-ideal constraint (seed "On constrained
// motion"). The friction force C = -mu |N| v / sqrt(|v|^2 + eps^2) depends on the normal force N,
// the ideal constraint force the UK equation supplies; eps regularizes the sign of v.
#pragma once

#include "kernels/models/model_concept.hpp"

namespace ukes::models {

struct FrictionRing {
  static constexpr const char* kName = "friction_ring";
  static constexpr const char* kSource =
      "Seed \"On constrained motion\": bead on a vertical ring with Coulomb friction";
  static constexpr int kN = 2;
  static constexpr int kPositionRows = 1;
  static constexpr int kVelocityRows = 0;
  static constexpr bool kNonIdeal = true;
  enum Param { m, R, g, mu, eps };
  static constexpr ParamSpec kParams[] = {
      {"m", 1.0}, {"R", 1.0}, {"g", 9.81}, {"mu", 0.2}, {"eps", 1e-3}};
  static constexpr const char* kCoordinates[] = {"x", "y"};
  static constexpr double kTEnd = 10.0;
  static constexpr Gains kGains = {};

  template <class T>
  UKES_HD static void mass(const Vec<T, kN>&, T, const T* p, Mat<T, kN, kN>& M) {
    M(0, 0) = p[m];
    M(0, 1) = T(0);
    M(1, 0) = T(0);
    M(1, 1) = p[m];
  }

  template <class T>
  UKES_HD static void force(const Vec<T, kN>&, const Vec<T, kN>&, T, const T* p, Vec<T, kN>& Q) {
    Q[0] = T(0);
    Q[1] = -p[m] * p[g];
  }

  template <class S, class T>
  UKES_HD static void position_rows(const Vec<S, kN>& q, S, const T* p, S* phi) {
    phi[0] = q[0] * q[0] + q[1] * q[1] - p[R] * p[R];
  }

  template <class S, class T>
  UKES_HD static void velocity_rows(const Vec<S, kN>&, const Vec<S, kN>&, S, const T*, S*) {}

  template <class T>
  UKES_HD static void nonideal_force(const Vec<T, kN>&, const Vec<T, kN>& qd, T, const T* p,
                                     const Vec<T, kN>& Qc_ideal, Vec<T, kN>& C) {
    const T normal = norm2(Qc_ideal);
    const T speed2 = qd[0] * qd[0] + qd[1] * qd[1];
    const T scale = -p[mu] * normal / sqrt(speed2 + p[eps] * p[eps]);
    C[0] = scale * qd[0];
    C[1] = scale * qd[1];
  }

  template <class T>
  UKES_HD static void initial_state(const T* p, Vec<T, kN>& q, Vec<T, kN>& qd) {
    q[0] = p[R];
    q[1] = T(0);
    qd[0] = T(0);
    qd[1] = T(3);
  }
};

}  // namespace ukes::models
