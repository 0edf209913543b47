// Bob held by two rods, one from the origin, one from (L1, 0, L2): out-of-plane motion
// (UK thesis, sec. 3.4).
//
// The mathematics is client/examples/models/two_rod_pendulum.json, generated into code at build
// time (kernels/models/generated_functions.hpp); tests/models/two_rod_pendulum_test.cpp asserts its
// must-hold facts (docs/MODELS.md) against formulations of its own.
#pragma once

#include "kernels/models/generated/two_rod_pendulum_segments.hpp"
#include "kernels/models/generated_functions.hpp"

namespace ukes::models {

struct TwoRodPendulum : GeneratedFunctions<generated::TwoRodPendulumSegments> {
  static constexpr const char* kName = "two_rod_pendulum";
  static constexpr const char* kSource =
      "UK thesis sec. 3.4: bob held by two rods, out-of-plane motion";
  static constexpr ParamSpec kParams[] = {{"L1", 1.0}, {"L2", 1.0}, {"g", 10.0}, {"m", 1.0}};
  static constexpr const char* kCoordinates[] = {"x", "y", "z"};
  static constexpr double kTEnd = 3.0;
  static constexpr Gains kGains = {};

  static_assert(sizeof(kParams) / sizeof(ParamSpec) ==
                        generated::TwoRodPendulumSegments::kShape.params &&
                    sizeof(kCoordinates) / sizeof(const char*) == kN,
                "client/examples/models/two_rod_pendulum.json is the model of this header");
};

}  // namespace ukes::models
