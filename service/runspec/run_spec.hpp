// Run specs: the JSON document that describes one ensemble run (the docs/RUNSPEC.md contract),
// parsed and validated completely before any work is done.
//
// Every invalid field raises SpecError naming the field by its JSON path (`integrator.rtol`,
// `systems[3].q0`, `sweep.vary.params.m1`); a spec that is valid but asks for more than the
// limits allow raises LimitError (a SpecError too), so a server can map the two to
// INVALID_ARGUMENT and RESOURCE_EXHAUSTED.
//
// Fields and defaults (anything else is an error):
//   model          catalogue name, inline definition object (docs/MODEL_FORMAT.md) or the content
//                  id of a registered definition, "sha256:..." (required)
//   description    free text, ignored (an extra)
//   params         {name: value} applied to every system; structural parameters only at their value
//   systems        [{params, q0, qd0}]: an explicit batch; q0/qd0 left out mean the model's default
//                  initial condition at that system's parameters
//   sweep          {count, seed = 0, sampler = random|lhs|sobol, vary: {target: {dist: [...]}}}
//                  targets params.NAME, q0[i], qd0[i]; distributions uniform [lo, hi],
//                  normal [mean, sd], lognormal [mu, sigma], values [...]. Dimension d of the
//                  sample is the d-th target in sorted (byte-wise) order of the target names.
//                  Initial-condition components not swept are the model's default at each
//                  system's (swept) parameters.
//   (neither)      one system at the model's defaults (with `params` applied)
//   assemble       false
//   integrator     {method = dopri5|rk4|rosenbrock, t0 = 0, t_end = model's, dt (rk4: (t_end -
//                  t0) / 1000; dopri5, rosenbrock: first trial step, 0 = automatic), rtol = atol =
//                  1e-9, max_steps = 1000000}
//   stabilization  {alpha, beta = model's gains, projection = false; extras: inconsistency_tol,
//                  projection_tol (> 0; left out: the engine's defaults)}
//   control        {rows = "all" | [indices], params: {name: value} (the controller's model:
//                  model defaults overridden), actuation = "full" | [coordinate names] |
//                  (user models) [[expressions]], robust: {gain = 0, epsilon = 1e-3},
//                  relative_degree = each row's order | integer | [one per servo row]}
//                  (docs/CONTROL.md); sweeps may target control.params.NAME
//   events         [{name, condition, direction = both|rising|falling, action =
//                  record|terminate|reset, reset: {q, qd} (action reset), max = 16}], at most 8:
//                  zero crossings of condition expressions located on the dense output
//                  (docs/EVENTS.md)
//   precision      fp64 | fp32
//   device         auto | cpu | gpu (gpu is an error when no GPU backend is available)
//   device_ids     [ordinals]: the GPUs a GPU run spreads its slices over (default: all usable;
//                  docs/SCALING.md); an extra beyond docs/RUNSPEC.md's contract
//   gpu_path       auto | fused | warp | cusolver: how the GPU integrates (auto: by system size)
//   output         {samples = 101 (>= 2), trajectories = none|all|"first:N"|[ids],
//                  fields = [q, qd, residual, force, control] (any non-empty subset; control
//                  only in a controlled run, where it is in the default)}
//   shard          {first, count}: run systems [first, first + count) of the ones the spec
//                  describes, each exactly as the whole run has it (ids, samples and recorded
//                  trajectories stay the whole run's); docs/SCALING.md. The limits apply to the
//                  shard's count.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/backend/backend.hpp"
#include "kernels/ensemble/ensemble.hpp"
#include "kernels/models/model_info.hpp"
#include "kernels/sweep/sweep.hpp"

namespace ukes {

// An invalid spec: `field` is the JSON path of the offending field, `reason` says what is wrong.
// Both hold client text, so both are kept as printable_text (printable ASCII, bounded): safe to
// put in gRPC metadata, a status message or a log line as they are.
class SpecError : public std::runtime_error {
 public:
  SpecError(const std::string& field, const std::string& reason);
  const std::string& field() const { return field_; }
  const std::string& reason() const { return reason_; }

 private:
  struct Printable {};
  SpecError(std::string field, std::string reason, Printable);
  std::string field_;
  std::string reason_;
};

// A valid spec that asks for more than SpecLimits allows.
class LimitError : public SpecError {
 public:
  using SpecError::SpecError;
};

struct SpecLimits {
  std::int64_t max_systems = 10'000'000;  // never more than INT32_MAX
  std::int64_t max_samples = 1'000'000;   // K
  // Bytes of trajectory buffers held in memory: N_out * K * the trajectory fields' bytes per
  // sample (kernels/ensemble/system_record.hpp: 4 n + residual slots doubles).
  std::int64_t max_trajectory_bytes = std::int64_t{4} << 30;
};

// What the process that will run the spec can use (gpu_availability() in a real run).
class ModelRegistry;  // service/runspec/model_source.hpp

struct ParseOptions {
  SpecLimits limits;
  // Where `model` ids ("sha256:...") are looked up, among `model_owner`'s; null: ids are refused.
  const ModelRegistry* models = nullptr;
  std::string model_owner;
  bool gpu_available = false;
  std::string gpu_unavailable_reason = "no GPU backend";
  int gpu_devices = 1;           // the GPUs here (GpuDeviceInfo::device_count), when gpu_available
  std::vector<int> gpu_allowed;  // the GPUs a run may name (a server's --devices); empty: all
  // False: validate only, and leave a generated batch (defaults, sweeps) to batch_slice, so that
  // a spec of 10^7 systems costs its text, not 10^7 systems' inputs (the server's way).
  bool build_batch = true;
};

enum class TrajectoryMode { kNone, kAll, kFirst, kList };

// Systems [first, first + count) of a run.
struct SystemRange {
  std::int64_t first = 0;
  std::int64_t count = 0;
  std::int64_t end() const { return first + count; }
};

struct OutputSpec {
  int samples = 101;
  TrajectoryMode trajectories = TrajectoryMode::kNone;
  std::int64_t first = 0;  // kFirst: N as written (may exceed the count)
  // The recorded systems, in order, as indices into the batch (a shard's: its own systems among
  // those the spec records, less RunSpec::shard.first).
  std::vector<std::int32_t> trajectory_ids;
  std::vector<std::int32_t> listed_ids;                     // kList: the ids as the spec lists them
  bool q = true, qd = true, residual = true, force = true;  // fields
  bool control = false;  // a controlled run's control force: asked, or by default in such a run
  // Whether trajectory field `name` (system_record.hpp) is written.
  bool wants(std::string_view name) const;
};

struct RunSpec {
  const ModelInfo* model = nullptr;
  std::shared_ptr<const ModelInfo> user_model;  // owns *model when it is a user model
  // Every system, parameters and initial conditions filled. Without ParseOptions::build_batch
  // only model and count are set, and the arrays hold explicit `systems` alone (they came in the
  // spec); batch_slice builds any part.
  Batch batch;
  EnsembleSettings settings;  // samples = output.samples; threads left at 0
  Device device = Device::kAuto;
  Device device_resolved = Device::kCpu;  // the backend that will run: kCpu or kGpu
  // Why `auto` would run on the CPU here (no usable GPU, or a model too large for its code).
  std::string cpu_reason;
  std::vector<int> device_ids;  // the GPUs to use, in this order; empty: every usable one
  OutputSpec output;
  std::vector<double> params;  // the model defaults with the spec's `params` applied
  // A controlled run: the controller's parameters, the model defaults with control.params applied.
  std::vector<double> control_params;
  std::optional<SweepSpec> sweep;
  bool explicit_systems = false;
  // The systems the batch holds among those the spec describes ("shard"; all of them when the
  // spec has none): batch system i is system shard.first + i of the whole run.
  SystemRange shard;
  std::int64_t whole_count = 0;  // the systems the spec describes
  bool sharded() const { return shard.count != whole_count; }
};

// Parses and validates a spec; throws SpecError / LimitError.
RunSpec parse_run_spec(const nlohmann::json& spec, const ParseOptions& options = {});

// Systems [first, first + count) of the spec's batch, exactly as the whole batch holds them: the
// spec's explicit systems, or the shared parameters, the sweep's samples (of the whole run's
// systems shard.first + first, ...) and the model's default initial states. O(count) work and
// memory whatever the batch's size.
Batch batch_slice(const RunSpec& spec, std::int64_t first, int count);

// The widths of the spec's per-system record: its model's, with the controller's parameters in a
// controlled run.
RecordShape record_shape(const RunSpec& spec);

// Text of the methods and enums as they appear in specs.
const char* method_name(Method m);
const char* precision_name(Precision p);
const char* sampler_name(Sampler s);
const char* gpu_path_name(GpuPath p);

// Bytes of the trajectory buffers of `systems` recorded systems of `model` at `samples` times.
std::int64_t trajectory_bytes(const ModelInfo& model, std::int64_t systems, std::int64_t samples);

}  // namespace ukes
