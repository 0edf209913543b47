// Settings shared by all systems of one run, in the working precision T.
#pragma once

#include <cstdint>

#include "kernels/core/cancel.hpp"
#include "kernels/ensemble/batch_layout.hpp"
#include "kernels/ensemble/event_table.hpp"
#include "kernels/uk/servo_control.hpp"

namespace ukes {

template <class T>
struct RunSettings {
  Method method = Method::kDopri5;
  T t0 = T(0);
  T t_end = T(1);
  T dt = T(0);  // RK4 step; DOPRI5 first trial step (<= 0: automatic)
  T rtol = T(1e-9);
  T atol = T(1e-9);
  std::int64_t max_steps = 1000000;  // trial steps (accepted + rejected)
  DynamicsSettings<T> dynamics;      // Baumgarte gains, rank tolerance
  ControlSettings<T> control;        // constraint-following control (servo_control.hpp)
  bool assemble = false;             // project the initial condition onto the constraint set
  bool projection = false;           // project after every accepted step
  T projection_tol = T(0);           // <= 0: 1000 eps
  T inconsistency_tol = T(0);        // <= 0: 1e-6 (fp64) / 1e-3 (fp32), relative to 1 + |b|
  int samples = 2;                   // K >= 2 uniform sample times including t0 and t_end
  EventTable events;                 // located only by kernels built with them (kEvents)
  // Nonzero asks every system to stop (status kCancelled) at its next poll; null: never. Device
  // code gets a word in device memory (kernels/core/cancel.hpp).
  const std::int32_t* cancel = nullptr;
};

template <class T>
UKES_HD T default_inconsistency_tol() {
  return sizeof(T) >= 8 ? T(1e-6) : T(1e-3);
}

}  // namespace ukes
