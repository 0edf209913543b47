#include "kernels/backend/cpu/jit/cpu_jit.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string_view>
#include <system_error>
#include <thread>
#include <tuple>
#include <vector>

#include "kernels/backend/cuda/jit/codegen.hpp"
#include "kernels/backend/cuda/jit/embedded_headers.hpp"
#include "kernels/core/cancel.hpp"
#include "kernels/core/sha256.hpp"

extern char** environ;

namespace ukes::cpu_jit {
namespace {

namespace fs = std::filesystem;

#define UKES_CPU_JIT_OPTIONS_Scalar ""  // the per-system path: portable, as the build

constexpr const char* kEntryPoint = "ukes_compiled_lanes";
constexpr const char* kExtension = ".so";

// The lane libraries' options for each instruction set, from CMakeLists.txt; none for scalar.
const char* isa_options(CpuIsa isa) {
  switch (isa) {
#define UKES_CPU_JIT_ISA_CASE(Name, spelling, width) \
  case CpuIsa::k##Name:                              \
    return UKES_CPU_JIT_OPTIONS_##Name;
    UKES_CPU_ISAS(UKES_CPU_JIT_ISA_CASE)
#undef UKES_CPU_JIT_ISA_CASE
  }
  return nullptr;
}

// The instruction set's enumerator as C++ source names it.
const char* enumerator(CpuIsa isa) {
  switch (isa) {
#define UKES_CPU_JIT_ISA_ENUMERATOR(Name, spelling, width) \
  case CpuIsa::k##Name:                                    \
    return "k" #Name;
    UKES_CPU_ISAS(UKES_CPU_JIT_ISA_ENUMERATOR)
#undef UKES_CPU_JIT_ISA_ENUMERATOR
  }
  return "";
}

std::vector<std::string> words(const std::string& text) {
  std::istringstream in(text);
  return {std::istream_iterator<std::string>(in), std::istream_iterator<std::string>()};
}

std::vector<std::string> compile_options(CpuIsa isa) {
  std::vector<std::string> options = {"-std=c++20",
                                      "-O3",
                                      "-DNDEBUG",
                                      "-fPIC",
                                      "-shared",
                                      "-fvisibility=hidden",
                                      "-fvisibility-inlines-hidden",
                                      "-w",
                                      "-pthread"};
  for (std::string& o : words(isa_options(isa))) options.push_back(std::move(o));
  // The compiler's own search path holds Debian's xsimd; naming it again would reorder it.
  const std::string xsimd = UKES_CPU_JIT_XSIMD_INCLUDE_DIR;
  if (xsimd != "/usr/include") {
    options.push_back("-isystem");
    options.push_back(xsimd);
  }
  return options;
}

// The translation unit: the model's segments, the lanes or the per-system path around them, and
// one entry point. The static_asserts make a layout that differs from this process's a compile
// error, not a crash.
std::string translation_unit(const UserModelProgram& program, int bucket, CompileTarget target) {
  const std::string model = "ukes::UserModel<" + std::to_string(bucket) + ", ukes::jit::Segments>";
  const bool lanes = target.isa != CpuIsa::kScalar;
  const std::string scalar = target.fp32 ? "float" : "double";
  std::ostringstream s;
  s << "#include \"kernels/models/user/user_model.hpp\"\n\nnamespace ukes::jit {\n"
    << expr::generated_segments(program, "Segments") << "}  // namespace ukes::jit\n\n"
    << (lanes ? "#include \"kernels/backend/cpu/simd/lane_batch_impl.hpp\"\n"
              : "#include \"kernels/backend/cpu/cpu_backend_impl.hpp\"\n")
    << "\nstatic_assert(sizeof(ukes::BatchInputView) == " << sizeof(BatchInputView) << ");\n"
    << "static_assert(sizeof(ukes::BatchOutputView) == " << sizeof(BatchOutputView) << ");\n"
    << "static_assert(sizeof(ukes::RunSettings<" << scalar
    << ">) == " << (target.fp32 ? sizeof(RunSettings<float>) : sizeof(RunSettings<double>))
    << ");\n\n"
    << "extern \"C\" __attribute__((visibility(\"default\"))) void " << kEntryPoint
    << "(const ukes::BatchInputView& in, const ukes::RunSettings<" << scalar << ">& settings,\n"
    << "    const ukes::BatchOutputView& out, int threads) {\n";
  if (lanes) {
    s << "  ukes::run_batch_lanes<" << model << ", ukes::CpuIsa::" << enumerator(target.isa)
      << ">(in, settings, out, threads);\n}\n";
  } else {
    s << "  ukes::run_systems_cpu<" << model << ", " << scalar
      << ">(in, settings, out, threads);\n}\n";
  }
  return s.str();
}

// Everything of `program` its generated segments are made from, as bytes.
std::string program_bytes(const UserModelProgram& program) {
  const auto bytes = [](const auto* data, std::size_t count) {
    return std::string(reinterpret_cast<const char*>(data), count * sizeof(*data));
  };
  const expr::ProgramView& code = program.code;
  return bytes(code.code, static_cast<std::size_t>(program.instruction_count)) +
         bytes(code.constants, static_cast<std::size_t>(program.constant_count)) +
         bytes(code.begin, expr::kSegmentCount) + bytes(code.end, expr::kSegmentCount) +
         bytes(&code.registers, 1) + bytes(&program.shape, 1) + bytes(&program.nonideal, 1);
}

// What the compiled code is, in a note: "avx2 lanes", "per-system path (fp64)".
std::string what(CompileTarget target) {
  if (target.isa != CpuIsa::kScalar) return std::string(cpu_isa_name(target.isa)) + " lanes";
  return std::string("per-system path (") + (target.fp32 ? "fp32" : "fp64") + ")";
}

// The file a program name runs, as the cache key sees it: its size and time stamp stand for its
// version (an upgraded compiler compiles again).
std::string program_identity(const std::string& name) {
  fs::path found = name;
  if (name.find('/') == std::string::npos) {
    const char* path = std::getenv("PATH");
    std::istringstream dirs(path == nullptr ? "" : path);
    for (std::string dir; std::getline(dirs, dir, ':');) {
      std::error_code ec;
      if (!dir.empty() && fs::exists(fs::path(dir) / name, ec)) {
        found = fs::path(dir) / name;
        break;
      }
    }
  }
  std::error_code ec;
  const fs::path real = fs::canonical(found, ec);
  if (ec) return name;
  const auto bytes = fs::file_size(real, ec);
  const auto stamp = fs::last_write_time(real, ec).time_since_epoch().count();
  return real.string() + " " + std::to_string(bytes) + " " + std::to_string(stamp);
}

std::string cache_key(const std::string& source, const std::vector<std::string>& options,
                      const std::string& compiler) {
  Sha256 key;
  key.add(std::string_view("ukes cpu lanes 1")).add(program_identity(compiler));
  for (const auto& option : options) key.add(option);
  key.add(source);
  for (int k = 0; k < jit::kEmbeddedHeaderCount; ++k)
    key.add(std::string_view(jit::kEmbeddedHeaders[k].name))
        .add(std::string_view(jit::kEmbeddedHeaders[k].text));
  return to_hex(key.digest());
}

std::string bounded(const std::string& text, std::size_t limit) {
  std::string cut = text.substr(0, limit);
  if (text.size() > limit) cut += "...";
  return cut;
}

// Runs the compiler (no shell) with its output into `log`; its exit status, or -1.
int run_compiler(const std::string& compiler, const std::vector<std::string>& arguments,
                 const fs::path& log) {
  std::vector<std::string> argv_text = {compiler};
  argv_text.insert(argv_text.end(), arguments.begin(), arguments.end());
  std::vector<char*> argv;
  for (std::string& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, compiler.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A scratch directory, removed with everything in it when it goes.
struct ScratchDir {
  fs::path path;
  explicit ScratchDir(const fs::path& parent) {
    static std::atomic<unsigned> serial{0};
    std::error_code ec;
    fs::create_directories(parent, ec);
    path = parent / ("build.tmp." + std::to_string(::getpid()) + "." + std::to_string(serial++));
    fs::create_directories(path);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// Writes the embedded headers and the translation unit under `dir`.
void write_sources(const fs::path& dir, const std::string& source) {
  for (int k = 0; k < jit::kEmbeddedHeaderCount; ++k) {
    const fs::path header = dir / "include" / jit::kEmbeddedHeaders[k].name;
    fs::create_directories(header.parent_path());
    std::ofstream(header, std::ios::binary) << jit::kEmbeddedHeaders[k].text;
  }
  std::ofstream(dir / "model.cpp", std::ios::binary) << source;
}

// dlopen and the entry point; null with `note` set when either fails.
void* load(const fs::path& library, std::string& note) {
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    note = bounded(std::string("cannot load it: ") + (error ? error : "?"), 300);
    return nullptr;
  }
  // Kept open for the process: its code runs whenever the model does.
  void* entry = dlsym(handle, kEntryPoint);
  if (entry == nullptr) note = "it has no entry point";
  return entry;
}

// Compiles in a scratch directory under `folder` and renames the library to `destination`
// (empty: no cache; the library is loaded from the scratch directory, which then goes).
CompiledModel compile_now(const std::string& source, const std::vector<std::string>& options,
                          const std::string& compiler, const fs::path& folder,
                          const fs::path& destination) {
  CompiledModel result;
  const ScratchDir scratch(folder);
  write_sources(scratch.path, source);
  std::vector<std::string> arguments = options;
  const fs::path built = scratch.path / ("model" + std::string(kExtension));
  arguments.push_back("-I");
  arguments.push_back((scratch.path / "include").string());
  arguments.push_back("-o");
  arguments.push_back(built.string());
  arguments.push_back((scratch.path / "model.cpp").string());
  const fs::path log = scratch.path / "compiler.log";
  const int status = run_compiler(compiler, arguments, log);
  if (status != 0) {
    result.note = status < 0 ? "cannot run " + bounded(compiler, 100)
                             : "the compiler failed (exit " + std::to_string(status) +
                                   "): " + bounded(read_text(log), 300);
    return result;
  }
  std::error_code ec;
  fs::path library = built;
  if (!destination.empty()) {  // whole or not at all: readers never see a half-written library
    fs::rename(built, destination, ec);
    if (!ec) library = destination;
  }
  result.entry = load(library, result.note);
  return result;
}

// `source` compiled for `isa` (kScalar: portably), or loaded from the cache.
CompiledModel compile_translation_unit(const std::string& source, CpuIsa isa,
                                       const CompileSettings& settings) {
  const auto start = std::chrono::steady_clock::now();
  CompiledModel result;
  try {
    const std::vector<std::string> options = compile_options(isa);
    // The cache's folder, where it can be written; else a compile for this process alone.
    fs::path folder, library;
    std::error_code ec;
    if (settings.cache) {
      folder = settings.cache->dir / "cpu";
      fs::create_directories(folder, ec);
      if (ec || ::access(folder.c_str(), W_OK) != 0) folder.clear();
    }
    if (!folder.empty()) {
      library = folder / (cache_key(source, options, settings.compiler) + kExtension);
      if (fs::exists(library, ec)) {
        std::string note;
        result.entry = load(library, note);
        if (result.entry != nullptr) {
          result.from_cache = true;
          mark_cache_entry_used(library);
        } else {
          fs::remove(library, ec);  // unloadable: compiled again below
        }
      }
    }
    if (result.entry == nullptr) {
      result = compile_now(source, options, settings.compiler,
                           folder.empty() ? fs::temp_directory_path() : folder, library);
      if (!folder.empty()) trim_cache_dir(folder, kExtension, settings.cache->max_bytes);
    }
  } catch (const std::exception& e) {  // no scratch directory at all: the interpreter runs
    result.entry = nullptr;
    result.note = bounded(e.what(), 300);
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

// Compiles `source` on a thread of its own, which says on stderr what became of it: the runs that
// wait for it can stop waiting when they are cancelled, and other models' runs do not wait at all.
// A process that ends during a compile leaves its scratch folder behind, as a killed one would.
std::shared_future<void*> start_compile(std::string source, CompileTarget target,
                                        CompileSettings settings) {
  auto promise = std::make_shared<std::promise<void*>>();
  std::shared_future<void*> entry = promise->get_future().share();
  auto compile = [source = std::move(source), target, settings = std::move(settings), promise] {
    const CompiledModel model = compile_translation_unit(source, target.isa, settings);
    if (model.entry == nullptr) {
      std::fprintf(stderr, "ukes: this user model's %s runs interpreted: %s\n",
                   what(target).c_str(), model.note.c_str());
    } else if (!model.from_cache) {  // a run that waited seconds says for what
      std::fprintf(stderr, "ukes: compiled this user model's %s in %.1f s%s\n",
                   what(target).c_str(), model.seconds,
                   settings.cache ? " (kept in the cache: UKES_JIT_CACHE)" : "");
    }
    promise->set_value(model.entry);
  };
  try {
    std::thread(compile).detach();
  } catch (const std::system_error&) {  // no thread to be had: the caller compiles
    compile();
  }
  return entry;
}

}  // namespace

CompileSettings compile_settings() {
  CompileSettings s;
  const char* chosen = std::getenv("UKES_CPU_JIT_CXX");
  s.compiler = chosen != nullptr && *chosen != '\0' ? chosen : UKES_CPU_JIT_DEFAULT_CXX;
  s.cache = cache_dir_settings();
  return s;
}

CompiledModel compile_model(const UserModelProgram& program, int bucket, CompileTarget target,
                            const CompileSettings& settings) {
  if (target.fp32 && target.isa != CpuIsa::kScalar) {
    CompiledModel result;
    result.note = "the lanes run FP64 alone";
    return result;
  }
  return compile_translation_unit(translation_unit(program, bucket, target), target.isa, settings);
}

void* compiled_entry(const UserModelProgram& program, int bucket, CompileTarget target,
                     const std::int32_t* cancel) {
  const char* switch_value = std::getenv("UKES_CPU_JIT");
  if (switch_value != nullptr &&
      (std::strcmp(switch_value, "0") == 0 || std::strcmp(switch_value, "off") == 0))
    return nullptr;
  if (target.fp32 && target.isa != CpuIsa::kScalar) return nullptr;  // the lanes run FP64 alone
  // One compile per model and target in a process. Every run asks, so the model is told by its
  // program's bytes (instructions, constants, ranges, sizes), all the translation unit is made
  // from, not by generating that text again.
  static std::mutex mutex;
  static std::map<std::tuple<std::string, int, CpuIsa, bool>, std::shared_future<void*>> compiled;
  auto key = std::make_tuple(program_bytes(program), bucket, target.isa, target.fp32);
  std::shared_future<void*> entry;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    auto found = compiled.find(key);
    if (found == compiled.end()) {
      std::shared_future<void*> started =
          start_compile(translation_unit(program, bucket, target), target, compile_settings());
      found = compiled.emplace(std::move(key), std::move(started)).first;
    }
    entry = found->second;
  }
  // A cancelled run stops waiting: its systems are then cancelled by the interpreter's first check
  // (the caller runs it), and the compile goes on for the runs after it.
  while (entry.wait_for(std::chrono::milliseconds(20)) != std::future_status::ready)
    if (stop_requested(cancel)) return nullptr;
  return entry.get();
}

}  // namespace ukes::cpu_jit
