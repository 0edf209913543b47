// The model definition files shipped in client/examples/models/ (the catalogue written as
// definitions, and the double pendulum of the README), and the generated-code tests' own in
// tests/jit/models/, for tests.
#pragma once

#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "kernels/models/user/compiled_model.hpp"

namespace ukes {

inline std::string example_definition_text(const std::string& name) {
  std::ifstream in(std::string(UKES_SOURCE_DIR) + "/client/examples/models/" + name + ".json");
  if (!in) in.open(std::string(UKES_SOURCE_DIR) + "/tests/jit/models/" + name + ".json");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline std::shared_ptr<const ModelInfo> example_model(const std::string& name) {
  return make_user_model_info(parse_user_model_text(example_definition_text(name)));
}

}  // namespace ukes
