// Evaluating and locating a run's events (docs/EVENTS.md, event_table.hpp), __host__ __device__:
// the conditions and resets through the event program's interpreter (kernels/expr/program.hpp),
// and the bracketing root finder that SystemKernel (system_kernel.hpp) runs on its step's dense
// output.
#pragma once

#include "kernels/ensemble/event_table.hpp"
#include "kernels/integrators/dopri5.hpp"
#include "kernels/integrators/hermite.hpp"
#include "kernels/linalg/small_matrix.hpp"

namespace ukes {

// g_e(q, qd, t, p) of every event into g[0 .. table.count). p: the system's parameters in the
// model's order.
template <class T, int N>
UKES_HD void event_conditions(const EventTable& table, const Vec<T, N>& q, const Vec<T, N>& qd, T t,
                              const T* p, T* g) {
  const expr::Inputs<T, T> in{&q[0], &qd[0], t, p, nullptr};
  expr::run_segment<expr::kMaxRegisters>(table.program, expr::Segment::kEventConditions, in,
                                         [g](int k, const T& value) { g[k] = value; });
}

// Event e's reset of (q, qd) at time t: the new coordinates and velocities it gives, both from
// the state before the reset; a part it does not give stays as it was.
template <class T, int N>
UKES_HD void event_reset(const EventTable& table, int e, T t, const T* p, Vec<T, N>& q,
                         Vec<T, N>& qd) {
  const Vec<T, N> q_before = q, qd_before = qd;
  const expr::Inputs<T, T> in{&q_before[0], &qd_before[0], t, p, nullptr};
  // The segments hold every event's reset (output e kMassStride + j): keep event e's.
  const auto into = [e](Vec<T, N>& x) {
    return [e, &x](int k, const T& value) {
      if (k / expr::kMassStride == e) x[k % expr::kMassStride] = value;
    };
  };
  if ((table.resets_q >> e) & 1u)
    expr::run_segment<expr::kMaxRegisters>(table.program, expr::Segment::kEventResetQ, in, into(q));
  if ((table.resets_qd >> e) & 1u)
    expr::run_segment<expr::kMaxRegisters>(table.program, expr::Segment::kEventResetQd, in,
                                           into(qd));
}

// The step after an event's reset starts at that event's zero: the points, this many per step,
// at which the step's dense output is searched for the event's next crossing
// (SystemKernel::bracket_crossing, system_kernel.hpp).
inline constexpr int kResetScanPoints = 16;

// The time to which a located event's t is converged: 1e-13 relative to the step's times and
// length (a few units of roundoff in FP32).
template <class T>
UKES_HD T event_time_tolerance(T t0, T h) {
  const T relative = max_of(T(1e-13), T(4) * Epsilon<T>::value);
  return relative * max_of(max_of(abs(t0), abs(t0 + h)), abs(h));
}

// The crossing of g (g(theta) of the step's dense output, theta in [0, 1]) between theta = a,
// where it is ga, and b, where it is gb and has crossed (crosses(), event_table.hpp): the
// Illinois method, a bisection every fourth iteration so that the bracket at least halves that
// often, until the bracket is under tol (in theta). Returns the bracket's end past the crossing,
// where g has crossed, so that the state there counts as after the event.
template <class T, class G>
UKES_HD T locate_crossing(const G& g, T a, T b, T ga, T gb, T tol) {
  int kept = 0;  // the end the last iteration kept: -1 b (it moved a), +1 a
  for (int iteration = 0; iteration < 200 && b - a > tol; ++iteration) {
    T m = iteration % 4 == 3 ? T(0.5) * (a + b) : (a * gb - b * ga) / (gb - ga);
    if (!(m > a && m < b)) m = T(0.5) * (a + b);
    const T gm = g(m);
    if (gm == T(0)) return m;
    const bool before = ga > T(0) ? gm > T(0) : gm < T(0);
    if (before) {
      a = m;
      ga = gm;
      if (kept == -1) gb *= T(0.5);  // Illinois: the end kept twice weighs half
      kept = -1;
    } else {
      b = m;
      gb = gm;
      if (kept == 1) ga *= T(0.5);
      kept = 1;
    }
  }
  return b;
}

}  // namespace ukes
