// Two-link flexible-joint manipulator under a servo constraint (UK review, sec. 8.3).
//
// The mathematics is client/examples/models/flexible_joint.json, generated into code at build time
// (kernels/models/generated_functions.hpp); tests/models/flexible_joint_test.cpp asserts its
// must-hold facts (docs/MODELS.md) against formulations of its own.
#pragma once

#include "kernels/models/generated/flexible_joint_segments.hpp"
#include "kernels/models/generated_functions.hpp"

namespace ukes::models {

struct FlexibleJoint : GeneratedFunctions<generated::FlexibleJointSegments> {
  static constexpr const char* kName = "flexible_joint";
  static constexpr const char* kSource =
      "UK review sec. 8.3: two-link flexible-joint manipulator under a servo constraint";
  static constexpr ParamSpec kParams[] = {
      {"m1", 1.0}, {"m2", 1.0}, {"l1", 1.0}, {"lc1", 0.5}, {"lc2", 0.5}, {"I1", 1.0}, {"I2", 1.0},
      {"J1", 1.0}, {"J2", 1.0}, {"K1", 1.0}, {"K2", 1.0},  {"g", 9.81},  {"u1", 0.0}, {"u2", 0.0}};
  // Link angles (from the downward vertical), then motor angles.
  static constexpr const char* kCoordinates[] = {"th1", "th2", "m1ang", "m2ang"};
  static constexpr double kTEnd = 10.0;
  static constexpr Gains kGains = {2.0, 0.0};

  static_assert(sizeof(kParams) / sizeof(ParamSpec) ==
                        generated::FlexibleJointSegments::kShape.params &&
                    sizeof(kCoordinates) / sizeof(const char*) == kN,
                "client/examples/models/flexible_joint.json is the model of this header");
};

}  // namespace ukes::models
