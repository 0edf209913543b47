// A user model's CPU code compiled at run time for it (kernels/backend/cpu/jit/cpu_jit.hpp): its
// lanes give the interpreter's results to the lanes' bound, for models with each kind of row and
// force, and its per-system path the interpreter's bits; it reads no parameter past the model's
// own; the cache directory turns the second compile into a load, recompiles what it cannot load
// and costs only the keeping where it cannot be written; without a compiler the interpreter runs;
// two models compile side by side, and a cancelled run does not wait for its model's compile.
#include "kernels/backend/cpu/jit/cpu_jit.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "kernels/backend/cpu/cpu_backend.hpp"
#include "kernels/core/cancel.hpp"
#include "kernels/ensemble/ensemble.hpp"
#include "lanes/agreement.hpp"
#include "support/example_models.hpp"
#include "support/scoped_env.hpp"

namespace ukes {
namespace {

namespace fs = std::filesystem;

// A cache directory of the test's own, removed after.
class JitCacheDir {
 public:
  JitCacheDir()
      : path_(fs::temp_directory_path() / ("ukes-cpu-jit-test-" + std::to_string(::getpid()) + "-" +
                                           std::to_string(serial_++))) {}
  ~JitCacheDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  cpu_jit::CompileSettings settings() const {
    cpu_jit::CompileSettings s;
    s.compiler = cpu_jit::compile_settings().compiler;
    s.cache = CacheDirSettings{path_, std::uintmax_t{64} << 20};
    return s;
  }

 private:
  static inline int serial_ = 0;
  fs::path path_;
};

CpuIsa widest_lanes() {
  for (const CpuIsa isa : {CpuIsa::kAvx512, CpuIsa::kAvx2, CpuIsa::kSse2})
    if (cpu_supports(isa)) return isa;
  return CpuIsa::kScalar;
}

BatchResults run(const ModelInfo& model, Method method, CpuIsa isa,
                 Precision precision = Precision::kFp64) {
  const Batch batch = perturbed_batch(model, 0, 12);
  EnsembleSettings s = EnsembleSettings::for_model(model);
  s.method = method;
  s.precision = precision;
  if (precision == Precision::kFp32) s.rtol = s.atol = 1e-5;  // the stiff method's, in FP32
  s.t_end = 0.2;
  s.dt = 1e-3;
  s.samples = 5;
  s.threads = 2;
  s.cpu_isa = isa;
  BatchResults results;
  run_ensemble_cpu(batch, s, results, {0, 5, 11});
  return results;
}

// Position rows (scara, four_bar), velocity rows (swarm, pfaffian_particle), a rheonomic row
// (duffing) and a non-ideal force (friction_ring).
TEST(CpuJit, CompiledUserModelsGiveTheInterpretersResults) {
  const CpuIsa isa = widest_lanes();
  if (isa == CpuIsa::kScalar) GTEST_SKIP() << "this CPU has no lanes";
  const JitCacheDir cache;
  const ScopedEnv dir("UKES_JIT_CACHE", cache.path().c_str());
  for (const char* name :
       {"scara", "four_bar", "swarm", "pfaffian_particle", "duffing", "friction_ring"}) {
    SCOPED_TRACE(name);
    const auto model = example_model(name);
    const cpu_jit::CompiledModel lanes =
        cpu_jit::compile_model(model->user->program, model->user->bucket, {isa}, cache.settings());
    ASSERT_NE(lanes.entry, nullptr) << lanes.note;
    BatchResults interpreted, compiled;
    {
      const ScopedEnv off("UKES_CPU_JIT", "0");
      interpreted = run(*model, Method::kRk4, isa);
    }
    {
      const ScopedEnv on("UKES_CPU_JIT", "1");
      // The run's own choice: the library compiled above, loaded from the cache.
      ASSERT_NE(cpu_jit::compiled_entry(model->user->program, model->user->bucket, {isa}), nullptr);
      compiled = run(*model, Method::kRk4, isa);
    }
    expect_agreement(compiled, interpreted, 1e-12, "rk4");
    if (std::string(name) == "four_bar") {
      {
        const ScopedEnv off("UKES_CPU_JIT", "0");
        interpreted = run(*model, Method::kDopri5, isa);
      }
      const ScopedEnv on("UKES_CPU_JIT", "1");
      expect_agreement(run(*model, Method::kDopri5, isa), interpreted, 1e-10, "dopri5");
    }
  }
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

// The per-system path (FP32, controlled and stiff runs, UKES_CPU_ISA=scalar) compiled portably, as
// the interpreter is: the generated code computes the interpreter's operations in its order, so
// the numbers are the interpreter's to the bit, in both precisions and with the stiff method.
TEST(CpuJit, TheCompiledPerSystemPathGivesTheInterpretersBits) {
  const JitCacheDir cache;
  const ScopedEnv dir("UKES_JIT_CACHE", cache.path().c_str());
  for (const char* name : {"scara", "friction_ring"}) {
    SCOPED_TRACE(name);
    const auto model = example_model(name);
    for (const Precision precision : {Precision::kFp64, Precision::kFp32}) {
      const bool fp32 = precision == Precision::kFp32;
      for (const Method method : {Method::kRk4, Method::kRosenbrock}) {
        BatchResults interpreted;
        {
          const ScopedEnv off("UKES_CPU_JIT", "0");
          interpreted = run(*model, method, CpuIsa::kScalar, precision);
        }
        const ScopedEnv on("UKES_CPU_JIT", "1");
        ASSERT_NE(cpu_jit::compiled_entry(model->user->program, model->user->bucket,
                                          {CpuIsa::kScalar, fp32}),
                  nullptr);
        const BatchResults compiled = run(*model, method, CpuIsa::kScalar, precision);
        EXPECT_EQ(compiled.status, interpreted.status);
        EXPECT_EQ(compiled.steps, interpreted.steps);
        for (const auto& [field, a, b] :
             {std::tuple{"q", &compiled.q, &interpreted.q},
              {"qd", &compiled.qd, &interpreted.qd},
              {"residual_max", &compiled.residual_max, &interpreted.residual_max},
              {"force_max", &compiled.force_max, &interpreted.force_max},
              {"traj_q", &compiled.traj_q, &interpreted.traj_q},
              {"traj_residual", &compiled.traj_residual, &interpreted.traj_residual}})
          EXPECT_TRUE(same_bits(*a, *b)) << field;  // NaN samples too, were a system to fail
        for (int i = 0; i < compiled.count; ++i)
          EXPECT_EQ(compiled.status[i], static_cast<std::int32_t>(Status::kOk)) << i;
      }
    }
  }
}

// A generated model keeps the values it derives beside its parameters (four_bar: 9 of its own,
// 18 slots), and the batch holds its own alone. Here they end where a page without access begins:
// a read past them would end the test (model_shape, kernels/models/model_concept.hpp).
TEST(CpuJit, TheCompiledCodeReadsNoParameterPastTheModelsOwn) {
  const auto model = example_model("four_bar");
  ASSERT_EQ(model->user->bucket, 12);
  const int count = 512;
  const Batch batch = perturbed_batch(*model, 0, count);
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t bytes = batch.params.size() * sizeof(double);
  const std::size_t mapped = (bytes + page - 1) / page * page + page;
  void* region =
      ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(region, MAP_FAILED);
  char* guard = static_cast<char*>(region) + mapped - page;
  ASSERT_EQ(::mprotect(guard, page, PROT_NONE), 0);
  auto* params = reinterpret_cast<double*>(guard - bytes);
  std::copy(batch.params.begin(), batch.params.end(), params);
  BatchInputView in = batch.view();
  in.params = params;

  RunSettings<double> s;
  s.method = Method::kRk4;
  s.t_end = 0.01;
  s.dt = 1e-3;
  s.samples = 2;
  BatchResults results;
  results.allocate(batch, s.samples, {});
  const JitCacheDir cache;
  const ScopedEnv dir("UKES_JIT_CACHE", cache.path().c_str());
  const ScopedEnv on("UKES_CPU_JIT", "1");
  for (const CpuIsa isa : {widest_lanes(), CpuIsa::kScalar}) {
    ASSERT_NE(cpu_jit::compiled_entry(model->user->program, 12, {isa}), nullptr);
    run_batch_cpu<UserModel<12>, double>(in, s, results.view(), 2, isa);
    for (int i = 0; i < count; ++i)
      ASSERT_EQ(results.status[i], static_cast<std::int32_t>(Status::kOk)) << i;
  }
  ::munmap(region, mapped);
}

TEST(CpuJit, TheSecondCompileIsALoadAndAnUnloadableEntryIsCompiledAgain) {
  const CpuIsa isa = widest_lanes();
  if (isa == CpuIsa::kScalar) GTEST_SKIP() << "this CPU has no lanes";
  const JitCacheDir cache;
  const auto model = example_model("duffing");
  const auto& program = model->user->program;
  const cpu_jit::CompiledModel first =
      cpu_jit::compile_model(program, model->user->bucket, {isa}, cache.settings());
  ASSERT_NE(first.entry, nullptr) << first.note;
  EXPECT_FALSE(first.from_cache);
  std::vector<fs::path> entries;
  for (const auto& e : fs::directory_iterator(cache.path() / "cpu")) entries.push_back(e.path());
  ASSERT_EQ(entries.size(), 1u) << "one library, no scratch left behind";
  EXPECT_EQ(entries[0].extension(), ".so");

  const cpu_jit::CompiledModel second =
      cpu_jit::compile_model(program, model->user->bucket, {isa}, cache.settings());
  EXPECT_TRUE(second.from_cache);
  EXPECT_EQ(second.entry, first.entry);  // the same library, loaded once in this process

  // An entry that is not a library (a disk's corruption, another program's file) is replaced.
  const JitCacheDir other;
  fs::create_directories(other.path() / "cpu");
  std::ofstream(other.path() / "cpu" / entries[0].filename()) << "not a shared library";
  const cpu_jit::CompiledModel again =
      cpu_jit::compile_model(program, model->user->bucket, {isa}, other.settings());
  ASSERT_NE(again.entry, nullptr) << again.note;
  EXPECT_FALSE(again.from_cache);
}

TEST(CpuJit, ACacheThatCannotBeWrittenCostsOnlyItsKeeping) {
  const CpuIsa isa = widest_lanes();
  if (isa == CpuIsa::kScalar) GTEST_SKIP() << "this CPU has no lanes";
  const JitCacheDir cache;
  fs::create_directories(cache.path());
  std::ofstream(cache.path() / "file") << "not a directory";
  cpu_jit::CompileSettings settings = cache.settings();
  settings.cache->dir = cache.path() / "file" / "jit";
  const auto model = example_model("duffing");
  const cpu_jit::CompiledModel lanes =
      cpu_jit::compile_model(model->user->program, model->user->bucket, {isa}, settings);
  ASSERT_NE(lanes.entry, nullptr) << lanes.note;
  EXPECT_FALSE(lanes.from_cache);
}

TEST(CpuJit, WithoutACompilerTheInterpreterRuns) {
  const CpuIsa isa = widest_lanes();
  if (isa == CpuIsa::kScalar) GTEST_SKIP() << "this CPU has no lanes";
  const JitCacheDir cache;
  const auto model = example_model("pendulum_polar");
  cpu_jit::CompileSettings settings = cache.settings();
  settings.compiler = "/nonexistent/c++";
  const cpu_jit::CompiledModel none =
      cpu_jit::compile_model(model->user->program, model->user->bucket, {isa}, settings);
  EXPECT_EQ(none.entry, nullptr);
  EXPECT_NE(none.note.find("cannot run"), std::string::npos) << none.note;
  settings.compiler = "false";  // runs, and fails
  const cpu_jit::CompiledModel failed =
      cpu_jit::compile_model(model->user->program, model->user->bucket, {isa}, settings);
  EXPECT_EQ(failed.entry, nullptr);
  EXPECT_NE(failed.note.find("the compiler failed"), std::string::npos) << failed.note;

  // A run then takes the interpreter and completes.
  const ScopedEnv compiler("UKES_CPU_JIT_CXX", "/nonexistent/c++");
  const ScopedEnv on("UKES_CPU_JIT", "1");
  const ScopedEnv dir("UKES_JIT_CACHE", cache.path().c_str());
  const BatchResults results = run(*model, Method::kRk4, isa);
  for (int i = 0; i < results.count; ++i)
    EXPECT_EQ(results.status[i], static_cast<std::int32_t>(Status::kOk)) << i;
}

// A stand-in for the compiler, in the test's cache folder: it marks that it started, waits (10 s
// at most) until `gate` says go, and builds a library that holds the entry point alone, which is
// never run. Its last argument is the source, the one before "-o" the library.
fs::path stand_in_compiler(const fs::path& folder, const std::string& gate) {
  const fs::path script = folder / "stand-in-c++";
  fs::create_directories(folder);
  std::ofstream(script)
      << "#!/bin/sh\n"
      << "dir='" << folder.string() << "'\n"
      << "touch \"$dir/started.$$\"\n"
      << "out=''; previous=''\n"
      << "for a in \"$@\"; do [ \"$previous\" = -o ] && out=\"$a\"; previous=\"$a\"; done\n"
      << "i=0\n"
      << "until " << gate << "; do\n"
      << "  i=$((i + 1)); [ $i -gt 100 ] && { touch \"$dir/gave-up.$$\"; exit 3; }\n"
      << "  sleep 0.1\n"
      << "done\n"
      << "echo 'extern \"C\" void ukes_compiled_lanes() {}' > \"$out.cpp\"\n"
      << "exec \"$UKES_TEST_REAL_CXX\" -shared -fPIC -o \"$out\" \"$out.cpp\"\n";
  fs::permissions(script, fs::perms::owner_all);
  return script;
}

int files_named(const fs::path& folder, const std::string& prefix) {
  int count = 0;
  for (const auto& e : fs::directory_iterator(folder))
    count += e.path().filename().string().rfind(prefix, 0) == 0 ? 1 : 0;
  return count;
}

// Each compile runs on a thread of its own: two models' first runs compile side by side (the
// stand-in finishes only once both have started; one after the other, the first would give up),
// and a cancelled run stops waiting for its model's compile, which goes on for the next run.
TEST(CpuJit, ModelsCompileSideBySideAndACancelledRunStopsWaiting) {
  const CpuIsa isa = widest_lanes();
  if (isa == CpuIsa::kScalar) GTEST_SKIP() << "this CPU has no lanes";
  const JitCacheDir cache;
  const fs::path scripts = cache.path() / "scripts";
  const std::string real = cpu_jit::compile_settings().compiler;
  const ScopedEnv real_compiler("UKES_TEST_REAL_CXX", real.c_str());
  const ScopedEnv on("UKES_CPU_JIT", "1");
  const ScopedEnv dir("UKES_JIT_CACHE", cache.path().c_str());
  {
    const fs::path both = scripts / "both";
    const std::string gate = "[ $(ls \"$dir\" | grep -c '^started\\.') -ge 2 ]";
    const ScopedEnv compiler("UKES_CPU_JIT_CXX", stand_in_compiler(both, gate).c_str());
    void* entries[2] = {nullptr, nullptr};
    const char* names[2] = {"spiral", "projectile_polar"};
    std::vector<std::thread> runs;
    for (int k = 0; k < 2; ++k)
      runs.emplace_back([&, k] {
        const auto model = example_model(names[k]);
        entries[k] = cpu_jit::compiled_entry(model->user->program, model->user->bucket, {isa});
      });
    for (auto& run : runs) run.join();
    EXPECT_NE(entries[0], nullptr);
    EXPECT_NE(entries[1], nullptr);
    EXPECT_EQ(files_named(both, "gave-up"), 0);
  }
  {
    const fs::path held = scripts / "held";
    const ScopedEnv compiler("UKES_CPU_JIT_CXX",
                             stand_in_compiler(held, "[ -e \"$dir/go\" ]").c_str());
    const auto model = example_model("chaplygin_sleigh");
    CancelFlag cancel;
    cancel.request();
    EXPECT_EQ(
        cpu_jit::compiled_entry(model->user->program, model->user->bucket, {isa}, cancel.word()),
        nullptr);
    EXPECT_EQ(files_named(held, "gave-up"), 0) << "returned only when the compile ended";
    std::ofstream(held / "go") << "";
    EXPECT_NE(cpu_jit::compiled_entry(model->user->program, model->user->bucket, {isa}), nullptr)
        << "the compile went on for the next run";
    EXPECT_EQ(files_named(held, "started"), 1);
  }
}

}  // namespace
}  // namespace ukes
