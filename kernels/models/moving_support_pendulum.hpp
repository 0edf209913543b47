// Pendulum whose support oscillates horizontally, x_s(t) = Xs sin(Ws t) (thesis abstract): a
// rheonomic position constraint on the bob's Cartesian coordinates.
#pragma once

#include "kernels/models/model_concept.hpp"

namespace ukes::models {

struct MovingSupportPendulum {
  static constexpr const char* kName = "moving_support_pendulum";
  static constexpr const char* kSource =
      "UK thesis abstract: pendulum whose support oscillates (rheonomic constraint)";
  static constexpr int kN = 2;
  static constexpr int kPositionRows = 1;
  static constexpr int kVelocityRows = 0;
  static constexpr bool kNonIdeal = false;
  enum Param { m, L, g, Xs, Ws };
  static constexpr ParamSpec kParams[] = {
      {"m", 1.0}, {"L", 1.0}, {"g", 9.81}, {"Xs", 0.1}, {"Ws", 5.0}};
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
  UKES_HD static void position_rows(const Vec<S, kN>& q, S t, const T* p, S* phi) {
    const S dx = q[0] - p[Xs] * sin(p[Ws] * t);
    phi[0] = dx * dx + q[1] * q[1] - p[L] * p[L];
  }

  template <class S, class T>
  UKES_HD static void velocity_rows(const Vec<S, kN>&, const Vec<S, kN>&, S, const T*, S*) {}

  // Bob at 0.3 rad from the downward vertical, at rest relative to the support (at x_s(0) = 0,
  // moving with x_s'(0) = Xs Ws).
  template <class T>
  UKES_HD static void initial_state(const T* p, Vec<T, kN>& q, Vec<T, kN>& qd) {
    q[0] = p[L] * sin(T(0.3));
    q[1] = -p[L] * cos(T(0.3));
    qd[0] = p[Xs] * p[Ws];
    qd[1] = T(0);
  }
};

}  // namespace ukes::models
