// Which instruction set the CPU backend runs its lanes in (kernels/backend/cpu/simd/): chosen once
// per process, the best this CPU has of those built, or the one UKES_CPU_ISA names.
//
// The default build stays portable (no -march=native): each lane variant is its own shared library
// compiled for its instruction set, whose code runs only once this CPU is known to have it.
#pragma once

#include <string>

// The instruction sets, with UKES_CPU_ISA's spelling and the systems a lane type holds (doubles).
#define UKES_CPU_ISAS(X) \
  X(Scalar, "scalar", 1) \
  X(Sse2, "sse2", 2)     \
  X(Avx2, "avx2", 4)     \
  X(Avx512, "avx512", 8)

namespace ukes {

enum class CpuIsa : int {
#define UKES_CPU_ISA_ENUM(Name, spelling, width) k##Name,
  UKES_CPU_ISAS(UKES_CPU_ISA_ENUM)
#undef UKES_CPU_ISA_ENUM
};

const char* cpu_isa_name(CpuIsa isa);
int cpu_isa_lanes(CpuIsa isa);  // systems per lane type in FP64

// What the process runs, and why: the note says what UKES_CPU_ISA asked for when it could not be
// honoured (an unknown name, or an instruction set this CPU lacks); empty otherwise.
struct CpuIsaChoice {
  CpuIsa isa = CpuIsa::kScalar;
  std::string note;
};
// The choice on a CPU that has the instruction sets `supported` says, with UKES_CPU_ISA =
// `requested` (null: unset): the widest, unless the request names one the CPU has.
CpuIsaChoice choose_cpu_isa(const char* requested, bool (*supported)(CpuIsa));
bool cpu_supports(CpuIsa isa);  // whether this CPU has it (every variant is built)
// Chosen at the first call from the environment; the note, if any, is printed once to stderr.
CpuIsa cpu_isa();

}  // namespace ukes
