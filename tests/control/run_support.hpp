// How the control tests run a spec: parsed, then executed in process on two CPU threads.
#pragma once

#include <nlohmann/json.hpp>

#include "service/engine/engine.hpp"
#include "service/runspec/run_spec.hpp"

namespace ukes::control_test {

inline RunOutcome run(const nlohmann::json& spec) {
  ExecuteOptions options;
  options.threads = 2;
  return execute(parse_run_spec(spec), options);
}

}  // namespace ukes::control_test
