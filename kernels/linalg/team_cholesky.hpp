// Cholesky factorization M = L L^T by a team (kernels/linalg/team.hpp), one row per lane.
//
// Left-looking, column by column, with exactly the arithmetic of cholesky() in cholesky.hpp: for
// column j every lane i >= j forms M(i, j) - sum_{k<j} L(i, k) L(j, k) (k ascending) from its own
// row and row j of L, which lane j broadcasts entry by entry; lane j's value is the pivot d, which
// it broadcasts so that every lane takes the same decision and scales by the same 1 / sqrt(d).
// Cost: N (N + 1) / 2 broadcasts; the work per lane is that of its row.
#pragma once

#include <cassert>

#include "kernels/linalg/small_matrix.hpp"
#include "kernels/linalg/team.hpp"

namespace ukes {

// Lane r < N holds row r of M in `row` (only the lower triangle, row[c] for c <= r, is read); on
// success it holds row r of L (row[c] = 0 for c > r). Lanes r >= N hold nothing meaningful (their
// row is neither read for the result nor meaningful afterwards) but take part in every collective.
// Returns the same value in every lane: false exactly when cholesky() fails (a pivot not > 0 or not
// finite); the rows are then unspecified. Requires team.size() >= N.
template <class T, int N, class Team>
UKES_HD bool team_cholesky(const Team& team, Vec<T, N>& row) {
  assert(team.size() >= N);
  const int r = team.rank();
  UKES_TEAM_UNROLL
  for (int j = 0; j < N; ++j) {
    // Lane j's row is row j of L left of the diagonal by now (it finished columns 0..j-1).
    T s = row[j];
    UKES_TEAM_UNROLL
    for (int k = 0; k < j; ++k) s -= row[k] * team.broadcast(row[k], j);
    const T d = team.broadcast(s, j);
    if (!(d > T(0)) || !isfinite(d)) return false;
    const T ljj = sqrt(d);
    row[j] = r > j ? s * (T(1) / ljj) : (r == j ? ljj : T(0));
  }
  return true;
}

}  // namespace ukes
