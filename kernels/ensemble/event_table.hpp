// A run's events (docs/EVENTS.md) as the kernels read them: per event its direction, its action
// and how many records a system keeps, and one compiled program (kernels/expr/program.hpp) whose
// EventConditions segment gives every condition g_e(q, qd, t, p) and whose EventResetQ and
// EventResetQd segments give the resets' new coordinates and velocities. The program lives where
// the kernels run (host memory on the CPU, device memory on the GPU) for the whole run.
//
// SystemKernel (system_kernel.hpp) locates the events on its method's dense output when built
// with them (kEvents); kernels/ensemble/events.hpp holds the root finder.
#pragma once

#include <cstdint>

#include "kernels/expr/program.hpp"

namespace ukes {

// X(id, name): the directions and actions, with their names in run specs.
#define UKES_EVENT_DIRECTIONS(X) X(kRising, "rising") X(kFalling, "falling") X(kBoth, "both")
#define UKES_EVENT_ACTIONS(X) X(kRecord, "record") X(kTerminate, "terminate") X(kReset, "reset")
#define UKES_EVENT_ENUMERATOR(id, name) id,
enum class EventDirection : std::int32_t { UKES_EVENT_DIRECTIONS(UKES_EVENT_ENUMERATOR) };
enum class EventAction : std::int32_t { UKES_EVENT_ACTIONS(UKES_EVENT_ENUMERATOR) };
#undef UKES_EVENT_ENUMERATOR

// Events a run may have, and records a system may keep of each.
inline constexpr int kMaxEvents = 8;
inline constexpr int kMaxEventRecords = 1024;

struct EventTable {
  int count = 0;    // the run's events; 0: none
  int records = 0;  // the record stride: the largest `max` of the run's events
  EventDirection direction[kMaxEvents] = {};
  EventAction action[kMaxEvents] = {};
  int max_records[kMaxEvents] = {};  // event e keeps its first max_records[e] records
  // Bit e: event e's reset gives new coordinates (q) / velocities (qd).
  std::uint32_t resets_q = 0, resets_qd = 0;
  expr::ProgramView program;
  int instruction_count = 0;  // the lengths of program.code and program.constants
  int constant_count = 0;
};

// Whether crossing from g_before to g_after counts for `direction`: a strict sign change, or
// reaching zero from the given side (a zero that the state then leaves counts once, on arrival).
template <class T>
UKES_HD bool crosses(EventDirection direction, T g_before, T g_after) {
  const bool rising = g_before < T(0) && g_after >= T(0);
  const bool falling = g_before > T(0) && g_after <= T(0);
  switch (direction) {
    case EventDirection::kRising:
      return rising;
    case EventDirection::kFalling:
      return falling;
    case EventDirection::kBoth:
      return rising || falling;
  }
  return false;
}

}  // namespace ukes
