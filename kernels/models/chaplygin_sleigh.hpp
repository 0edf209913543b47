// Chaplygin sleigh: a rigid body on a knife edge that cannot slip sideways (constrained Lagrangian
// notes). q = (x, y, th): centre of mass and heading; the blade sits at P = (x, y) - a (cos th, sin
// th).
//
// The mathematics is client/examples/models/chaplygin_sleigh.json, generated into code at build
// time (kernels/models/generated_functions.hpp); tests/models/chaplygin_sleigh_test.cpp asserts its
// must-hold facts (docs/MODELS.md) against formulations of its own.
#pragma once

#include "kernels/models/generated/chaplygin_sleigh_segments.hpp"
#include "kernels/models/generated_functions.hpp"

namespace ukes::models {

struct ChaplyginSleigh : GeneratedFunctions<generated::ChaplyginSleighSegments> {
  static constexpr const char* kName = "chaplygin_sleigh";
  static constexpr const char* kSource =
      "Constrained Lagrangian notes: nonholonomic knife edge (Chaplygin sleigh)";
  static constexpr ParamSpec kParams[] = {{"m", 1.0}, {"I", 0.1}, {"a", 0.5}};
  static constexpr const char* kCoordinates[] = {"x", "y", "th"};
  static constexpr double kTEnd = 20.0;
  static constexpr Gains kGains = {};

  static_assert(sizeof(kParams) / sizeof(ParamSpec) ==
                        generated::ChaplyginSleighSegments::kShape.params &&
                    sizeof(kCoordinates) / sizeof(const char*) == kN,
                "client/examples/models/chaplygin_sleigh.json is the model of this header");
};

}  // namespace ukes::models
