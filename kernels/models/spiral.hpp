// Particle on a logarithmic spiral, tracked along a prescribed angle schedule (UK review,
// sec. 8.1).
//
// The mathematics is client/examples/models/spiral.json, generated into code at build time
// (kernels/models/generated_functions.hpp); tests/models/spiral_test.cpp asserts its must-hold
// facts (docs/MODELS.md) against formulations of its own.
#pragma once

#include "kernels/models/generated/spiral_segments.hpp"
#include "kernels/models/generated_functions.hpp"

namespace ukes::models {

struct Spiral : GeneratedFunctions<generated::SpiralSegments> {
  static constexpr const char* kName = "spiral";
  static constexpr const char* kSource =
      "UK review sec. 8.1: particle on a logarithmic spiral r = exp(k theta), theta = theta0 - "
      "omega t";
  static constexpr ParamSpec kParams[] = {
      {"g", 9.81}, {"k", 0.1}, {"omega", 1.0}, {"theta0", 30.0}};
  static constexpr const char* kCoordinates[] = {"r", "theta"};
  static constexpr double kTEnd = 20.0;
  static constexpr Gains kGains = {};

  static_assert(sizeof(kParams) / sizeof(ParamSpec) == generated::SpiralSegments::kShape.params &&
                    sizeof(kCoordinates) / sizeof(const char*) == kN,
                "client/examples/models/spiral.json is the model of this header");
};

}  // namespace ukes::models
