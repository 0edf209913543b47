// The typed run spec of the protocol (ukes.v1.RunSpec) as the JSON document it mirrors, so that one
// validator (parse_run_spec) checks both forms and names fields by the same paths.
#pragma once

#include <nlohmann/json.hpp>

#include "ukes/v1/ukes.pb.h"

namespace ukes {

// Only fields that are set appear in the document; what is left out takes the spec's defaults.
// Throws SpecError where the message itself is contradictory (trajectories and trajectory_ids).
nlohmann::json spec_json_from_proto(const v1::RunSpec& spec);

}  // namespace ukes
