// Particle under gravity held on an elliptical path x^2/ax^2 + y^2/by^2 = 1 (thesis abstract).
//
// The mathematics is client/examples/models/ellipse_particle.json, generated into code at build
// time (kernels/models/generated_functions.hpp): mass m on both coordinates, gravity -m g on y,
// the position row phi = x^2 / ax^2 + y^2 / by^2 - 1, and the initial state (ax, 0) moving at
// (0, 1). tests/models/ellipse_particle_test.cpp checks them against a hand-derived constraint
// form and physics.
#pragma once

#include "kernels/models/generated/ellipse_particle_segments.hpp"
#include "kernels/models/generated_functions.hpp"

namespace ukes::models {

struct EllipseParticle : GeneratedFunctions<generated::EllipseParticleSegments> {
  static constexpr const char* kName = "ellipse_particle";
  static constexpr const char* kSource = "UK thesis abstract: particle held on an elliptical path";
  static constexpr ParamSpec kParams[] = {{"m", 1.0}, {"ax", 2.0}, {"by", 1.0}, {"g", 9.81}};
  static constexpr const char* kCoordinates[] = {"x", "y"};
  static constexpr double kTEnd = 10.0;
  static constexpr Gains kGains = {};

  static_assert(sizeof(kParams) / sizeof(ParamSpec) ==
                        generated::EllipseParticleSegments::kShape.params &&
                    sizeof(kCoordinates) / sizeof(const char*) == kN,
                "client/examples/models/ellipse_particle.json is the model of this header");
};

}  // namespace ukes::models
