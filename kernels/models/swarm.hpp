// Five mobile robots whose velocities obey an interaction (servo) constraint (UK review, sec. 8.2).
#pragma once

#include "kernels/models/model_concept.hpp"

namespace ukes::models {

struct Swarm {
  static constexpr const char* kName = "swarm";
  static constexpr const char* kSource =
      "UK review sec. 8.2: five mobile robots with an interaction constraint";
  static constexpr int kRobots = 5;  // the structural parameter N of this build
  static constexpr int kN = 2 * kRobots;
  static constexpr int kPositionRows = 0;
  static constexpr int kVelocityRows = kN;  // two per robot: x then y
  static constexpr bool kNonIdeal = false;
  // `robot_mass` is the parameter "mass" (the name `mass` is taken by the mass-matrix function).
  enum Param { N, robot_mass, a };
  static constexpr ParamSpec kParams[] = {{"N", 5.0, true}, {"mass", 2.0}, {"a", 0.5}};
  static constexpr const char* kCoordinates[] = {"x1", "y1", "x2", "y2", "x3",
                                                 "y3", "x4", "y4", "x5", "y5"};
  static constexpr double kTEnd = 20.0;
  static constexpr Gains kGains = {5.0, 0.0};

  template <class T>
  UKES_HD static void mass(const Vec<T, kN>&, T, const T* p, Mat<T, kN, kN>& M) {
    M = Mat<T, kN, kN>::zero();
    for (int j = 0; j < kN; ++j) M(j, j) = p[robot_mass];
  }

  template <class T>
  UKES_HD static void force(const Vec<T, kN>&, const Vec<T, kN>&, T, const T*, Vec<T, kN>& Q) {
    Q = Vec<T, kN>::zero();
  }

  template <class S, class T>
  UKES_HD static void position_rows(const Vec<S, kN>&, S, const T*, S*) {}

  // psi_i = qd_i + sum_{j != i} (q_i - q_j) (1 - a / |q_i - q_j|), the gradient of
  // G_ij = -a |q_i - q_j| + |q_i - q_j|^2 / 2 + 50 with respect to q_i.
  template <class S, class T>
  UKES_HD static void velocity_rows(const Vec<S, kN>& q, const Vec<S, kN>& qd, S, const T* p,
                                    S* psi) {
    for (int i = 0; i < kRobots; ++i) {
      S gx = qd[2 * i];
      S gy = qd[2 * i + 1];
      for (int j = 0; j < kRobots; ++j) {
        if (j == i) continue;
        const S dx = q[2 * i] - q[2 * j];
        const S dy = q[2 * i + 1] - q[2 * j + 1];
        const S w = T(1) - p[a] / sqrt(dx * dx + dy * dy);
        gx = gx + dx * w;
        gy = gy + dy * w;
      }
      psi[2 * i] = gx;
      psi[2 * i + 1] = gy;
    }
  }

  // The replacement of the seed's Table 1: at rest, deliberately off the velocity rows.
  template <class T>
  UKES_HD static void initial_state(const T*, Vec<T, kN>& q, Vec<T, kN>& qd) {
    const T pos[kN] = {T(0), T(0), T(4), T(1), T(-3), T(2), T(2), T(-4), T(-1), T(-3)};
    for (int j = 0; j < kN; ++j) {
      q[j] = pos[j];
      qd[j] = T(0);
    }
  }
};

}  // namespace ukes::models
