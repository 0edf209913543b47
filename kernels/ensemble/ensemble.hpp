// Host-side ensemble API: owning structure-of-arrays buffers for a batch and its results, and the
// entry point that runs a batch on a backend. Backends see only the views of batch_layout.hpp.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernels/backend/cpu/cpu_isa.hpp"
#include "kernels/core/cancel.hpp"
#include "kernels/ensemble/batch_layout.hpp"
#include "kernels/ensemble/event_table.hpp"
#include "kernels/models/model_info.hpp"
#include "kernels/models/user/compiled_model.hpp"
#include "kernels/uk/actuation.hpp"

namespace ukes {

namespace expr {
struct Program;  // kernels/expr/compiler.hpp
}  // namespace expr

enum class Precision { kFp64, kFp32 };

// How the CUDA backend integrates a batch: the fused kernel with one thread per system (its whole
// integration in registers) or one warp per system (the factorizations shared by the warp's
// lanes), or the staged path (batched cuSOLVER linear algebra per RK stage). kAuto picks by size
// (kernels/backend/gpu/launch_policy.hpp).
enum class GpuPath { kAuto, kFused, kWarp, kCusolver };

// Constraint-following control (docs/CONTROL.md, kernels/uk/servo_control.hpp): which rows the
// controller follows, through which coordinates, with which robust term. The controller's
// parameters are per system (Batch::control_params).
struct ControlOptions {
  bool active = false;
  std::uint64_t servo_rows = 0;  // bit r: row r is a servo row
  Actuation actuation = Actuation::kFull;
  std::uint64_t actuated = ~std::uint64_t{0};  // kCoordinates: bit j, coordinate j actuated
  double gain = 0.0;                           // robust term; 0: none
  double epsilon = 1e-3;
  // Servo rows the input reaches only through further derivatives (bit r) and their relative
  // degrees (kernels/uk/servo_derivatives.hpp); rows outside the mask have their own order's.
  std::uint64_t higher_degree_rows = 0;
  std::array<std::uint8_t, kMaxControlRows> relative_degree{};
};

struct EnsembleSettings {
  Method method = Method::kDopri5;
  Precision precision = Precision::kFp64;
  double t0 = 0.0;
  double t_end = 1.0;
  double dt = 0.0;  // RK4 step; DOPRI5 first trial step (0: automatic)
  double rtol = 1e-9;
  double atol = 1e-9;
  std::int64_t max_steps = 1000000;
  double alpha = 0.0;  // Baumgarte gains
  double beta = 0.0;
  double rank_rtol = -1.0;         // < 0: max(m, n) eps
  double inconsistency_tol = 0.0;  // <= 0: default (run_settings.hpp)
  double projection_tol = 0.0;     // <= 0: 1000 eps
  bool assemble = false;
  bool projection = false;
  ControlOptions control;
  int samples = 2;  // K uniform sample times, t0 and t_end included
  // Events (docs/EVENTS.md; none when events.count is 0): the table the kernels read, whose
  // program points into event_program, and the events' names in table order.
  EventTable events;
  std::shared_ptr<const expr::Program> event_program;
  std::vector<std::string> event_names;
  int threads = 0;  // CPU threads; <= 0: all hardware threads
  // The instruction set of the CPU's lanes (kernels/backend/cpu/cpu_isa.hpp); unset: the
  // process's choice (UKES_CPU_ISA, else the best this CPU has).
  std::optional<CpuIsa> cpu_isa = std::nullopt;
  GpuPath gpu_path = GpuPath::kAuto;
  std::size_t gpu_memory_budget = 0;  // device bytes a GPU run may use; 0: 80% of what is free
  // Page-locked host bytes a GPU run may pin (its chunks' host mirrors); 0: 256 MiB
  // (kernels/backend/gpu/launch_policy.hpp).
  std::size_t gpu_pinned_budget = 0;
  // When set and requested, the run stops within a few steps of every system: systems in flight
  // and systems not reached end with status kCancelled.
  const CancelFlag* cancel = nullptr;

  // Defaults of a model: its end time and Baumgarte gains.
  static EnsembleSettings for_model(const ModelInfo& m);
};

// The widths of model m's per-system record (system_record.hpp).
RecordShape record_shape(const ModelInfo& m);

// The systems of one run, structure of arrays: component k of system i at [k * count + i].
struct Batch {
  const ModelInfo* model = nullptr;
  int count = 0;
  // One vector per input field of system_record.hpp: params [param][count], q0 and qd0
  // [coordinate][count]; control_params [param][count] in a controlled run, empty otherwise.
#define UKES_INPUT_VECTOR(name, encoding, width, text) \
  std::vector<Storage<Encoding::encoding>> name;
  UKES_SYSTEM_INPUTS(UKES_INPUT_VECTOR)
#undef UKES_INPUT_VECTOR

  // `count` systems at the model's default parameters and initial condition.
  static Batch defaults(const ModelInfo& m, int count);
  RecordShape shape() const;
  double& param(int k, int i) { return params[static_cast<std::size_t>(k) * count + i]; }
  double& q(int j, int i) { return q0[static_cast<std::size_t>(j) * count + i]; }
  double& qd(int j, int i) { return qd0[static_cast<std::size_t>(j) * count + i]; }
  BatchInputView view() const;
};

struct BatchResults {
  int count = 0;
  int n = 0;
  int residual_slots = 0;
  int samples = 0;
  int events = 0;         // the run's events (docs/EVENTS.md)
  int event_records = 0;  // records kept per event
  // One vector per result field of system_record.hpp, component k of system i at [k * count + i].
#define UKES_RESULT_VECTOR(name, encoding, width, text) \
  std::vector<Storage<Encoding::encoding>> name;
  UKES_SYSTEM_RESULTS(UKES_RESULT_VECTOR)
#undef UKES_RESULT_VECTOR
  // Trajectories of the systems in traj_ids, in that order: traj_<field> [slot][sample][width].
  std::vector<std::int32_t> traj_ids;
  std::vector<std::int32_t> traj_slot;  // [count], -1 when not recorded
#define UKES_TRAJECTORY_VECTOR(name, width, text) std::vector<double> traj_##name;
  UKES_TRAJECTORY_FIELDS(UKES_TRAJECTORY_VECTOR)
#undef UKES_TRAJECTORY_VECTOR
  double elapsed_s = 0.0;
  std::string backend;

  // Sizes every buffer for `batch`, recording trajectories of `traj_ids` at `samples` times, and
  // the records of `events`.
  void allocate(const Batch& batch, int samples, const std::vector<std::int32_t>& traj_ids,
                const EventTable& events = {});
  RecordShape shape() const { return {n, residual_slots, 0, 0, events, event_records}; }
  BatchOutputView view();
  double q_at(int j, int i) const { return q[static_cast<std::size_t>(j) * count + i]; }
  double qd_at(int j, int i) const { return qd[static_cast<std::size_t>(j) * count + i]; }
  double residual_at(int r, int i) const {
    return residual_max[static_cast<std::size_t>(r) * count + i];
  }
  // Sample k of trajectory slot `slot`, component j.
  double traj_q_at(int slot, int k, int j) const {
    return traj_q[(static_cast<std::size_t>(slot) * samples + k) * n + j];
  }
  double traj_qd_at(int slot, int k, int j) const {
    return traj_qd[(static_cast<std::size_t>(slot) * samples + k) * n + j];
  }
  double traj_residual_at(int slot, int k, int r) const {
    return traj_residual[(static_cast<std::size_t>(slot) * samples + k) * residual_slots + r];
  }
  double traj_force_at(int slot, int k, int j) const {
    return traj_force[(static_cast<std::size_t>(slot) * samples + k) * n + j];
  }
};

const char* status_name(Status s);
// The sample times of a run: K uniform times from t0 to t_end, both included.
std::vector<double> sample_times(const EnsembleSettings& s);

// Runs `batch` on the CPU backend; fills `results` (allocated here for s.samples and traj_ids).
// How run_ensemble_cpu runs s's systems in SIMD lanes ("avx2 lanes of 4",
// kernels/backend/cpu/cpu_isa.hpp); empty when each runs alone.
std::string cpu_lanes_description(const EnsembleSettings& s);

void run_ensemble_cpu(const Batch& batch, const EnsembleSettings& s, BatchResults& results,
                      const std::vector<std::int32_t>& traj_ids = {});

}  // namespace ukes
