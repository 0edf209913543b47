// Crank, connecting rod and slider, in the redundant coordinates (th, ph, x)
// (constrained Lagrangian notes).
//
// The mathematics is client/examples/models/slider_crank.json, generated into code at build time
// (kernels/models/generated_functions.hpp); tests/models/slider_crank_test.cpp asserts its
// must-hold facts (docs/MODELS.md) against formulations of its own.
#pragma once

#include "kernels/models/generated/slider_crank_segments.hpp"
#include "kernels/models/generated_functions.hpp"

namespace ukes::models {

struct SliderCrank : GeneratedFunctions<generated::SliderCrankSegments> {
  static constexpr const char* kName = "slider_crank";
  static constexpr const char* kSource =
      "Constrained Lagrangian notes: slider-crank (crank, connecting rod, slider)";
  static constexpr ParamSpec kParams[] = {{"a", 0.1},  {"l", 0.3},  {"m1", 1.0},  {"m2", 1.0},
                                          {"m3", 0.5}, {"g", 9.81}, {"tau", 0.0}, {"Fx", 0.0}};
  // Crank angle from +x; rod angle, the rod running from the crank tip P = a (cos th, sin th) to
  // the slider S = P + l (cos ph, -sin ph) = (x, 0). Uniform rods, gravity along -y.
  static constexpr const char* kCoordinates[] = {"th", "ph", "x"};
  static constexpr double kTEnd = 2.0;
  static constexpr Gains kGains = {};

  static_assert(sizeof(kParams) / sizeof(ParamSpec) ==
                        generated::SliderCrankSegments::kShape.params &&
                    sizeof(kCoordinates) / sizeof(const char*) == kN,
                "client/examples/models/slider_crank.json is the model of this header");
};

}  // namespace ukes::models
