// The staged path's two batched factorizations for ONE system, done by a team (one lane per row,
// kernels/linalg/team.hpp): what a warp-per-system kernel runs between the per-system steps. They
// read and write exactly the buffers and conventions of CpuStagedExecutor::factor_mass and
// factor_constraints (kernels/staged/cpu_executor.hpp), i.e. those of cuSOLVER's potrfBatched and
// gesvdjBatched, so the assemble / reduce / combine steps cannot tell which one ran.
//
// The caller syncs the team before (the buffers were written by another lane); both end with
// team.sync(), so every lane sees all their writes afterwards.
#pragma once

#include "kernels/linalg/team_cholesky.hpp"
#include "kernels/linalg/team_jacobi_svd.hpp"
#include "kernels/staged/staged_stages.hpp"

namespace ukes {

// As potrfBatched (lower): L over the lower triangle of ws.mass_of(i), the strict upper triangle
// untouched; ws.mass_info[i] = 0 when factored, 1 when not (then the buffer is left as it was).
// Requires team.size() >= n.
template <class Model, class T, class Team>
UKES_HD void team_factor_mass(const Team& team, const StagedWorkspace<Model, T>& ws, int i) {
  constexpr int n = Model::kN;
  const int r = team.rank();
  const bool mine = r < n;
  T* buffer = ws.mass_of(i);
  Vec<T, n> row = Vec<T, n>::zero();
  UKES_TEAM_UNROLL
  for (int c = 0; c < n; ++c)
    if (mine && c <= r) row[c] = buffer[c * n + r];
  const bool ok = team_cholesky(team, row);
  if (r == 0) ws.mass_info[i] = ok ? 0 : 1;
  if (ok) {
    UKES_TEAM_UNROLL
    for (int c = 0; c < n; ++c)
      if (mine && c <= r) buffer[c * n + r] = row[c];
  }
  team.sync();
}

// As gesvdjBatched: B = U S V^T from the Jacobi SVD of X = B (m >= n) or X = B^T (m < n), the
// factorization the fused path's PseudoInverse takes; only the first min(m, n) columns of U and V
// are singular vectors, the others are written zero. Does nothing for a model without rows.
// Requires team.size() >= max(m, n).
template <class Model, class T, class Team>
UKES_HD void team_factor_constraints(const Team& team, const StagedWorkspace<Model, T>& ws, int i) {
  constexpr int n = Model::kN;
  constexpr int m = kRows<Model>;
  if constexpr (m > 0) {
    constexpr bool kTransposed = PseudoInverse<T, m, n>::kTransposed;
    constexpr int xr = kTransposed ? n : m;  // X's rows: one per lane
    constexpr int xc = kTransposed ? m : n;  // X's columns: min(m, n)
    const int r = team.rank();
    const T* B = ws.b_of(i);  // column-major, lda = m
    // Row r of X: row r of B, or column r of B when X = B^T.
    Vec<T, xc> x_row = Vec<T, xc>::zero();
    if (r < xr) {
      UKES_TEAM_UNROLL
      for (int c = 0; c < xc; ++c) x_row[c] = kTransposed ? B[r * m + c] : B[c * m + r];
    }
    const TeamJacobiSvd<T, xr, xc> svd(team, x_row);
    T* S = ws.s_of(i);
    if (r == 0) {
      UKES_TEAM_UNROLL
      for (int k = 0; k < xc; ++k) S[k] = svd.sigma[k];
    }
    // X's right factor V (xc x xc) is U_B (B^T's right singular vectors) or V_B; the left one is
    // W = U_X S, whose normalized columns give the other factor, zero beyond column xc.
    T* right = kTransposed ? ws.u_of(i) : ws.v_of(i);  // xc x xc, leading dimension xc
    T* left = kTransposed ? ws.v_of(i) : ws.u_of(i);   // xr x xr, leading dimension xr
    if (r < xc) {
      UKES_TEAM_UNROLL
      for (int k = 0; k < xc; ++k) right[k * xc + r] = svd.v[k];
    }
    if (r < xr) {
      UKES_TEAM_UNROLL
      for (int k = 0; k < xr; ++k) {
        const T sk = k < xc ? svd.sigma[k] : T(0);
        left[k * xr + r] = sk > T(0) ? svd.w[k < xc ? k : 0] / sk : T(0);
      }
    }
    team.sync();
  }
}

}  // namespace ukes
