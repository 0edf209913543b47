#include "kernels/backend/cuda/jit/kernel_cache.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <vector>

#include "kernels/core/sha256.hpp"

namespace ukes::jit {
namespace {

constexpr const char* kMagic = "ukes-jit-kernel 1";
constexpr const char* kExtension = ".kernel";
constexpr std::uintmax_t kDefaultMaxBytes = 512ull << 20;

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

std::string payload_of(const CompiledKernel& k) {
  return k.lowered_name + k.ptxas_report + k.cubin;
}

// The file's text: the header (magic, key, the payload's digest, the three lengths), then the
// payload: lowered name, ptxas report, cubin.
std::string entry_text(const std::string& key, const CompiledKernel& k) {
  const std::string payload = payload_of(k);
  std::ostringstream out;
  out << kMagic << "\n"
      << key << "\n"
      << sha256_hex(payload) << "\n"
      << k.lowered_name.size() << " " << k.ptxas_report.size() << " " << k.cubin.size() << "\n"
      << payload;
  return out.str();
}

std::optional<CompiledKernel> parse_entry(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  std::string magic, stored_key, digest;
  std::size_t name_size = 0, report_size = 0, cubin_size = 0;
  if (!std::getline(in, magic) || magic != kMagic) return std::nullopt;
  if (!std::getline(in, stored_key) || stored_key != key) return std::nullopt;
  if (!std::getline(in, digest)) return std::nullopt;
  if (!(in >> name_size >> report_size >> cubin_size) || in.get() != '\n') return std::nullopt;
  const auto start = static_cast<std::size_t>(in.tellg());
  if (start > text.size() || text.size() - start != name_size + report_size + cubin_size ||
      cubin_size == 0)
    return std::nullopt;
  const std::string_view payload(text.data() + start, text.size() - start);
  if (sha256_hex(payload) != digest) return std::nullopt;
  CompiledKernel k;
  k.lowered_name = std::string(payload.substr(0, name_size));
  k.ptxas_report = std::string(payload.substr(name_size, report_size));
  k.cubin = std::string(payload.substr(name_size + report_size));
  k.resources = resources_of(k.ptxas_report, k.lowered_name);
  k.from_cache = true;
  return k;
}

}  // namespace

std::optional<KernelCacheSettings> kernel_cache_settings() {
  KernelCacheSettings s;
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

std::filesystem::path KernelCache::entry_path(const std::string& key) const {
  return settings_.dir / (key + kExtension);
}

std::optional<CompiledKernel> KernelCache::find(const std::string& key) const {
  const auto path = entry_path(key);
  std::ifstream file(path, std::ios::binary);
  if (!file) return std::nullopt;
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  auto kernel = parse_entry(text, key);
  if (kernel) {  // used now: the last to go when the cache is trimmed
    std::error_code ec;
    std::filesystem::last_write_time(path, std::filesystem::file_time_type::clock::now(), ec);
  }
  return kernel;
}

void KernelCache::store(const std::string& key, const CompiledKernel& kernel) const {
  static std::atomic<unsigned> serial{0};
  try {
    std::error_code ec;
    std::filesystem::create_directories(settings_.dir, ec);
    const auto path = entry_path(key);
    auto temporary = path;
    temporary += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(serial++);
    {
      std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
      out << entry_text(key, kernel);
      out.close();
      if (!out) {
        std::filesystem::remove(temporary, ec);
        return;
      }
    }
    std::filesystem::rename(temporary, path, ec);
    if (ec) std::filesystem::remove(temporary, ec);
    trim();
  } catch (const std::exception&) {  // a cache that cannot be written costs only the compile
  }
}

void KernelCache::trim() const {
  struct Entry {
    std::filesystem::path path;
    std::uintmax_t bytes;
    std::filesystem::file_time_type used;
  };
  std::vector<Entry> entries;
  std::uintmax_t total = 0;
  std::error_code ec;
  const auto now = std::filesystem::file_time_type::clock::now();
  for (const auto& e : std::filesystem::directory_iterator(settings_.dir, ec)) {
    const auto name = e.path().filename().string();
    std::error_code entry_ec;
    const auto used = e.last_write_time(entry_ec);
    if (entry_ec) continue;
    if (name.find(".tmp.") != std::string::npos) {  // a writer that died an hour ago
      if (now - used > std::chrono::hours(1)) std::filesystem::remove(e.path(), entry_ec);
      continue;
    }
    if (e.path().extension() != kExtension) continue;
    const auto bytes = e.file_size(entry_ec);
    if (entry_ec) continue;
    entries.push_back({e.path(), bytes, used});
    total += bytes;
  }
  if (total <= settings_.max_bytes) return;
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.used < b.used; });
  for (const Entry& e : entries) {
    if (total <= settings_.max_bytes) break;
    if (std::filesystem::remove(e.path, ec)) total -= e.bytes;
  }
}

}  // namespace ukes::jit
