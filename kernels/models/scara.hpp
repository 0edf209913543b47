// SCARA robot (three revolute joints, one prismatic) whose tool follows a helix; the trajectory is
// imposed as position constraints with Baumgarte stabilization (SCARA paper).
//
// The mathematics is client/examples/models/scara.json, generated into code at build time
// (kernels/models/generated_functions.hpp); tests/models/scara_test.cpp asserts its must-hold
// facts (docs/MODELS.md) against formulations of its own.
#pragma once

#include "kernels/models/generated/scara_segments.hpp"
#include "kernels/models/generated_functions.hpp"

namespace ukes::models {

struct Scara : GeneratedFunctions<generated::ScaraSegments> {
  static constexpr const char* kName = "scara";
  static constexpr const char* kSource =
      "SCARA paper: SCARA robot following a helical trajectory, Baumgarte-stabilized UK equation";
  static constexpr ParamSpec kParams[] = {
      {"m1", 20.0},    {"m2", 15.0},  {"m3", 15.0},
      {"m4", 0.5},     {"l0", 0.0},   {"l1", 0.2},
      {"l2", 0.25},    {"r1", 0.1},   {"r2", 0.125},
      {"Iz1", 0.27},   {"Iz2", 0.31}, {"Iz3", 0.02},
      {"Iz4", 0.0001}, {"g", 9.81},   {"xc", 0.0},
      {"yc", 0.35},    {"R", 0.05},   {"Omega", 1.2566370614359172},
      {"vz", 0.02},    {"psi0", 0.0}};
  static constexpr const char* kCoordinates[] = {"q1", "q2", "q3", "q4"};
  static constexpr double kTEnd = 10.0;
  static constexpr Gains kGains = {30.0, 225.0};  // critical damping: (s + 15)^2

  static_assert(sizeof(kParams) / sizeof(ParamSpec) == generated::ScaraSegments::kShape.params &&
                    sizeof(kCoordinates) / sizeof(const char*) == kN,
                "client/examples/models/scara.json is the model of this header");
};

}  // namespace ukes::models
