// A run spec run through the one run path (parse_run_spec, execute), as the CLI and the server
// run it, on two CPU threads: for the tests that check what a spec asks for.
#pragma once

#include <nlohmann/json.hpp>

#include "service/engine/engine.hpp"
#include "service/runspec/run_spec.hpp"

namespace ukes {

inline RunOutcome run_spec(const nlohmann::json& spec) {
  ExecuteOptions options;
  options.threads = 2;
  return execute(parse_run_spec(spec), options);
}

}  // namespace ukes
