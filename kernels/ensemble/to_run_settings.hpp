// The host's EnsembleSettings (double) as the per-run settings a backend launches with, in the
// working precision T.
#pragma once

#include "kernels/ensemble/ensemble.hpp"
#include "kernels/ensemble/run_settings.hpp"

namespace ukes {

template <class T>
RunSettings<T> to_run_settings(const EnsembleSettings& e) {
  RunSettings<T> s;
  s.method = e.method;
  s.t0 = T(e.t0);
  s.t_end = T(e.t_end);
  s.dt = T(e.dt);
  s.rtol = T(e.rtol);
  s.atol = T(e.atol);
  s.max_steps = e.max_steps;
  s.dynamics.alpha = T(e.alpha);
  s.dynamics.beta = T(e.beta);
  s.dynamics.rank_rtol = T(e.rank_rtol);
  s.assemble = e.assemble;
  s.projection = e.projection;
  s.control.active = e.control.active;
  s.control.servo_rows = e.control.servo_rows;
  s.control.actuation = e.control.actuation;
  s.control.actuated = e.control.actuated;
  s.control.gain = T(e.control.gain);
  s.control.epsilon = T(e.control.epsilon);
  s.control.higher_degree_rows = e.control.higher_degree_rows;
  for (int r = 0; r < kMaxControlRows; ++r)
    s.control.relative_degree[r] = e.control.relative_degree[static_cast<std::size_t>(r)];
  s.projection_tol = T(e.projection_tol);
  s.inconsistency_tol = T(e.inconsistency_tol);
  s.samples = e.samples;
  s.events = e.events;
  s.cancel = e.cancel != nullptr ? e.cancel->word() : nullptr;
  return s;
}

}  // namespace ukes
