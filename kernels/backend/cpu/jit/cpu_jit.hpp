// A user model's CPU lanes compiled at run time for that one model, so that it runs at a built-in
// model's speed instead of through the interpreter (docs/CPU_LANES.md, "User models").
//
// The interpreter (kernels/expr/program.hpp) runs a model op by op in its bucket's sizes, its
// values in a register file in memory. The GPU compiles each user model with NVRTC instead
// (kernels/backend/cuda/jit/); the CPU does the same with the C++ compiler that built ukes: the
// code generator's segments (kernels/backend/cuda/jit/codegen.hpp) in the model's own sizes, the
// lanes of kernels/backend/cpu/simd/lane_batch_impl.hpp around them, compiled for the run's
// instruction set with the lane libraries' options into a shared library that is loaded and run.
// The translation unit is built from kernels/ headers embedded in the binary at build time, so it
// needs no source tree, and holds no user text: a program is numbered registers and constants.
//
// A compiled model is kept in the cache directory of kernels/core/cache_dir.hpp, folder cpu/,
// named by the SHA-256 of all it depends on (the translation unit, the embedded headers, the
// compiler and its options) and renamed into place whole, so that every process after the first
// (a server's restart, each MPI rank) loads it in milliseconds. Without a compiler, or with
// UKES_CPU_JIT=0, the interpreter runs, as it does for FP32, controlled and stiff runs.
#pragma once

#include <optional>
#include <string>

#include "kernels/backend/cpu/cpu_isa.hpp"
#include "kernels/core/cache_dir.hpp"
#include "kernels/ensemble/run_settings.hpp"
#include "kernels/models/user/user_model.hpp"

namespace ukes::cpu_jit {

// A compiled model's lanes: run_batch_lanes for it (kernels/backend/cpu/cpu_backend.hpp).
using LaneRun = void (*)(const BatchInputView&, const RunSettings<double>&, const BatchOutputView&,
                         int threads);

struct CompileSettings {
  std::string compiler;                   // $UKES_CPU_JIT_CXX, else the compiler of this build
  std::optional<CacheDirSettings> cache;  // none: compiled for this process alone
};
CompileSettings compile_settings();  // from the environment

struct CompiledLanes {
  LaneRun run = nullptr;    // null when it could not be compiled; `note` says why
  bool from_cache = false;  // loaded from the cache directory, not compiled
  double seconds = 0;       // the compile, or the load
  std::string note;         // at most a few hundred characters
};

// The lanes of `program` (a model of interpreted bucket `bucket`) for `isa`, compiled or loaded
// from the cache now: every call does it again (tests; runs go through lanes_for).
CompiledLanes compile_lanes(const UserModelProgram& program, int bucket, CpuIsa isa,
                            const CompileSettings& settings);

// What a run of a user model takes on the lanes of `isa`: its compiled lanes, compiled or loaded
// once per process and model; null (the interpreter runs) when UKES_CPU_JIT is 0 or off, or when
// they could not be compiled, which is said once per model on stderr.
LaneRun lanes_for(const UserModelProgram& program, int bucket, CpuIsa isa);

// The bucket of an interpreted user model, 0 for any other model.
template <class Model>
inline constexpr int kInterpretedBucket = 0;
template <int kCapacity>
inline constexpr int kInterpretedBucket<UserModel<kCapacity, InterpretedSegments>> = kCapacity;

}  // namespace ukes::cpu_jit
