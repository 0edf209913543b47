// The GPU module's two integration kernels as function objects, so that every device API
// (device_api.hpp) launches the same code: CUDA as __global__ kernels, the host API on CPU threads.
//
// FusedSystem, the fused path: one thread integrates one system from t0 to t_end with the CPU
// backend's code and numbers (SystemKernel::run), one kernel per method, so that each holds one
// method's stage storage and one inlined right-hand side, and general or not (kGeneral): runs
// without the step projection and without control hold none of their code and arrays.
// kServoDerivatives (with kGeneral): the controller follows servo rows of a higher relative
// degree through Taylor series (kernels/uk/servo_derivatives.hpp, which a translation unit that
// instantiates it includes). The CUDA module compiles that instantiation only at run time, for
// the run's model (kernels/backend/cuda/jit/): its series code would make every model's
// ahead-of-time build several times longer. The host emulation compiles it ahead of time.
// The stiff method (Method::kRosenbrock, kernels/ensemble/stiff_system.hpp) is compiled the same
// way, for the same reason: its Jacobian evaluates the whole right-hand side on duals. So are the
// kernels that locate events (kEvents, with kGeneral; docs/EVENTS.md): the root finder and the
// event program's interpreter would grow every general kernel that runs without events.
//
// WarpSystem, the warp path (GpuPath::kWarp, only when a spec asks for it: launch_policy.hpp says
// why): a team of lanes (kernels/linalg/team.hpp; a warp on the GPU) integrates one system.
// Lane 0 runs the staged path's scalar steps (kernels/staged/staged_stages.hpp: model evaluation,
// UK finish, integrator control); all lanes factor the system's M and B = A L^-T together, one
// matrix row per lane (kernels/staged/team_factorizations.hpp). Teams are independent: each loops
// until its own system is done, with its own step size, and no team waits for another.
#pragma once

#include "kernels/ensemble/system_kernel.hpp"
#include "kernels/staged/team_factorizations.hpp"

namespace ukes {

template <class Model, class T, Method kMethod, bool kGeneral, bool kServoDerivatives = false,
          bool kEvents = false>
struct FusedSystem {
  static_assert(kGeneral || !kServoDerivatives, "the controller's code is the general kernel's");
  static_assert(kGeneral || !kEvents, "events are the general kernel's");
  static_assert(kMethod != Method::kRosenbrock || !kServoDerivatives,
                "the stiff method does not follow servo derivatives");
  // Whether the CUDA module has this kernel only as compiled at run time for the model.
  static constexpr bool kCompiledAtRunTimeOnly =
      kServoDerivatives || kMethod == Method::kRosenbrock || kEvents;

  BatchInputView in;
  RunSettings<T> settings;
  BatchOutputView out;

  UKES_HD void operator()(int i) const {
    if constexpr (kMethod == Method::kRosenbrock) {
      StiffSystem<Model, T>::template run<kGeneral, kEvents>(in, settings, i, out);
    } else {
      SystemKernel<Model, T>::template run<kMethod, kGeneral, kServoDerivatives, kEvents>(
          in, settings, i, out);
    }
  }
};

template <class Model, class T>
struct WarpSystem {
  StagedWorkspace<Model, T> ws;
  BatchInputView in;
  RunSettings<T> s;
  BatchOutputView out;

  // Every lane of the team calls this with the same i.
  template <class Team>
  UKES_HD void operator()(const Team& team, int i) const {
    const bool lead = team.rank() == 0;
    if (lead) stage_begin(ws, in, s, out, i);
    team.sync();
    // active() is read by every lane after the sync that follows lane 0's last step: uniform.
    while (ws.systems[i].active()) {
      if (lead) stage_assemble(ws, s, i);
      team.sync();
      team_factor_mass(team, ws, i);
      if (lead) stage_reduce(ws, i);
      team.sync();
      if constexpr (kRows < Model >> 0) team_factor_constraints(team, ws, i);
      if (lead) stage_combine(ws, s, out, i);
      team.sync();
    }
  }
};

// Threads per block of the fused kernel: small blocks let the scheduler balance systems whose
// adaptive step counts differ, and register-heavy FP64 threads fit more blocks per SM.
inline constexpr int kFusedBlockThreads = 128;
// The warp path's blocks: four teams of 32 lanes.
inline constexpr int kWarpPathBlockThreads = 128;
inline constexpr int kWarpSize = 32;

}  // namespace ukes
