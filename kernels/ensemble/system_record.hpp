// The per-system record of an ensemble run, written once: what every system is integrated from
// (inputs), what it ends with (results) and what recorded systems carry per sample
// (trajectories). Every place that holds, moves, encodes or writes the record iterates these
// tables (in the style of MuJoCo's MJDATA_POINTERS): the structure-of-arrays views and owning
// buffers (batch_layout.hpp, ensemble.hpp), the GPU module's chunk arena and slice copies
// (kernels/backend/device/pipeline_buffers.hpp), the engine's slice copy, the protocol's
// SystemSummaries (service/protocol/result_chunks.cpp, result_assembler.cpp; the proto message
// names its fields as these tables do), the JSON and HDF5 result writers (service/results/) and,
// through the proto, the Python client.
//
// Adding a per-system result: one line in UKES_SYSTEM_RESULTS, its field in
// proto/ukes/v1/ukes.proto's SystemSummaries (same name), and the kernel that computes it
// (kernels/ensemble/system_kernel.hpp).
#pragma once

#include <cstddef>
#include <cstdint>

namespace ukes {

// How many components a field has per system.
enum class Width : int {
  kOne,            // a scalar
  kCoordinates,    // one per coordinate (n)
  kResidualSlots,  // one per residual slot: |phi| rows, |phid| rows, |psi| rows (2 mp + mv)
  kParams,         // one per model parameter
  kControlParams,  // one per model parameter in a controlled run, none otherwise
  // A run with events (docs/EVENTS.md), none otherwise: one per event; one per event and record
  // [event][record]; one per event, record and coordinate [event][record][coordinate].
  kEvents,
  kEventRecords,
  kEventCoordinates,
};

// The widths of one model's record.
struct RecordShape {
  int n = 0;
  int residual_slots = 0;
  int params = 0;
  int control_params = 0;  // params in a controlled run, else 0
  int events = 0;          // the run's events
  int event_records = 0;   // records kept per event (EventTable::records)
  constexpr int operator()(Width w) const {
    switch (w) {
      case Width::kOne:
        return 1;
      case Width::kCoordinates:
        return n;
      case Width::kResidualSlots:
        return residual_slots;
      case Width::kParams:
        return params;
      case Width::kControlParams:
        return control_params;
      case Width::kEvents:
        return events;
      case Width::kEventRecords:
        return events * event_records;
      case Width::kEventCoordinates:
        return events * event_records * n;
    }
    return 0;
  }
};

// How a field's values are stored and written: kStatus values are Status codes (batch_layout.hpp)
// written by name; kCount values are integers.
enum class Encoding : int { kReal, kCount, kStatus };

template <Encoding>
struct StorageOf;
template <>
struct StorageOf<Encoding::kReal> {
  using type = double;
};
template <>
struct StorageOf<Encoding::kCount> {
  using type = std::int64_t;
};
template <>
struct StorageOf<Encoding::kStatus> {
  using type = std::int32_t;
};
template <Encoding E>
using Storage = typename StorageOf<E>::type;

// X(name, encoding, width, description). Component k of system i lives at [k * count + i].
// clang-format off
#define UKES_SYSTEM_RESULTS(X)                                                                   \
  X(status, kStatus, kOne, "final status")                                                      \
  X(t, kReal, kOne, "time reached")                                                             \
  X(q, kReal, kCoordinates, "final coordinates")                                                \
  X(qd, kReal, kCoordinates, "final velocities")                                                \
  X(residual_max, kReal, kResidualSlots,                                                        \
    "max over accepted states of |phi| (position rows), |phid| (position rows), |psi| "         \
    "(velocity rows)")                                                                          \
  X(force_max, kReal, kOne, "max over accepted states of the total constraint force's 2-norm")   \
  X(control_effort_max, kReal, kOne,                                                            \
    "max over accepted states of the control force's 2-norm (0 without control)")               \
  X(inconsistency_max, kReal, kOne, "max over accepted states of |A qdd - b|")                  \
  X(steps, kCount, kOne, "accepted steps")                                                      \
  X(rejected, kCount, kOne, "rejected trial steps")                                             \
  X(event_count, kCount, kEvents, "occurrences of each event")                                  \
  X(event_t, kReal, kEventRecords, "each event's first records: times (NaN past the count)")    \
  X(event_q, kReal, kEventCoordinates, "each event's first records: coordinates (before a reset)") \
  X(event_qd, kReal, kEventCoordinates, "each event's first records: velocities (before a reset)")

// X(name, encoding, width, description): the inputs, after sweeps and model defaults.
#define UKES_SYSTEM_INPUTS(X)                                                                    \
  X(params, kReal, kParams, "parameter values, in the model's order")                          \
  X(q0, kReal, kCoordinates, "initial coordinates as specified (before any assembly)")          \
  X(qd0, kReal, kCoordinates, "initial velocities as specified (before any assembly)")          \
  X(control_params, kReal, kControlParams,                                                      \
    "the controller's parameter values, in the model's order (a controlled run)")

// X(name, width, description): per recorded system and sample, stored [slot][sample][component]
// in the view member traj_<name>.
#define UKES_TRAJECTORY_FIELDS(X)                                                                \
  X(q, kCoordinates, "coordinates")                                                             \
  X(qd, kCoordinates, "velocities")                                                             \
  X(residual, kResidualSlots,                                                                   \
    "signed constraint residuals phi, phid (position rows), psi (velocity rows)")               \
  X(force, kCoordinates, "total constraint force Qc")                                           \
  X(control, kCoordinates, "control force B u (a controlled run)")

// X(name, encoding): the per-system scalar results of UKES_SYSTEM_RESULTS that the ensemble
// statistics summarize over the ok systems, with their encoding there. Every place that computes,
// encodes or writes the statistics iterates this list: the host and Thrust statistics
// (kernels/ensemble/statistics.cpp, kernels/backend/thrust/), the protocol (ukes.proto's
// EnsembleStatistics has a Summary of each name), the JSON and HDF5 writers and the CLI's summary.
#define UKES_SUMMARIZED_SCALARS(X)                                                               \
  X(force_max, kReal)                                                                           \
  X(control_effort_max, kReal)                                                                  \
  X(steps, kCount)
// clang-format on

#define UKES_COUNT_SCALAR(name, encoding) +1
inline constexpr int kSummarizedScalars = 0 UKES_SUMMARIZED_SCALARS(UKES_COUNT_SCALAR);
#undef UKES_COUNT_SCALAR

// A field's description, for the loops over a table.
struct FieldInfo {
  const char* name;
  Encoding encoding;
  Width width;
  const char* description;
};

// Whether a run of record shape `shape` has field f: the controller's parameters only in a
// controlled run, the event fields only in a run with events (the writers leave the field out
// elsewhere).
constexpr bool field_present(const FieldInfo& f, const RecordShape& shape) {
  switch (f.width) {
    case Width::kControlParams:
    case Width::kEvents:
    case Width::kEventRecords:
    case Width::kEventCoordinates:
      return shape(f.width) > 0;
    default:
      return true;
  }
}

// Calls f(info, views.name...) for every result field: the same member of each view (pointers
// or vectors), in table order.
template <class F, class... Views>
void for_each_result(F&& f, Views&&... views) {
#define UKES_VISIT_FIELD(name, encoding, width, text) \
  f(FieldInfo{#name, Encoding::encoding, Width::width, text}, views.name...);
  UKES_SYSTEM_RESULTS(UKES_VISIT_FIELD)
}

// The same over the input fields.
template <class F, class... Views>
void for_each_input(F&& f, Views&&... views) {
  UKES_SYSTEM_INPUTS(UKES_VISIT_FIELD)
#undef UKES_VISIT_FIELD
}

// Calls f(info, views.traj_name...) for every trajectory field.
template <class F, class... Views>
void for_each_trajectory(F&& f, Views&&... views) {
#define UKES_VISIT_TRAJECTORY(name, width, text) \
  f(FieldInfo{#name, Encoding::kReal, Width::width, text}, views.traj_##name...);
  UKES_TRAJECTORY_FIELDS(UKES_VISIT_TRAJECTORY)
#undef UKES_VISIT_TRAJECTORY
}

// The trajectory fields' names, in table order.
inline constexpr const char* kTrajectoryNames[] = {
#define UKES_TRAJECTORY_NAME(name, width, text) #name,
    UKES_TRAJECTORY_FIELDS(UKES_TRAJECTORY_NAME)
#undef UKES_TRAJECTORY_NAME
};

// Bytes of one system's results (or inputs) in a model of shape `shape`.
constexpr std::size_t result_bytes_per_system(const RecordShape& shape) {
  std::size_t bytes = 0;
#define UKES_ADD_BYTES(name, encoding, width, text) \
  bytes += sizeof(Storage<Encoding::encoding>) * static_cast<std::size_t>(shape(Width::width));
  UKES_SYSTEM_RESULTS(UKES_ADD_BYTES)
  return bytes;
}
constexpr std::size_t input_bytes_per_system(const RecordShape& shape) {
  std::size_t bytes = 0;
  UKES_SYSTEM_INPUTS(UKES_ADD_BYTES)
#undef UKES_ADD_BYTES
  return bytes;
}
// Bytes of one recorded system's trajectories per sample.
constexpr std::size_t trajectory_bytes_per_sample(const RecordShape& shape) {
  std::size_t bytes = 0;
#define UKES_ADD_TRAJECTORY_BYTES(name, width, text) \
  bytes += sizeof(double) * static_cast<std::size_t>(shape(Width::width));
  UKES_TRAJECTORY_FIELDS(UKES_ADD_TRAJECTORY_BYTES)
#undef UKES_ADD_TRAJECTORY_BYTES
  return bytes;
}

}  // namespace ukes
