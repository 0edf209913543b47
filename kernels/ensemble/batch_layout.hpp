// Structure-of-arrays views of an ensemble batch, shared by every backend.
//
// Real host buffers are always double; a system's kernel converts to its working precision on load
// and back on store. Component k of system i lives at [k * count + i], so consecutive systems (GPU
// threads) touch consecutive addresses. Trajectories are stored [slot][sample][component], the
// layout of the HDF5 datasets, for the systems that asked for them (slot >= 0).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/core/hd.hpp"
#include "kernels/ensemble/system_record.hpp"

namespace ukes {

// The integration methods, with their names in run specs (docs/RUNSPEC.md): RK4 at a fixed step,
// DOPRI5 adaptive, and the stiff method, RODAS4 (kernels/integrators/rosenbrock.hpp), which
// StiffSystem integrates (kernels/ensemble/stiff_system.hpp) on the CPU and in the GPU's fused
// kernel.
#define UKES_METHODS(X) X(kRk4, "rk4") X(kDopri5, "dopri5") X(kRosenbrock, "rosenbrock")
#define UKES_METHOD_ENUMERATOR(id, name) id,
enum class Method : int { UKES_METHODS(UKES_METHOD_ENUMERATOR) };
#undef UKES_METHOD_ENUMERATOR

enum class Status : int {
  kOk = 0,
  kMaxSteps = 1,
  kNonfinite = 2,
  kStepUnderflow = 3,
  kInconsistent = 4,  // the constraint set could not be met (rank loss, assembly failure)
  kSingularMass = 5,  // M(q) lost definiteness and [M; A] its full column rank
  kCancelled = 6,     // the run was stopped (cancel, deadline, shutdown) before this system ended
  kTerminated = 7,    // a terminating event (docs/EVENTS.md) ended it where it occurred
};

inline constexpr int kStatusCount = 8;

// The statuses of systems that ended as asked: at t_end, or at a terminating event. The ensemble
// statistics summarize these.
UKES_HD constexpr bool ended_as_asked(Status s) {
  return s == Status::kOk || s == Status::kTerminated;
}

struct UserModelProgram;  // kernels/models/user/user_model.hpp

struct BatchInputView {
  int count = 0;
  // params [param][count], q0 and qd0 [coordinate][count] (system_record.hpp).
#define UKES_INPUT_POINTER(name, encoding, width, text) \
  const Storage<Encoding::encoding>* name = nullptr;
  UKES_SYSTEM_INPUTS(UKES_INPUT_POINTER)
#undef UKES_INPUT_POINTER
  // A user model's compiled program, in memory the kernels can read; null for built-in models.
  const UserModelProgram* program = nullptr;
};

struct BatchOutputView {
  int count = 0;
  // One array per result field of system_record.hpp: status, t, q, qd, residual_max (|phi| rows,
  // |phid| rows, |psi| rows), force_max (max |Qc|_2), inconsistency_max (max |A qdd - b|), steps,
  // rejected.
#define UKES_RESULT_POINTER(name, encoding, width, text) \
  Storage<Encoding::encoding>* name = nullptr;
  UKES_SYSTEM_RESULTS(UKES_RESULT_POINTER)
#undef UKES_RESULT_POINTER

  // Trajectories (optional): traj_slot[i] < 0 means system i is not recorded. Per trajectory
  // field of system_record.hpp, traj_<name> [slot][sample][width]: q, qd, residual (signed phi,
  // phid, psi), force (total constraint force).
  const std::int32_t* traj_slot = nullptr;  // [count]
#define UKES_TRAJECTORY_POINTER(name, width, text) double* traj_##name = nullptr;
  UKES_TRAJECTORY_FIELDS(UKES_TRAJECTORY_POINTER)
#undef UKES_TRAJECTORY_POINTER
};

// Copies systems [src_begin, src_begin + count) of every result field of `src` (arrays of
// src.count systems) to systems [dst_begin, ...) of `dst` (arrays of dst.count): the one slice
// copy of the GPU module's chunks (kernels/backend/device/chunked_run.hpp) and of the engine's
// slices (service/engine/engine.cpp). Host memory only.
inline void copy_results(const BatchOutputView& dst, int dst_begin, const BatchOutputView& src,
                         int src_begin, int count, const RecordShape& shape) {
  if (count <= 0) return;
  for_each_result(
      [&](const FieldInfo& f, auto* to, const auto* from) {
        for (int k = 0; k < shape(f.width); ++k)
          std::memcpy(to + static_cast<std::size_t>(k) * dst.count + dst_begin,
                      from + static_cast<std::size_t>(k) * src.count + src_begin,
                      sizeof(*from) * static_cast<std::size_t>(count));
      },
      dst, src);
}

}  // namespace ukes
