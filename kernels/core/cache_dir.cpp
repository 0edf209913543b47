#include "kernels/core/cache_dir.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <vector>

namespace ukes {
namespace {

constexpr std::uintmax_t kDefaultMaxBytes = 512ull << 20;

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

}  // namespace

std::optional<CacheDirSettings> cache_dir_settings() {
  CacheDirSettings s;
  const std::string chosen = environment("UKES_JIT_CACHE");
  if (chosen == "off") return std::nullopt;
  if (!chosen.empty()) {
    s.dir = chosen;
  } else if (const std::string xdg = environment("XDG_CACHE_HOME"); !xdg.empty()) {
    s.dir = std::filesystem::path(xdg) / "ukes" / "jit";
  } else if (const std::string home = environment("HOME"); !home.empty()) {
    s.dir = std::filesystem::path(home) / ".cache" / "ukes" / "jit";
  } else {
    return std::nullopt;
  }
  s.max_bytes = kDefaultMaxBytes;
  const std::string megabytes = environment("UKES_JIT_CACHE_MAX_MB");
  if (!megabytes.empty()) {
    char* end = nullptr;
    const unsigned long long mb = std::strtoull(megabytes.c_str(), &end, 10);
    if (end != nullptr && *end == '\0') s.max_bytes = static_cast<std::uintmax_t>(mb) << 20;
  }
  return s;
}

void mark_cache_entry_used(const std::filesystem::path& entry) {
  std::error_code ec;
  std::filesystem::last_write_time(entry, std::filesystem::file_time_type::clock::now(), ec);
}

void trim_cache_dir(const std::filesystem::path& dir, const std::string& extension,
                    std::uintmax_t max_bytes) {
  struct Entry {
    std::filesystem::path path;
    std::uintmax_t bytes;
    std::filesystem::file_time_type used;
  };
  try {
    std::vector<Entry> entries;
    std::uintmax_t total = 0;
    std::error_code ec;
    const auto now = std::filesystem::file_time_type::clock::now();
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
      const auto name = e.path().filename().string();
      std::error_code entry_ec;
      const auto used = e.last_write_time(entry_ec);
      if (entry_ec) continue;
      if (name.find(".tmp.") != std::string::npos) {  // a writer that died an hour ago
        if (now - used > std::chrono::hours(1)) std::filesystem::remove_all(e.path(), entry_ec);
        continue;
      }
      if (e.path().extension() != extension) continue;
      const auto bytes = e.file_size(entry_ec);
      if (entry_ec) continue;
      entries.push_back({e.path(), bytes, used});
      total += bytes;
    }
    if (total <= max_bytes) return;
    std::sort(entries.begin(), entries.end(),
              [](const Entry& a, const Entry& b) { return a.used < b.used; });
    for (const Entry& e : entries) {
      if (total <= max_bytes) break;
      if (std::filesystem::remove(e.path, ec)) total -= e.bytes;
    }
  } catch (const std::exception&) {  // a cache that cannot be trimmed costs only disk
  }
}

}  // namespace ukes
