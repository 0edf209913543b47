// Planar pendulum in polar coordinates, the rod as a constraint r = L (constrained Lagrangian
// notes).
//
// The mathematics is client/examples/models/pendulum_polar.json, generated into code at build time
// (kernels/models/generated_functions.hpp); tests/models/pendulum_polar_test.cpp asserts its
// must-hold facts (docs/MODELS.md) against formulations of its own.
#pragma once

#include "kernels/models/generated/pendulum_polar_segments.hpp"
#include "kernels/models/generated_functions.hpp"

namespace ukes::models {

struct PendulumPolar : GeneratedFunctions<generated::PendulumPolarSegments> {
  static constexpr const char* kName = "pendulum_polar";
  static constexpr const char* kSource =
      "Constrained Lagrangian notes: planar pendulum in polar coordinates";
  static constexpr ParamSpec kParams[] = {{"m", 1.0}, {"L", 1.0}, {"g", 9.81}, {"fx", 0.0}};
  // th from the downward vertical; fx is a horizontal force on the bob.
  static constexpr const char* kCoordinates[] = {"r", "th"};
  static constexpr double kTEnd = 10.0;
  static constexpr Gains kGains = {};

  static_assert(sizeof(kParams) / sizeof(ParamSpec) ==
                        generated::PendulumPolarSegments::kShape.params &&
                    sizeof(kCoordinates) / sizeof(const char*) == kN,
                "client/examples/models/pendulum_polar.json is the model of this header");
};

}  // namespace ukes::models
