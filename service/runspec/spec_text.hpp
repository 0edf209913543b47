// Spec documents as text: JSON parsed strictly (duplicate keys are errors, not silently merged).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace ukes {

// Parses JSON text; throws SpecError with field "spec" on a syntax error, or with the path of a
// duplicated key.
nlohmann::json parse_spec_text(const std::string& text);

}  // namespace ukes
