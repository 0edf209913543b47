// Model definitions (docs/MODEL_FORMAT.md): a JSON document checked completely, then compiled
// into the program user models run (kernels/expr/). Every mistake is found before any work and
// named by its JSON path and, inside an expression, its column.
#pragma once

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/expr/compiler.hpp"
#include "kernels/models/model_concept.hpp"
#include "kernels/models/user/user_model.hpp"

namespace ukes {

// A refused definition: `path` is the JSON path of the offending field ("$.mass[1][0]"),
// `column` the 1-based column in its expression (0: none); `limit` marks what is too large
// rather than wrong (services answer RESOURCE_EXHAUSTED). User text in `reason` is quoted,
// printable and bounded.
class DefinitionError : public std::runtime_error {
 public:
  DefinitionError(std::string path, int column, std::string reason, bool limit = false);
  std::string path;
  int column;
  std::string reason;
  bool limit;
};

struct UserParameter {
  std::string name;
  double value = 0;
  std::string description;
};

struct UserModelDefinition {
  std::string name, description;
  std::vector<std::string> coordinates;
  std::vector<UserParameter> parameters;
  int position_rows = 0;
  int velocity_rows = 0;
  bool nonideal = false;
  double t_end = 1.0;
  Gains gains;
  expr::Program program;
  // A controlled run's actuation matrix compiled into the program (segment Actuation), as given,
  // and its k columns (0: none). Not part of the model: canonical_json and content_id leave it out.
  nlohmann::json actuation;
  int actuation_columns = 0;
  std::vector<double> q0, qd0;  // the initial state at the default parameters
  // The definition as parsed, in a stable compact form (mass as its upper triangle): what results
  // record, and what the content id is the SHA-256 of.
  std::string canonical_json;
  std::string content_id;  // "sha256:<64 hex>"

  int n() const { return static_cast<int>(coordinates.size()); }
};

// Limits of a definition (docs/MODEL_FORMAT.md, "Limits").
inline constexpr std::size_t kMaxDefinitionTextBytes = std::size_t{1} << 20;
inline constexpr int kMaxCoordinates = 32;
inline constexpr int kMaxConstraintRows = 32;
inline constexpr int kMaxParameters = 128;
inline constexpr int kMaxIntermediates = 1024;

// Checks and compiles `definition`; errors name fields under `path` ("$" or a spec's "model").
UserModelDefinition parse_user_model(const nlohmann::json& definition,
                                     const std::string& path = "$");
// The same with a controlled run's actuation matrix (docs/CONTROL.md) compiled in; errors in it
// name fields under `actuation_path` ("control.actuation").
UserModelDefinition parse_user_model(const nlohmann::json& definition, const std::string& path,
                                     const nlohmann::json& actuation,
                                     const std::string& actuation_path);
// The same from JSON text (at most kMaxDefinitionTextBytes).
UserModelDefinition parse_user_model_text(std::string_view text);

// What the kernels read of `definition`: views into its program, valid while it lives.
UserModelProgram kernel_program(const UserModelDefinition& definition);

}  // namespace ukes
