#include "kernels/backend/cpu/cpu_isa.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace ukes {

namespace {

constexpr CpuIsa kIsas[] = {
#define UKES_CPU_ISA_ITEM(Name, spelling, width) CpuIsa::k##Name,
    UKES_CPU_ISAS(UKES_CPU_ISA_ITEM)
#undef UKES_CPU_ISA_ITEM
};

}  // namespace

const char* cpu_isa_name(CpuIsa isa) {
  switch (isa) {
#define UKES_CPU_ISA_NAME(Name, spelling, width) \
  case CpuIsa::k##Name:                          \
    return spelling;
    UKES_CPU_ISAS(UKES_CPU_ISA_NAME)
#undef UKES_CPU_ISA_NAME
  }
  return "?";
}

int cpu_isa_lanes(CpuIsa isa) {
  switch (isa) {
#define UKES_CPU_ISA_WIDTH(Name, spelling, width) \
  case CpuIsa::k##Name:                           \
    return width;
    UKES_CPU_ISAS(UKES_CPU_ISA_WIDTH)
#undef UKES_CPU_ISA_WIDTH
  }
  return 1;
}

bool cpu_supports(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kScalar:
      return true;
    case CpuIsa::kSse2:
      return __builtin_cpu_supports("sse2");
    case CpuIsa::kAvx2:
      // The variant is built with FMA: every AVX2 CPU but a few early VIA ones has it.
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case CpuIsa::kAvx512:
      return __builtin_cpu_supports("avx512f");
  }
  return false;
}

CpuIsaChoice choose_cpu_isa(const char* requested, bool (*supported)(CpuIsa)) {
  CpuIsaChoice choice;
  for (const CpuIsa isa : kIsas)
    if (supported(isa)) choice.isa = isa;  // the list runs from the narrowest to the widest
  if (requested == nullptr || *requested == '\0') return choice;
  for (const CpuIsa isa : kIsas) {
    if (std::strcmp(requested, cpu_isa_name(isa)) != 0) continue;
    if (supported(isa)) {
      choice.isa = isa;
    } else {
      choice.note = std::string("UKES_CPU_ISA: this CPU has no ") + cpu_isa_name(isa) +
                    "; running " + cpu_isa_name(choice.isa);
    }
    return choice;
  }
  std::string names;
  for (const CpuIsa isa : kIsas)
    names += std::string(names.empty() ? "" : ", ") + cpu_isa_name(isa);
  const std::size_t shown = std::min<std::size_t>(std::strlen(requested), 16);
  choice.note = "UKES_CPU_ISA: '" + std::string(requested, shown) +
                (shown < std::strlen(requested) ? "...' " : "' ") + "is none of " + names +
                "; running " + cpu_isa_name(choice.isa);
  return choice;
}

CpuIsa cpu_isa() {
  static const CpuIsa chosen = [] {
    const CpuIsaChoice choice = choose_cpu_isa(std::getenv("UKES_CPU_ISA"), cpu_supports);
    if (!choice.note.empty()) std::fprintf(stderr, "ukes: %s\n", choice.note.c_str());
    return choice.isa;
  }();
  return chosen;
}

}  // namespace ukes
