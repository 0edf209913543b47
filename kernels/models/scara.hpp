// SCARA robot (three revolute joints, one prismatic) whose tool follows a helix; the trajectory is
// imposed as position constraints with Baumgarte stabilization (SCARA paper).
#pragma once

#include "kernels/models/model_concept.hpp"

namespace ukes::models {

struct Scara {
  static constexpr const char* kName = "scara";
  static constexpr const char* kSource =
      "SCARA paper: SCARA robot following a helical trajectory, Baumgarte-stabilized UK equation";
  static constexpr int kN = 4;
  static constexpr int kPositionRows = 4;
  static constexpr int kVelocityRows = 0;
  static constexpr bool kNonIdeal = false;
  enum Param {
    m1,
    m2,
    m3,
    m4,
    l0,
    l1,
    l2,
    r1,
    r2,
    Iz1,
    Iz2,
    Iz3,
    Iz4,
    g,
    xc,
    yc,
    R,
    Omega,
    vz,
    psi0
  };
  static constexpr ParamSpec kParams[] = {
      {"m1", 20.0},    {"m2", 15.0},  {"m3", 15.0},
      {"m4", 0.5},     {"l0", 0.0},   {"l1", 0.2},
      {"l2", 0.25},    {"r1", 0.1},   {"r2", 0.125},
      {"Iz1", 0.27},   {"Iz2", 0.31}, {"Iz3", 0.02},
      {"Iz4", 0.0001}, {"g", 9.81},   {"xc", 0.0},
      {"yc", 0.35},    {"R", 0.05},   {"Omega", 1.2566370614359172},
      {"vz", 0.02},    {"psi0", 0.0}};
  static constexpr const char* kCoordinates[] = {"q1", "q2", "q3", "q4"};
  static constexpr double kTEnd = 10.0;
  static constexpr Gains kGains = {30.0, 225.0};  // critical damping: (s + 15)^2

  template <class T>
  UKES_HD static void mass(const Vec<T, kN>& q, T, const T* p, Mat<T, kN, kN>& M) {
    const T al = p[Iz1] + p[r1] * p[r1] * p[m1] + p[l1] * p[l1] * (p[m2] + p[m3] + p[m4]);
    const T be = p[Iz2] + p[Iz3] + p[Iz4] + p[l2] * p[l2] * (p[m3] + p[m4]) + p[m2] * p[r2] * p[r2];
    const T ga = p[l1] * p[l2] * (p[m3] + p[m4]) + p[l1] * p[m2] * p[r2];
    const T de = p[Iz3] + p[Iz4];
    const T c2 = cos(q[1]);
    M = Mat<T, kN, kN>::zero();
    M(0, 0) = al + be + T(2) * ga * c2;
    M(0, 1) = be + ga * c2;
    M(1, 0) = M(0, 1);
    M(1, 1) = be;
    M(0, 2) = de;
    M(2, 0) = de;
    M(1, 2) = de;
    M(2, 1) = de;
    M(2, 2) = de;
    M(3, 3) = p[m4];
  }

  // Q = -C qd - G, no motor torques: the trajectory is enforced by the constraint forces alone.
  template <class T>
  UKES_HD static void force(const Vec<T, kN>& q, const Vec<T, kN>& qd, T, const T* p,
                            Vec<T, kN>& Q) {
    const T ga = p[l1] * p[l2] * (p[m3] + p[m4]) + p[l1] * p[m2] * p[r2];
    const T s2 = sin(q[1]);
    Q[0] = ga * s2 * qd[1] * (T(2) * qd[0] + qd[1]);
    Q[1] = -ga * s2 * qd[0] * qd[0];
    Q[2] = T(0);
    Q[3] = -p[m4] * p[g];
  }

  // Tool position on the circle of the helix, tool orientation and height.
  template <class S, class T>
  UKES_HD static void position_rows(const Vec<S, kN>& q, S t, const T* p, S* phi) {
    const S q12 = q[0] + q[1];
    const S wt = p[Omega] * t;
    phi[0] = -p[l1] * sin(q[0]) - p[l2] * sin(q12) - p[xc] - p[R] * sin(wt);
    phi[1] = p[l1] * cos(q[0]) + p[l2] * cos(q12) - p[yc] - p[R] * cos(wt);
    phi[2] = q12 + q[2] - p[psi0];
    phi[3] = q[3] + p[l0] - p[vz] * t;
  }

  template <class S, class T>
  UKES_HD static void velocity_rows(const Vec<S, kN>&, const Vec<S, kN>&, S, const T*, S*) {}

  // The paper's initial condition, (30, 55, 24 degrees, 0): off the constraint set on purpose.
  template <class T>
  UKES_HD static void initial_state(const T*, Vec<T, kN>& q, Vec<T, kN>& qd) {
    constexpr double kDeg = 3.14159265358979323846 / 180.0;
    q[0] = T(30.0 * kDeg);
    q[1] = T(55.0 * kDeg);
    q[2] = T(24.0 * kDeg);
    q[3] = T(0);
    qd[0] = T(-0.157);
    qd[1] = T(0.0001);
    qd[2] = T(0.157);
    qd[3] = T(0.0195);
  }
};

}  // namespace ukes::models
