// Bead on a vertical ring with Coulomb friction: a non-ideal constraint (seed "On constrained
// motion"). The friction force C = -mu |N| v / sqrt(|v|^2 + eps^2) depends on the normal force N,
// the ideal constraint force the UK equation supplies; eps regularizes the sign of v.
//
// The mathematics is client/examples/models/friction_ring.json, generated into code at build time
// (kernels/models/generated_functions.hpp); tests/models/friction_ring_test.cpp asserts its
// must-hold facts (docs/MODELS.md) against formulations of its own.
#pragma once

#include "kernels/models/generated/friction_ring_segments.hpp"
#include "kernels/models/generated_functions.hpp"

namespace ukes::models {

struct FrictionRing : GeneratedFunctions<generated::FrictionRingSegments> {
  static constexpr const char* kName = "friction_ring";
  static constexpr const char* kSource =
      "Seed \"On constrained motion\": bead on a vertical ring with Coulomb friction";
  static constexpr ParamSpec kParams[] = {
      {"m", 1.0}, {"R", 1.0}, {"g", 9.81}, {"mu", 0.2}, {"eps", 1e-3}};
  static constexpr const char* kCoordinates[] = {"x", "y"};
  static constexpr double kTEnd = 10.0;
  static constexpr Gains kGains = {};

  static_assert(sizeof(kParams) / sizeof(ParamSpec) ==
                        generated::FrictionRingSegments::kShape.params &&
                    sizeof(kCoordinates) / sizeof(const char*) == kN,
                "client/examples/models/friction_ring.json is the model of this header");
};

}  // namespace ukes::models
