// Grounded four-bar linkage in absolute coordinates (constrained Lagrangian notes).
//
// Three moving uniform bars; bar i has centre (xi, yi), angle thi, ends
// E_i^-+ = centre -+ (Li/2)(cos thi, sin thi). Ground pivots O1 = (0, 0), O4 = (d, 0).
// Eight position rows (E_1^- = O1, E_1^+ = E_2^-, E_2^+ = E_3^-, E_3^+ = O4, x and y each) leave
// one degree of freedom.
//
// The mathematics is client/examples/models/four_bar.json, generated into code at build time
// (kernels/models/generated_functions.hpp): the bars' masses and moments of inertia m L^2 / 12,
// gravity and the crank torque tau, the eight rows, and the initial state th1 = pi/3, th1d = 2 with
// the coupler-rocker joint on the branch with the larger y and velocities from the loop closure.
// tests/models/four_bar_test.cpp checks them against a hand-derived constraint form, energy and
// a KKT solve.
#pragma once

#include "kernels/models/generated/four_bar_segments.hpp"
#include "kernels/models/generated_functions.hpp"

namespace ukes::models {

struct FourBar : GeneratedFunctions<generated::FourBarSegments> {
  static constexpr const char* kName = "four_bar";
  static constexpr const char* kSource =
      "Constrained Lagrangian notes: grounded four-bar linkage in absolute coordinates";
  static constexpr ParamSpec kParams[] = {{"L1", 1.0}, {"L2", 3.0}, {"L3", 2.0},
                                          {"d", 2.5},  {"m1", 1.0}, {"m2", 3.0},
                                          {"m3", 2.0}, {"g", 9.81}, {"tau", 0.0}};
  static constexpr const char* kCoordinates[] = {"x1",  "y1", "th1", "x2", "y2",
                                                 "th2", "x3", "y3",  "th3"};
  static constexpr double kTEnd = 10.0;
  static constexpr Gains kGains = {};

  static_assert(sizeof(kParams) / sizeof(ParamSpec) == generated::FourBarSegments::kShape.params &&
                    sizeof(kCoordinates) / sizeof(const char*) == kN,
                "client/examples/models/four_bar.json is the model of this header");
};

}  // namespace ukes::models
