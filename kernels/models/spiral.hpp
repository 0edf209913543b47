// Particle on a logarithmic spiral, tracked along a prescribed angle schedule (UK review,
// sec. 8.1).
#pragma once

#include "kernels/models/model_concept.hpp"

namespace ukes::models {

struct Spiral {
  static constexpr const char* kName = "spiral";
  static constexpr const char* kSource =
      "UK review sec. 8.1: particle on a logarithmic spiral r = exp(k theta), theta = theta0 - "
      "omega t";
  static constexpr int kN = 2;
  static constexpr int kPositionRows = 2;
  static constexpr int kVelocityRows = 0;
  static constexpr bool kNonIdeal = false;
  enum Param { g, k, omega, theta0 };
  static constexpr ParamSpec kParams[] = {
      {"g", 9.81}, {"k", 0.1}, {"omega", 1.0}, {"theta0", 30.0}};
  static constexpr const char* kCoordinates[] = {"r", "theta"};
  static constexpr double kTEnd = 20.0;
  static constexpr Gains kGains = {};

  // Unit mass: the seed writes the equations in acceleration form.
  template <class T>
  UKES_HD static void mass(const Vec<T, kN>&, T, const T*, Mat<T, kN, kN>& M) {
    M = Mat<T, kN, kN>::identity();
  }

  // Polar components of gravity (-g along the y axis) and the centripetal/Coriolis terms.
  template <class T>
  UKES_HD static void force(const Vec<T, kN>& q, const Vec<T, kN>& qd, T, const T* p,
                            Vec<T, kN>& Q) {
    const T r = q[0], th = q[1], rd = qd[0], thd = qd[1];
    Q[0] = r * thd * thd - p[g] * sin(th);
    Q[1] = (-T(2) * rd * thd - p[g] * cos(th)) / r;
  }

  template <class S, class T>
  UKES_HD static void position_rows(const Vec<S, kN>& q, S t, const T* p, S* phi) {
    phi[0] = q[0] - exp(p[k] * q[1]);
    phi[1] = q[1] + p[omega] * t - p[theta0];
  }

  template <class S, class T>
  UKES_HD static void velocity_rows(const Vec<S, kN>&, const Vec<S, kN>&, S, const T*, S*) {}

  // On both rows at t = 0: theta = theta0, thetad = -omega, r = e^{k theta0}, rd = k r thetad.
  template <class T>
  UKES_HD static void initial_state(const T* p, Vec<T, kN>& q, Vec<T, kN>& qd) {
    q[1] = p[theta0];
    q[0] = exp(p[k] * p[theta0]);
    qd[1] = -p[omega];
    qd[0] = p[k] * q[0] * qd[1];
  }
};

}  // namespace ukes::models
