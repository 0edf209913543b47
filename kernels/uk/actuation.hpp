// How a controlled run's control reaches the coordinates, and how many rows it may follow
// (docs/CONTROL.md): kept apart from servo_control.hpp so that host settings
// (kernels/ensemble/ensemble.hpp) name them without the kernels' linear algebra.
#pragma once

namespace ukes {

// kFull: B = I with the Gauss weighting u^T M^-1 u (the UK force of the controller's model);
// kCoordinates: B the columns of I of the listed coordinates; kMatrix: a user model's actuation
// matrix of expressions B(q, qd, t, p), n x k.
enum class Actuation : int { kFull = 0, kCoordinates = 1, kMatrix = 2 };

// The most rows and coordinates a control mask describes.
inline constexpr int kMaxControlRows = 64;

// The highest relative degree a servo row may have: how many times it is differentiated along
// the motion before the actuators' input appears in it (kernels/uk/servo_derivatives.hpp).
inline constexpr int kMaxRelativeDegree = 4;

}  // namespace ukes
