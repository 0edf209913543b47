// A "team": a group of lanes that run the same code on one problem together (SPMD), each lane
// holding a slice of it (for the factorizations, one row of the matrix) and combining them through
// a handful of collectives. Cooperative algorithms are written once against this concept and run
// on a GPU warp (kernels/backend/cuda/warp_team.cuh), on one thread (SingleLaneTeam below) and, in
// the tests and the host emulation of the GPU module, on threads that emulate a warp lane by lane
// (kernels/backend/host_gpu/thread_team.hpp).
//
// Every lane calls the same function with the same arguments; a team provides
//     int rank() const;                   // this lane, 0 <= rank() < size()
//     int size() const;
//     void sync() const;                  // barrier + memory ordering among the team's lanes
//     template <class T> T sum(T x) const;                // all-reduce over the lanes (T float
//     template <class T> T broadcast(T x, int src) const; // or double); x of lane src, to all
// sum returns the SAME bits in every lane (the summation order may differ between teams), so a
// decision taken on a sum or a broadcast is the same in every lane. Rules for team code:
//  - Control flow around a collective must be uniform: every lane calls every collective, in the
//    same order (on a GPU they are full-mask __shfl_*_sync / __syncwarp). Decide only on values
//    that came out of sum or broadcast (or on compile-time and uniform arguments); lane-local
//    arithmetic may depend on rank().
//  - Lanes without a row (rank() beyond the matrix) take part in every collective and contribute
//    zero to sums.
#pragma once

#include "kernels/core/hd.hpp"

// Unrolled loops keep per-lane rows in registers on the GPU (constant indices); the host compiler
// decides for itself.
#if defined(__CUDACC__)
#define UKES_TEAM_UNROLL _Pragma("unroll")
#else
#define UKES_TEAM_UNROLL
#endif

namespace ukes {

// The trivial team of one lane: the cooperative algorithms run as plain sequential code.
struct SingleLaneTeam {
  UKES_HD int rank() const { return 0; }
  UKES_HD int size() const { return 1; }
  UKES_HD void sync() const {}
  template <class T>
  UKES_HD T sum(T x) const {
    return x;
  }
  template <class T>
  UKES_HD T broadcast(T x, int) const {
    return x;
  }
};

}  // namespace ukes
