// Five mobile robots whose velocities obey an interaction (servo) constraint (UK review, sec. 8.2).
//
// The mathematics is client/examples/models/swarm.json, generated into code at build time
// (kernels/models/generated_functions.hpp): the velocity rows
//     psi_i = qd_i + sum_{j != i} (q_i - q_j) (1 - a / |q_i - q_j|),
// the gradient of G_ij = -a |q_i - q_j| + |q_i - q_j|^2 / 2 + 50 with respect to q_i, a diagonal
// mass matrix (mass), no applied force, and the replacement of the seed's Table 1 as initial
// state: at rest, deliberately off the velocity rows. tests/models/swarm_test.cpp checks them
// against an independent formulation.
#pragma once

#include "kernels/models/generated/swarm_segments.hpp"
#include "kernels/models/generated_functions.hpp"

namespace ukes::models {

struct Swarm : GeneratedFunctions<generated::SwarmSegments> {
  static constexpr const char* kName = "swarm";
  static constexpr const char* kSource =
      "UK review sec. 8.2: five mobile robots with an interaction constraint";
  static constexpr int kRobots = 5;  // the structural parameter N of this build
  static constexpr ParamSpec kParams[] = {{"N", 5.0, true}, {"mass", 2.0}, {"a", 0.5}};
  static constexpr const char* kCoordinates[] = {"x1", "y1", "x2", "y2", "x3",
                                                 "y3", "x4", "y4", "x5", "y5"};
  static constexpr double kTEnd = 20.0;
  static constexpr Gains kGains = {5.0, 0.0};

  static_assert(sizeof(kParams) / sizeof(ParamSpec) == generated::SwarmSegments::kShape.params &&
                    sizeof(kCoordinates) / sizeof(const char*) == kN && kN == 2 * kRobots,
                "client/examples/models/swarm.json is the model of this header");
};

}  // namespace ukes::models
