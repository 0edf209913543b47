#include "service/server/log.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

namespace ukes::server {

namespace {

// UTC, ISO 8601 with milliseconds.
std::string timestamp() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t secs = std::chrono::system_clock::to_time_t(now);
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
  return buf;
}

const char* level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarning:
      return "warning";
    case LogLevel::kError:
      return "error";
  }
  return "info";
}

}  // namespace

void log_event(LogLevel level, const char* event, nlohmann::json fields) {
  nlohmann::json line = {{"ts", timestamp()}, {"level", level_name(level)}, {"event", event}};
  if (fields.is_object()) line.update(fields);
  // Invalid UTF-8 in client-supplied text must not throw here.
  const std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  static std::mutex mu;
  const std::lock_guard lock(mu);
  std::fprintf(stderr, "%s\n", text.c_str());
  std::fflush(stderr);
}

}  // namespace ukes::server
