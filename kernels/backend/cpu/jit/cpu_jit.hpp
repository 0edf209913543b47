// A user model's CPU code compiled at run time for that one model, so that it runs at a built-in
// model's speed instead of through the interpreter (docs/CPU_LANES.md, "User models").
//
// The interpreter (kernels/expr/program.hpp) runs a model op by op in its bucket's sizes, its
// values in a register file in memory. The GPU compiles each user model with NVRTC instead
// (kernels/backend/cuda/jit/); the CPU does the same with the C++ compiler that built ukes: the
// code generator's segments (kernels/backend/cuda/jit/codegen.hpp) in the model's own sizes, and
// around them either the lanes of kernels/backend/cpu/simd/lane_batch_impl.hpp, compiled for the
// run's instruction set with the lane libraries' options, or the per-system path of
// kernels/backend/cpu/cpu_backend_impl.hpp (FP32, controlled and stiff runs, UKES_CPU_ISA=scalar),
// compiled portably as the rest of the build is, so that it gives the interpreter's numbers to the
// bit. The library is loaded and kept for the process. The translation unit is built from kernels/
// headers embedded in the binary at build time, so it needs no source tree, and holds no user
// text: a program is numbered registers and constants.
//
// A compiled model is kept in the cache directory of kernels/core/cache_dir.hpp, folder cpu/,
// named by the SHA-256 of all it depends on (the translation unit, the embedded headers, the
// compiler and its options) and renamed into place whole, so that every process after the first
// (a server's restart, each MPI rank) loads it in milliseconds. Without a compiler, or with
// UKES_CPU_JIT=0, the interpreter runs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

#include "kernels/backend/cpu/cpu_isa.hpp"
#include "kernels/core/cache_dir.hpp"
#include "kernels/ensemble/run_settings.hpp"
#include "kernels/models/user/user_model.hpp"

namespace ukes::cpu_jit {

// A compiled model's run of a batch: its lanes (run_batch_lanes, kernels/backend/cpu/
// cpu_backend.hpp) or its per-system path (run_systems_cpu, cpu_backend_impl.hpp).
template <class T>
using CompiledRun = void (*)(const BatchInputView&, const RunSettings<T>&, const BatchOutputView&,
                             int threads);

struct CompileSettings {
  std::string compiler;                   // $UKES_CPU_JIT_CXX, else the compiler of this build
  std::optional<CacheDirSettings> cache;  // none: compiled for this process alone
};
CompileSettings compile_settings();  // from the environment

// What a library holds: the lanes of instruction set `isa` (FP64), or with isa kScalar the
// per-system path in FP32 or FP64.
struct CompileTarget {
  CpuIsa isa = CpuIsa::kScalar;
  bool fp32 = false;
};

struct CompiledModel {
  void* entry = nullptr;    // a CompiledRun<T>; null when it could not be compiled (`note`)
  bool from_cache = false;  // loaded from the cache directory, not compiled
  double seconds = 0;       // the compile, or the load
  std::string note;         // at most a few hundred characters
};

// `program` (a model of interpreted bucket `bucket`) compiled for `target`, or loaded from the
// cache, now: every call does it again (tests; runs go through compiled_run).
CompiledModel compile_model(const UserModelProgram& program, int bucket, CompileTarget target,
                            const CompileSettings& settings);

// The compiled code a run of a user model takes, compiled or loaded once per process, model and
// target; null (the interpreter runs) when UKES_CPU_JIT is 0 or off, or when it could not be
// compiled, which is said once per model and target on stderr. The compile runs on a thread of
// its own: runs of other models go on meanwhile, and a run whose `cancel` word (kernels/core/
// cancel.hpp) is raised while it waits gets null at once.
void* compiled_entry(const UserModelProgram& program, int bucket, CompileTarget target,
                     const std::int32_t* cancel = nullptr);
template <class T>
CompiledRun<T> compiled_run(const UserModelProgram& program, int bucket, CpuIsa isa,
                            const std::int32_t* cancel) {
  return reinterpret_cast<CompiledRun<T>>(
      compiled_entry(program, bucket, {isa, std::is_same_v<T, float>}, cancel));
}

// The bucket of an interpreted user model, 0 for any other model.
template <class Model>
inline constexpr int kInterpretedBucket = 0;
template <int kCapacity>
inline constexpr int kInterpretedBucket<UserModel<kCapacity, InterpretedSegments>> = kCapacity;

}  // namespace ukes::cpu_jit
