// Particle under gravity held on an elliptical path x^2/ax^2 + y^2/by^2 = 1 (thesis abstract).
#pragma once

#include "kernels/models/model_concept.hpp"

namespace ukes::models {

struct EllipseParticle {
  static constexpr const char* kName = "ellipse_particle";
  static constexpr const char* kSource = "UK thesis abstract: particle held on an elliptical path";
  static constexpr int kN = 2;
  static constexpr int kPositionRows = 1;
  static constexpr int kVelocityRows = 0;
  static constexpr bool kNonIdeal = false;
  enum Param { m, ax, by, g };
  static constexpr ParamSpec kParams[] = {{"m", 1.0}, {"ax", 2.0}, {"by", 1.0}, {"g", 9.81}};
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
    phi[0] = q[0] * q[0] / (p[ax] * p[ax]) + q[1] * q[1] / (p[by] * p[by]) - T(1);
  }

  template <class S, class T>
  UKES_HD static void velocity_rows(const Vec<S, kN>&, const Vec<S, kN>&, S, const T*, S*) {}

  template <class T>
  UKES_HD static void initial_state(const T* p, Vec<T, kN>& q, Vec<T, kN>& qd) {
    q[0] = p[ax];
    q[1] = T(0);
    qd[0] = T(0);
    qd[1] = T(1);
  }
};

}  // namespace ukes::models
