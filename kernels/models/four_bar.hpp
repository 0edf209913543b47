// Grounded four-bar linkage in absolute coordinates (constrained Lagrangian notes).
//
// Three moving uniform bars; bar i has centre (xi, yi), angle thi, ends
// E_i^-+ = centre -+ (Li/2)(cos thi, sin thi). Ground pivots O1 = (0, 0), O4 = (d, 0).
// Eight position rows (E_1^- = O1, E_1^+ = E_2^-, E_2^+ = E_3^-, E_3^+ = O4, x and y each) leave
// one degree of freedom.
#pragma once

#include "kernels/models/model_concept.hpp"

namespace ukes::models {

struct FourBar {
  static constexpr const char* kName = "four_bar";
  static constexpr const char* kSource =
      "Constrained Lagrangian notes: grounded four-bar linkage in absolute coordinates";
  static constexpr int kN = 9;
  static constexpr int kPositionRows = 8;
  static constexpr int kVelocityRows = 0;
  static constexpr bool kNonIdeal = false;
  enum Param { L1, L2, L3, d, m1, m2, m3, g, tau };
  static constexpr ParamSpec kParams[] = {{"L1", 1.0}, {"L2", 3.0}, {"L3", 2.0},
                                          {"d", 2.5},  {"m1", 1.0}, {"m2", 3.0},
                                          {"m3", 2.0}, {"g", 9.81}, {"tau", 0.0}};
  static constexpr const char* kCoordinates[] = {"x1",  "y1", "th1", "x2", "y2",
                                                 "th2", "x3", "y3",  "th3"};
  static constexpr double kTEnd = 10.0;
  static constexpr Gains kGains = {};

  template <class T>
  UKES_HD static void mass(const Vec<T, kN>&, T, const T* p, Mat<T, kN, kN>& M) {
    M = Mat<T, kN, kN>::zero();
    M(0, 0) = p[m1];
    M(1, 1) = p[m1];
    M(2, 2) = p[m1] * p[L1] * p[L1] / T(12);
    M(3, 3) = p[m2];
    M(4, 4) = p[m2];
    M(5, 5) = p[m2] * p[L2] * p[L2] / T(12);
    M(6, 6) = p[m3];
    M(7, 7) = p[m3];
    M(8, 8) = p[m3] * p[L3] * p[L3] / T(12);
  }

  template <class T>
  UKES_HD static void force(const Vec<T, kN>&, const Vec<T, kN>&, T, const T* p, Vec<T, kN>& Q) {
    Q = Vec<T, kN>::zero();
    Q[1] = -p[m1] * p[g];
    Q[2] = p[tau];
    Q[4] = -p[m2] * p[g];
    Q[7] = -p[m3] * p[g];
  }

  template <class S, class T>
  UKES_HD static void position_rows(const Vec<S, kN>& q, S, const T* p, S* phi) {
    const T h1 = T(0.5) * p[L1];
    const T h2 = T(0.5) * p[L2];
    const T h3 = T(0.5) * p[L3];
    const S c1 = cos(q[2]), s1 = sin(q[2]);
    const S c2 = cos(q[5]), s2 = sin(q[5]);
    const S c3 = cos(q[8]), s3 = sin(q[8]);
    // E_1^- = O1
    phi[0] = q[0] - h1 * c1;
    phi[1] = q[1] - h1 * s1;
    // E_1^+ = E_2^-
    phi[2] = q[0] + h1 * c1 - (q[3] - h2 * c2);
    phi[3] = q[1] + h1 * s1 - (q[4] - h2 * s2);
    // E_2^+ = E_3^-
    phi[4] = q[3] + h2 * c2 - (q[6] - h3 * c3);
    phi[5] = q[4] + h2 * s2 - (q[7] - h3 * s3);
    // E_3^+ = O4
    phi[6] = q[6] + h3 * c3 - p[d];
    phi[7] = q[7] + h3 * s3;
  }

  template <class S, class T>
  UKES_HD static void velocity_rows(const Vec<S, kN>&, const Vec<S, kN>&, S, const T*, S*) {}

  // th1 = pi/3, th1d = 2; the coupler-rocker joint by circle-circle intersection on the branch
  // with the larger y (y > 0 at the defaults); velocities from the loop-closure equations.
  template <class T>
  UKES_HD static void initial_state(const T* p, Vec<T, kN>& q, Vec<T, kN>& qd) {
    const T th1 = T(1.0471975511965976);  // pi / 3
    const T th1d = T(2);
    const T bx = p[L1] * cos(th1), by = p[L1] * sin(th1);  // E_1^+ (crank-coupler joint)
    const T ex = p[d] - bx, ey = -by;                      // B -> O4
    const T dist = sqrt(ex * ex + ey * ey);
    const T along = (p[L2] * p[L2] - p[L3] * p[L3] + dist * dist) / (T(2) * dist);
    const T h2 = p[L2] * p[L2] - along * along;
    const T h = h2 > T(0) ? sqrt(h2) : T(0);
    const T ux = ex / dist, uy = ey / dist;
    const T px = bx + along * ux, py = by + along * uy;
    // Two intersections P -+ h (-uy, ux); keep the one with the larger y.
    const T sign = ux >= T(0) ? T(1) : T(-1);
    const T cx = px - sign * h * uy, cy = py + sign * h * ux;
    const T th2 = std::atan2(cy - by, cx - bx);
    const T th3 = std::atan2(-cy, p[d] - cx);

    q[0] = T(0.5) * bx;
    q[1] = T(0.5) * by;
    q[2] = th1;
    q[3] = T(0.5) * (bx + cx);
    q[4] = T(0.5) * (by + cy);
    q[5] = th2;
    q[6] = T(0.5) * (cx + p[d]);
    q[7] = T(0.5) * cy;
    q[8] = th3;

    // B' + L2 th2d (-sin th2, cos th2) = L3 th3d (sin th3, -cos th3)  (C from both sides).
    const T bxd = -p[L1] * th1d * sin(th1), byd = p[L1] * th1d * cos(th1);
    const T a11 = -p[L2] * sin(th2), a12 = -p[L3] * sin(th3);
    const T a21 = p[L2] * cos(th2), a22 = p[L3] * cos(th3);
    const T det = a11 * a22 - a12 * a21;
    const T th2d = (-bxd * a22 + byd * a12) / det;
    const T th3d = (-a11 * byd + a21 * bxd) / det;
    const T cxd = bxd - p[L2] * th2d * sin(th2), cyd = byd + p[L2] * th2d * cos(th2);

    qd[0] = T(0.5) * bxd;
    qd[1] = T(0.5) * byd;
    qd[2] = th1d;
    qd[3] = T(0.5) * (bxd + cxd);
    qd[4] = T(0.5) * (byd + cyd);
    qd[5] = th2d;
    qd[6] = T(0.5) * cxd;
    qd[7] = T(0.5) * cyd;
    qd[8] = th3d;
  }
};

}  // namespace ukes::models
