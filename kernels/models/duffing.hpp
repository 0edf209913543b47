// Coupled Duffing oscillators with a rheonomic constraint (thesis, sec. 3.3).
//
// The mathematics is client/examples/models/duffing.json, generated into code at build time
// (kernels/models/generated_functions.hpp); tests/models/duffing_test.cpp asserts its must-hold
// facts (docs/MODELS.md) against formulations of its own.
#pragma once

#include "kernels/models/generated/duffing_segments.hpp"
#include "kernels/models/generated_functions.hpp"

namespace ukes::models {

struct Duffing : GeneratedFunctions<generated::DuffingSegments> {
  static constexpr const char* kName = "duffing";
  static constexpr const char* kSource =
      "UK thesis sec. 3.3: coupled Duffing oscillators, rheonomic constraint";
  static constexpr ParamSpec kParams[] = {
      {"m1", 2.0},   {"m2", 1.0}, {"k1", 10.0}, {"k2", 12.0}, {"k1nl", 1.0},
      {"k2nl", 2.0}, {"c1", 0.1}, {"c2", 0.15}, {"A0", 1.0},  {"omega", 6.283185307179586},
      {"alpha", 1.0}};
  static constexpr const char* kCoordinates[] = {"x1", "x2"};
  static constexpr double kTEnd = 5.0;
  static constexpr Gains kGains = {};

  static_assert(sizeof(kParams) / sizeof(ParamSpec) == generated::DuffingSegments::kShape.params &&
                    sizeof(kCoordinates) / sizeof(const char*) == kN,
                "client/examples/models/duffing.json is the model of this header");
};

}  // namespace ukes::models
