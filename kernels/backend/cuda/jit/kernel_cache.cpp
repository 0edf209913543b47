#include "kernels/backend/cuda/jit/kernel_cache.hpp"

#include <unistd.h>

#include <atomic>
#include <fstream>
#include <iterator>
#include <sstream>

#include "kernels/core/sha256.hpp"

namespace ukes::jit {
namespace {

constexpr const char* kMagic = "ukes-jit-kernel 1";
constexpr const char* kExtension = ".kernel";
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

std::filesystem::path KernelCache::entry_path(const std::string& key) const {
  return settings_.dir / (key + kExtension);
}

std::optional<CompiledKernel> KernelCache::find(const std::string& key) const {
  const auto path = entry_path(key);
  std::ifstream file(path, std::ios::binary);
  if (!file) return std::nullopt;
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  auto kernel = parse_entry(text, key);
  if (kernel) mark_cache_entry_used(path);
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
    trim_cache_dir(settings_.dir, kExtension, settings_.max_bytes);
  } catch (const std::exception&) {  // a cache that cannot be written costs only the compile
  }
}

}  // namespace ukes::jit
