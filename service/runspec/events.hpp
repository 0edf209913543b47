// A run spec's "events" (docs/EVENTS.md) compiled for the kernels: the conditions and resets,
// expressions of docs/MODEL_FORMAT.md's language over the model's coordinates, `<coord>_dot`,
// parameters and `t`, become one program (kernels/expr/compiler.hpp) that the EventTable of
// kernels/ensemble/event_table.hpp points into.
#pragma once

#include <string>
#include <vector>

#include "kernels/ensemble/ensemble.hpp"
#include "kernels/models/model_info.hpp"

namespace ukes {

// One event as the spec gives it, its JSON structure already checked (run_spec.cpp).
struct EventSpec {
  std::string name;
  std::string condition;
  EventDirection direction = EventDirection::kBoth;
  EventAction action = EventAction::kRecord;
  // A reset's new coordinates and velocities, one expression per coordinate; empty: unchanged.
  std::vector<std::string> reset_q, reset_qd;
  int max = 16;  // records kept per system
};

// Records kept per event and system when the spec does not say.
inline constexpr int kDefaultEventRecords = 16;

// Compiles `events` for model m into s.events, s.event_program and s.event_names. Throws
// SpecError (run_spec.hpp) naming the field, e.g. "events[1].reset.qd[0]", and the column of an
// expression's mistake.
void compile_events(const std::vector<EventSpec>& events, const ModelInfo& m, EnsembleSettings& s);

}  // namespace ukes
