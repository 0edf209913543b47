#include "service/engine/version.hpp"

namespace ukes {

const char* version() { return "0.1.0"; }

}  // namespace ukes
