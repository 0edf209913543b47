// Unconstrained particle in polar coordinates (UK review, example 1): a system with zero
// constraint rows, where the UK equation reduces to M qdd = Q.
//
// The mathematics is client/examples/models/projectile_polar.json, generated into code at build
// time (kernels/models/generated_functions.hpp); tests/models/projectile_polar_test.cpp asserts its
// must-hold facts (docs/MODELS.md) against formulations of its own.
#pragma once

#include "kernels/models/generated/projectile_polar_segments.hpp"
#include "kernels/models/generated_functions.hpp"

namespace ukes::models {

struct ProjectilePolar : GeneratedFunctions<generated::ProjectilePolarSegments> {
  static constexpr const char* kName = "projectile_polar";
  static constexpr const char* kSource =
      "UK review, example 1: unconstrained particle in polar coordinates";
  static constexpr ParamSpec kParams[] = {{"g", 9.81}};
  static constexpr const char* kCoordinates[] = {"r", "th"};
  static constexpr double kTEnd = 0.5;
  static constexpr Gains kGains = {};

  static_assert(sizeof(kParams) / sizeof(ParamSpec) ==
                        generated::ProjectilePolarSegments::kShape.params &&
                    sizeof(kCoordinates) / sizeof(const char*) == kN,
                "client/examples/models/projectile_polar.json is the model of this header");
};

}  // namespace ukes::models
