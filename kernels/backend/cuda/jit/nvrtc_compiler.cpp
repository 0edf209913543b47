#include "kernels/backend/cuda/jit/nvrtc_compiler.hpp"

#include <nvrtc.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <sstream>
#include <vector>

#include "kernels/backend/cuda/jit/embedded_headers.hpp"
#include "kernels/backend/cuda/jit/kernel_cache.hpp"
#include "kernels/core/sha256.hpp"

namespace ukes::jit {
namespace {

// The standard headers device code includes, each libcu++'s equivalent brought into std (NVRTC
// has no standard library of its own). A header missing here fails the compile with its name.
constexpr const char* kStandardHeaders[] = {"atomic",   "cassert",     "cmath",
                                            "concepts", "cstddef",     "cstdint",
                                            "cstring",  "type_traits", "utility"};

std::string standard_header(const std::string& name) {
  return "#pragma once\n#include <cuda/std/" + name +
         ">\nnamespace std {\nusing namespace cuda::std;\n}\n";
}

// NVRTC's log, whole (compile_kernel cuts what it passes on).
std::string log_of(nvrtcProgram program) {
  std::size_t size = 0;
  if (nvrtcGetProgramLogSize(program, &size) != NVRTC_SUCCESS || size <= 1) return {};
  std::string log(size, '\0');
  if (nvrtcGetProgramLog(program, log.data()) != NVRTC_SUCCESS) return {};
  log.resize(size - 1);
  return log;
}

std::string cut(const std::string& text, std::size_t limit) {
  return text.size() <= limit ? text : text.substr(0, limit) + " [...]";
}

void check(nvrtcResult result, const char* what) {
  if (result != NVRTC_SUCCESS)
    throw JitError(std::string(what) + ": " + nvrtcGetErrorString(result));
}

struct ProgramDeleter {
  void operator()(nvrtcProgram* p) const {
    nvrtcDestroyProgram(p);
    delete p;
  }
};

// ptxas's resource lines from the log of a compile with -Xptxas=-v.
std::string ptxas_lines(const std::string& log) {
  std::istringstream in(log);
  std::string line, lines;
  while (std::getline(in, line))
    if (line.rfind("ptxas", 0) == 0) lines += line + "\n";
  return lines;
}

bool has_libcudacxx(const std::filesystem::path& dir) {
  std::error_code ec;
  return std::filesystem::exists(dir / "cuda" / "std" / "cstdint", ec);
}

}  // namespace

KernelResources resources_of(const std::string& ptxas_report, const std::string& function) {
  KernelResources r;
  std::istringstream in(ptxas_report);
  std::string line;
  bool inside = false;  // the lines after "Function properties for <function>"
  while (std::getline(in, line)) {
    if (line.find("Function properties for ") != std::string::npos) {
      inside = line.substr(line.rfind(' ') + 1) == function;
      continue;
    }
    if (!inside) continue;
    if (const auto at = line.find(" bytes stack frame"); at != std::string::npos) {
      std::sscanf(line.c_str() + line.rfind(' ', at - 1) + 1,
                  "%d bytes stack frame, %d bytes spill stores, %d bytes spill loads", &r.stack,
                  &r.spill_stores, &r.spill_loads);
    } else if (const auto used = line.find("Used "); used != std::string::npos) {
      std::sscanf(line.c_str() + used, "Used %d registers", &r.registers);
      if (const auto c = line.find(" bytes cumulative stack size"); c != std::string::npos) {
        int cumulative = 0;
        std::sscanf(line.c_str() + line.rfind(' ', c - 1) + 1, "%d", &cumulative);
        if (cumulative > r.stack) r.stack = cumulative;
      }
      inside = false;
    }
  }
  return r;
}

std::string libcudacxx_include_dir() {
  std::vector<std::filesystem::path> includes;
  if (const char* dir = std::getenv("UKES_CUDA_INCLUDE_DIR"); dir != nullptr && *dir != '\0')
    includes.emplace_back(dir);
#ifdef UKES_BUILD_CUDA_INCLUDE_DIR
  includes.emplace_back(UKES_BUILD_CUDA_INCLUDE_DIR);
#endif
  for (const char* variable : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* root = std::getenv(variable); root != nullptr && *root != '\0')
      includes.push_back(std::filesystem::path(root) / "include");
  includes.emplace_back("/usr/local/cuda/include");
  std::string tried;
  for (const auto& include : includes)
    for (const auto& dir : {include / "cccl", include}) {
      if (has_libcudacxx(dir)) return dir.string();
      tried += (tried.empty() ? "" : ", ") + dir.string();
    }
  throw JitError(cut("no libcu++ headers (cuda/std/cstdint) in " + tried +
                         "; set UKES_CUDA_INCLUDE_DIR to the CUDA toolkit's include directory",
                     600));
}

namespace {

// The options of every compile for sm_<arch>, libcu++ under `include_dir`. As the module's own
// kernels: C++20, NDEBUG (CMake's Release), FMA contraction (nvcc's default); -default-device:
// header functions without __host__ __device__ are host code NVRTC would refuse, and no device
// code calls one.
std::vector<std::string> compile_options(int arch, const std::string& include_dir) {
  return {"--std=c++20",
          "-DNDEBUG",
          "-default-device",
          "--fmad=true",
          "-Xptxas=-v",
          "--gpu-architecture=sm_" + std::to_string(arch),
          "--include-path=" + include_dir};
}

// The headers NVRTC is given: the embedded kernels/ headers, then the standard ones.
struct HeaderSet {
  std::vector<std::string> standard;
  std::vector<const char*> names, texts;
  HeaderSet() {
    for (int k = 0; k < kEmbeddedHeaderCount; ++k) {
      names.push_back(kEmbeddedHeaders[k].name);
      texts.push_back(kEmbeddedHeaders[k].text);
    }
    for (const char* name : kStandardHeaders) standard.push_back(standard_header(name));
    for (std::size_t k = 0; k < standard.size(); ++k) {
      names.push_back(kStandardHeaders[k]);
      texts.push_back(standard[k].c_str());
    }
  }
};

const HeaderSet& headers() {
  static const HeaderSet set;
  return set;
}

// The cache key (kernel_cache.hpp): SHA-256 of everything the cubin depends on.
std::string kernel_key(const FusedSource& source, const std::vector<std::string>& options) {
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  Sha256 key;
  key.add(std::string_view("ukes fused kernel")).add(std::int64_t{major}).add(std::int64_t{minor});
  for (const auto& option : options) key.add(option);
  key.add(source.text).add(source.name_expression);
  const HeaderSet& h = headers();
  for (std::size_t k = 0; k < h.names.size(); ++k)
    key.add(std::string_view(h.names[k])).add(std::string_view(h.texts[k]));
  return to_hex(key.digest());
}

CompiledKernel compile_with_nvrtc(const FusedSource& source,
                                  const std::vector<std::string>& options) {
  const HeaderSet& h = headers();
  std::unique_ptr<nvrtcProgram, ProgramDeleter> program(new nvrtcProgram{});
  check(nvrtcCreateProgram(program.get(), source.text.c_str(), "user_model_kernel.cu",
                           static_cast<int>(h.names.size()), h.texts.data(), h.names.data()),
        "nvrtcCreateProgram");
  check(nvrtcAddNameExpression(*program, source.name_expression.c_str()), "nvrtcAddNameExpression");
  std::vector<const char*> option_texts;
  for (const auto& option : options) option_texts.push_back(option.c_str());
  const nvrtcResult compiled =
      nvrtcCompileProgram(*program, static_cast<int>(option_texts.size()), option_texts.data());
  const std::string log = log_of(*program);
  if (compiled != NVRTC_SUCCESS)
    throw JitError(cut(std::string("NVRTC: ") + nvrtcGetErrorString(compiled) + "\n" + log, 2000));
  CompiledKernel kernel;
  std::size_t size = 0;
  check(nvrtcGetCUBINSize(*program, &size), "nvrtcGetCUBINSize");
  kernel.cubin.resize(size);
  check(nvrtcGetCUBIN(*program, kernel.cubin.data()), "nvrtcGetCUBIN");
  const char* lowered = nullptr;
  check(nvrtcGetLoweredName(*program, source.name_expression.c_str(), &lowered),
        "nvrtcGetLoweredName");
  kernel.lowered_name = lowered;
  kernel.ptxas_report = ptxas_lines(log);
  kernel.resources = resources_of(kernel.ptxas_report, kernel.lowered_name);
  return kernel;
}

}  // namespace

CompiledKernel compile_kernel(const FusedSource& source, int arch) {
  const auto start = std::chrono::steady_clock::now();
  const std::vector<std::string> options = compile_options(arch, libcudacxx_include_dir());
  const auto settings = kernel_cache_settings();
  std::optional<KernelCache> cache;
  std::string key;
  if (settings) {
    cache.emplace(*settings);
    key = kernel_key(source, options);
  }
  std::optional<CompiledKernel> kernel = cache ? cache->find(key) : std::nullopt;
  if (!kernel) {
    kernel = compile_with_nvrtc(source, options);
    if (cache) cache->store(key, *kernel);
  }
  kernel->compile_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return *kernel;
}

}  // namespace ukes::jit
