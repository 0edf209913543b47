// Coupled Duffing oscillators with a rheonomic constraint (thesis, sec. 3.3).
#pragma once

#include "kernels/models/model_concept.hpp"

namespace ukes::models {

struct Duffing {
  static constexpr const char* kName = "duffing";
  static constexpr const char* kSource =
      "UK thesis sec. 3.3: coupled Duffing oscillators, rheonomic constraint";
  static constexpr int kN = 2;
  static constexpr int kPositionRows = 1;
  static constexpr int kVelocityRows = 0;
  static constexpr bool kNonIdeal = false;
  enum Param { m1, m2, k1, k2, k1nl, k2nl, c1, c2, A0, omega, alpha };
  static constexpr ParamSpec kParams[] = {
      {"m1", 2.0},   {"m2", 1.0}, {"k1", 10.0}, {"k2", 12.0}, {"k1nl", 1.0},
      {"k2nl", 2.0}, {"c1", 0.1}, {"c2", 0.15}, {"A0", 1.0},  {"omega", 6.283185307179586},
      {"alpha", 1.0}};
  static constexpr const char* kCoordinates[] = {"x1", "x2"};
  static constexpr double kTEnd = 5.0;
  static constexpr Gains kGains = {};

  template <class T>
  UKES_HD static void mass(const Vec<T, kN>&, T, const T* p, Mat<T, kN, kN>& M) {
    M(0, 0) = p[m1];
    M(0, 1) = T(0);
    M(1, 0) = T(0);
    M(1, 1) = p[m2];
  }

  template <class T>
  UKES_HD static void force(const Vec<T, kN>& x, const Vec<T, kN>& xd, T, const T* p,
                            Vec<T, kN>& Q) {
    const T d = x[0] - x[1];
    const T dd = xd[0] - xd[1];
    const T nl1 = p[k1nl] * d * d * d;
    Q[0] = -(p[k1] * d + p[c1] * dd + nl1);
    Q[1] = -(-p[k1] * d + p[k2] * x[1] - p[c1] * dd + p[c2] * xd[1] + p[k2nl] * x[1] * x[1] * x[1] -
             nl1);
  }

  template <class S, class T>
  UKES_HD static void position_rows(const Vec<S, kN>& x, S t, const T* p, S* phi) {
    phi[0] = x[0] - x[1] - p[A0] * exp(-p[alpha] * t) * sin(p[omega] * t);
  }

  template <class S, class T>
  UKES_HD static void velocity_rows(const Vec<S, kN>&, const Vec<S, kN>&, S, const T*, S*) {}

  template <class T>
  UKES_HD static void initial_state(const T* p, Vec<T, kN>& q, Vec<T, kN>& qd) {
    q[0] = T(1);
    q[1] = T(1);
    qd[0] = p[A0] * p[omega] + T(2);
    qd[1] = T(2);
  }
};

}  // namespace ukes::models
