// Crank, connecting rod and slider, in the redundant coordinates (th, ph, x)
// (constrained Lagrangian notes).
#pragma once

#include "kernels/models/model_concept.hpp"

namespace ukes::models {

struct SliderCrank {
  static constexpr const char* kName = "slider_crank";
  static constexpr const char* kSource =
      "Constrained Lagrangian notes: slider-crank (crank, connecting rod, slider)";
  static constexpr int kN = 3;
  static constexpr int kPositionRows = 2;
  static constexpr int kVelocityRows = 0;
  static constexpr bool kNonIdeal = false;
  enum Param { a, l, m1, m2, m3, g, tau, Fx };
  static constexpr ParamSpec kParams[] = {{"a", 0.1},  {"l", 0.3},  {"m1", 1.0},  {"m2", 1.0},
                                          {"m3", 0.5}, {"g", 9.81}, {"tau", 0.0}, {"Fx", 0.0}};
  // Crank angle from +x; rod angle, the rod running from the crank tip P = a (cos th, sin th) to
  // the slider S = P + l (cos ph, -sin ph) = (x, 0). Uniform rods, gravity along -y.
  static constexpr const char* kCoordinates[] = {"th", "ph", "x"};
  static constexpr double kTEnd = 2.0;
  static constexpr Gains kGains = {};

  template <class T>
  UKES_HD static void mass(const Vec<T, kN>& q, T, const T* p, Mat<T, kN, kN>& M) {
    const T coupling = -(p[m2] * p[a] * p[l] / T(2)) * cos(q[0] + q[1]);
    M = Mat<T, kN, kN>::zero();
    M(0, 0) = p[m1] * p[a] * p[a] / T(3) + p[m2] * p[a] * p[a];
    M(0, 1) = coupling;
    M(1, 0) = coupling;
    M(1, 1) = p[m2] * p[l] * p[l] / T(3);
    M(2, 2) = p[m3];
  }

  template <class T>
  UKES_HD static void force(const Vec<T, kN>& q, const Vec<T, kN>& qd, T, const T* p,
                            Vec<T, kN>& Q) {
    const T s = (p[m2] * p[a] * p[l] / T(2)) * sin(q[0] + q[1]);
    Q[0] = -s * qd[1] * qd[1] - (p[m1] / T(2) + p[m2]) * p[g] * p[a] * cos(q[0]) + p[tau];
    Q[1] = -s * qd[0] * qd[0] + (p[m2] * p[g] * p[l] / T(2)) * cos(q[1]);
    Q[2] = p[Fx];
  }

  // The slider pin S lies at (x, 0).
  template <class S, class T>
  UKES_HD static void position_rows(const Vec<S, kN>& q, S, const T* p, S* phi) {
    phi[0] = p[a] * cos(q[0]) + p[l] * cos(q[1]) - q[2];
    phi[1] = p[a] * sin(q[0]) - p[l] * sin(q[1]);
  }

  template <class S, class T>
  UKES_HD static void velocity_rows(const Vec<S, kN>&, const Vec<S, kN>&, S, const T*, S*) {}

  // th = pi/6, thd = 10; ph, x and their rates from the two rows and their time derivatives.
  template <class T>
  UKES_HD static void initial_state(const T* p, Vec<T, kN>& q, Vec<T, kN>& qd) {
    const T th = T(0.52359877559829887);  // pi / 6
    const T thd = T(10);
    using std::asin;
    const T sp = p[a] * sin(th) / p[l];
    const T cp = sqrt(T(1) - sp * sp);
    const T ph = asin(sp);
    q[0] = th;
    q[1] = ph;
    q[2] = p[a] * cos(th) + p[l] * cp;
    qd[0] = thd;
    qd[1] = p[a] * cos(th) * thd / (p[l] * cp);         // from d/dt phi2 = 0
    qd[2] = -p[a] * sin(th) * thd - p[l] * sp * qd[1];  // from d/dt phi1 = 0
  }
};

}  // namespace ukes::models
