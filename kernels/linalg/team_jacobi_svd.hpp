// One-sided Jacobi SVD by a team (kernels/linalg/team.hpp), one row of W and one of V per lane.
//
// The algorithm of JacobiSvd in pinv.hpp, step for step: the same cyclic pair order i < j, the same
// tests for negligible columns and orthogonal pairs, the same rotation, the same sweep cap and
// stopping rule. Only the three dot products of a pair (and the norms) are sums over the rows, so
// they become team.sum over the lanes; the rotations touch entries i and j of every row of W and
// V, so each lane applies them to its own rows. Every decision is taken on sums, hence uniformly.
#pragma once

#include <cassert>

#include "kernels/linalg/pinv.hpp"
#include "kernels/linalg/team.hpp"

namespace ukes {

// Factors X (XR x XC) as W = X V with V orthogonal and W's columns mutually orthogonal, the layout
// of SvdFactors<T, XR, XC>: lane r < XR holds row r of W in w, lane r < XC row r of V in v (other
// lanes hold zeros there), every lane holds the same sigma (column norms of W) and sweeps.
// Requires team.size() >= max(XR, XC).
template <class T, int XR, int XC>
struct TeamJacobiSvd {
  static constexpr int kMaxSweeps = JacobiSvd<T, XR, XC>::kMaxSweeps;

  Vec<T, XC> w;
  Vec<T, XC> v;
  Vec<T, XC> sigma;
  int sweeps = 0;

  // x_row: row rank() of X when rank() < XR (not read otherwise).
  template <class Team>
  UKES_HD TeamJacobiSvd(const Team& team, const Vec<T, XC>& x_row) {
    assert(team.size() >= (XR > XC ? XR : XC));
    const int lane = team.rank();
    const bool has_w = lane < XR;
    UKES_TEAM_UNROLL
    for (int k = 0; k < XC; ++k) {
      w[k] = has_w ? x_row[k] : T(0);
      v[k] = k == lane ? T(1) : T(0);
    }
    const T tol = Epsilon<T>::value;
    // JacobiSvd's noise threshold eps^2 |X|_F^2 (see there for why).
    T row2 = T(0);
    UKES_TEAM_UNROLL
    for (int k = 0; k < XC; ++k) row2 += w[k] * w[k];
    const T negligible = tol * tol * team.sum(row2);
    for (sweeps = 0; sweeps < kMaxSweeps; ++sweeps) {
      bool rotated = false;
      UKES_TEAM_UNROLL
      for (int i = 0; i < XC - 1; ++i) {
        UKES_TEAM_UNROLL
        for (int j = i + 1; j < XC; ++j) {
          const T alpha = team.sum(w[i] * w[i]);
          const T beta = team.sum(w[j] * w[j]);
          const T gamma = team.sum(w[i] * w[j]);
          if (!(alpha > negligible && beta > negligible)) continue;      // noise column
          if (!(abs(gamma) > tol * sqrt(alpha) * sqrt(beta))) continue;  // already orthogonal
          rotated = true;
          const JacobiRotation<T> g = jacobi_rotation(alpha, beta, gamma);
          const T wi = w[i], wj = w[j];
          w[i] = g.c * wi - g.s * wj;
          w[j] = g.s * wi + g.c * wj;
          const T vi = v[i], vj = v[j];
          v[i] = g.c * vi - g.s * vj;
          v[j] = g.s * vi + g.c * vj;
        }
      }
      if (!rotated) break;
    }
    UKES_TEAM_UNROLL
    for (int k = 0; k < XC; ++k) sigma[k] = sqrt(team.sum(w[k] * w[k]));
  }
};

}  // namespace ukes
