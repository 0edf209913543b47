// Pendulum whose support oscillates horizontally, x_s(t) = Xs sin(Ws t) (thesis abstract): a
// rheonomic position constraint on the bob's Cartesian coordinates.
//
// The mathematics is client/examples/models/moving_support_pendulum.json, generated into code at
// build time (kernels/models/generated_functions.hpp);
// tests/models/moving_support_pendulum_test.cpp asserts its must-hold facts (docs/MODELS.md)
// against formulations of its own.
#pragma once

#include "kernels/models/generated/moving_support_pendulum_segments.hpp"
#include "kernels/models/generated_functions.hpp"

namespace ukes::models {

struct MovingSupportPendulum : GeneratedFunctions<generated::MovingSupportPendulumSegments> {
  static constexpr const char* kName = "moving_support_pendulum";
  static constexpr const char* kSource =
      "UK thesis abstract: pendulum whose support oscillates (rheonomic constraint)";
  static constexpr ParamSpec kParams[] = {
      {"m", 1.0}, {"L", 1.0}, {"g", 9.81}, {"Xs", 0.1}, {"Ws", 5.0}};
  static constexpr const char* kCoordinates[] = {"x", "y"};
  static constexpr double kTEnd = 10.0;
  static constexpr Gains kGains = {};

  static_assert(sizeof(kParams) / sizeof(ParamSpec) ==
                        generated::MovingSupportPendulumSegments::kShape.params &&
                    sizeof(kCoordinates) / sizeof(const char*) == kN,
                "client/examples/models/moving_support_pendulum.json is the model of this header");
};

}  // namespace ukes::models
