// Particle under gravity with a nonholonomic Pfaffian constraint xd + 2 z yd + zd = 0
// (UK review, example 4).
//
// The mathematics is client/examples/models/pfaffian_particle.json, generated into code at build
// time (kernels/models/generated_functions.hpp); tests/models/pfaffian_particle_test.cpp asserts
// its must-hold facts (docs/MODELS.md) against formulations of its own.
#pragma once

#include "kernels/models/generated/pfaffian_particle_segments.hpp"
#include "kernels/models/generated_functions.hpp"

namespace ukes::models {

struct PfaffianParticle : GeneratedFunctions<generated::PfaffianParticleSegments> {
  static constexpr const char* kName = "pfaffian_particle";
  static constexpr const char* kSource =
      "UK review, example 4: particle with a nonholonomic Pfaffian constraint";
  static constexpr ParamSpec kParams[] = {{"m", 1.0}, {"g", 9.81}};
  static constexpr const char* kCoordinates[] = {"x", "y", "z"};
  static constexpr double kTEnd = 5.0;
  static constexpr Gains kGains = {};

  static_assert(sizeof(kParams) / sizeof(ParamSpec) ==
                        generated::PfaffianParticleSegments::kShape.params &&
                    sizeof(kCoordinates) / sizeof(const char*) == kN,
                "client/examples/models/pfaffian_particle.json is the model of this header");
};

}  // namespace ukes::models
