// Structured logs: one JSON object per line on stderr, {"ts", "level", "event", ...fields}.
#pragma once

#include <nlohmann/json.hpp>

namespace ukes::server {

enum class LogLevel { kInfo, kWarning, kError };

void log_event(LogLevel level, const char* event, nlohmann::json fields = nlohmann::json::object());

}  // namespace ukes::server
