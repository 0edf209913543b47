// STUB: placeholder so the catalogue compiles; replaced by the real model (see shared MODELS.md).
#pragma once

#include "kernels/models/model_concept.hpp"

namespace ukes::models {

struct EllipseParticle {
  static constexpr const char* kName = "ellipse_particle";
  static constexpr const char* kSource = "stub";
  static constexpr int kN = 2;
  static constexpr int kPositionRows = 1;
  static constexpr int kVelocityRows = 0;
  static constexpr bool kNonIdeal = false;
  static constexpr ParamSpec kParams[] = {{"stub", 0.0}};
  static constexpr const char* kCoordinates[] = {"q0", "q1"};
  static constexpr double kTEnd = 1.0;
  static constexpr Gains kGains = {};

  template <class T>
  UKES_HD static void mass(const Vec<T, kN>&, T, const T*, Mat<T, kN, kN>& M) {
    M = Mat<T, kN, kN>::identity();
  }
  template <class T>
  UKES_HD static void force(const Vec<T, kN>&, const Vec<T, kN>&, T, const T*, Vec<T, kN>& Q) {
    Q = Vec<T, kN>::zero();
  }
  template <class S, class T>
  UKES_HD static void position_rows(const Vec<S, kN>& q, S, const T*, S* phi) {
    for (int r = 0; r < kPositionRows; ++r) phi[r] = q[0] * 0.0;
  }
  template <class S, class T>
  UKES_HD static void velocity_rows(const Vec<S, kN>& q, const Vec<S, kN>&, S, const T*, S* psi) {
    for (int r = 0; r < kVelocityRows; ++r) psi[r] = q[0] * 0.0;
  }
  template <class T>
  UKES_HD static void initial_state(const T*, Vec<T, kN>& q, Vec<T, kN>& qd) {
    q = Vec<T, kN>::zero();
    qd = Vec<T, kN>::zero();
  }
};

}  // namespace ukes::models
