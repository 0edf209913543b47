// What the Thrust ensemble statistics read: the final per-system results, in the memory space of
// the execution policy that runs them. Kept apart from the algorithm so that code which only fills
// it in does not pull in Thrust.
#pragma once

#include <cstdint>

#include "kernels/ensemble/system_record.hpp"

namespace ukes {

// The arrays of BatchOutputView that the statistics read, for `count` systems: component k of
// system i at [k * count + i].
struct ThrustStatisticsInput {
  int count = 0;
  int n = 0;                             // coordinates
  int residual_slots = 0;                // rows of residual_max
  const std::int32_t* status = nullptr;  // [count], a Status
  const double* q = nullptr;             // [n][count]
  const double* qd = nullptr;            // [n][count]
  const double* residual_max = nullptr;  // [residual_slots][count]
  // [count] each: the scalars the statistics summarize (system_record.hpp).
#define UKES_STATISTICS_INPUT(name, encoding) const Storage<Encoding::encoding>* name = nullptr;
  UKES_SUMMARIZED_SCALARS(UKES_STATISTICS_INPUT)
#undef UKES_STATISTICS_INPUT
};

}  // namespace ukes
