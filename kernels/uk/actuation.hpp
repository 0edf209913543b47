// How a controlled run's control reaches the coordinates (docs/CONTROL.md): kept apart from
// servo_control.hpp so that host settings (kernels/ensemble/ensemble.hpp) name it without the
// kernels' linear algebra.
#pragma once

namespace ukes {

// kFull: B = I with the Gauss weighting u^T M^-1 u (the UK force of the controller's model);
// kCoordinates: B the columns of I of the listed coordinates; kMatrix: a user model's actuation
// matrix of expressions B(q, qd, t, p), n x k.
enum class Actuation : int { kFull = 0, kCoordinates = 1, kMatrix = 2 };

}  // namespace ukes
