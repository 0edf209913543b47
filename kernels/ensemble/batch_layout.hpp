// Structure-of-arrays views of an ensemble batch, shared by every backend.
//
// Host buffers are always double; a system's kernel converts to its working precision on load and
// back on store. Component k of system i lives at [k * count + i], so consecutive systems (GPU
// threads) touch consecutive addresses. Trajectories are stored [slot][sample][component], the
// layout of the HDF5 datasets, for the systems that asked for them (slot >= 0).
#pragma once

#include <cstdint>

namespace ukes {

enum class Method : int { kRk4 = 0, kDopri5 = 1 };

enum class Status : int {
  kOk = 0,
  kMaxSteps = 1,
  kNonfinite = 2,
  kStepUnderflow = 3,
  kInconsistent = 4,  // the constraint set could not be met (rank loss, assembly failure)
  kSingularMass = 5,  // M(q) lost definiteness and [M; A] its full column rank
  kCancelled = 6,     // the run was stopped (cancel, deadline, shutdown) before this system ended
};

inline constexpr int kStatusCount = 7;

struct UserModelProgram;  // kernels/models/user/user_model.hpp

struct BatchInputView {
  int count = 0;
  const double* params = nullptr;  // [param][count]
  const double* q0 = nullptr;      // [coordinate][count]
  const double* qd0 = nullptr;     // [coordinate][count]
  // A user model's compiled program, in memory the kernels can read; null for built-in models.
  const UserModelProgram* program = nullptr;
};

struct BatchOutputView {
  int count = 0;
  std::int32_t* status = nullptr;       // [count], a Status
  double* t = nullptr;                  // [count], time reached
  double* q = nullptr;                  // [coordinate][count]
  double* qd = nullptr;                 // [coordinate][count]
  double* residual_max = nullptr;       // [slot][count]: |phi| rows, |phid| rows, |psi| rows
  double* force_max = nullptr;          // [count], max |Qc|_2 over accepted states
  double* inconsistency_max = nullptr;  // [count], max |A qdd - b| over accepted states
  std::int64_t* steps = nullptr;        // [count], accepted steps
  std::int64_t* rejected = nullptr;     // [count], rejected trial steps

  // Trajectories (optional): traj_slot[i] < 0 means system i is not recorded.
  const std::int32_t* traj_slot = nullptr;  // [count]
  double* traj_q = nullptr;                 // [slot][sample][n]
  double* traj_qd = nullptr;                // [slot][sample][n]
  double* traj_residual = nullptr;          // [slot][sample][2 mp + mv]: phi, phid, psi (signed)
  double* traj_force = nullptr;             // [slot][sample][n]: total constraint force
};

}  // namespace ukes
