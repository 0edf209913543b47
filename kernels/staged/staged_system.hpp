// One system of the staged path: SystemKernel's resumable state, driven one right-hand-side
// evaluation at a time so that every evaluation's factorizations can be batched over systems.
//
// The RK stages come from the very rk4_step / dopri5_step the fused path calls, by replay: the
// step is re-run with the stage derivatives known so far, and its first call for an unknown one
// is the next evaluation wanted. Each stage input, the new state and the error norm are thus
// computed by the same code from the same numbers as in the fused path; replaying costs a few
// vector updates per stage, nothing beside a right-hand side with two batched factorizations.
#pragma once

#include "kernels/ensemble/system_kernel.hpp"

namespace ukes {

template <class Model, class T>
class StagedSystem {
 public:
  using Kernel = SystemKernel<Model, T>;
  using State = typename Kernel::State;
  using Observation = typename Kernel::Observation;
  using Phase = typename Kernel::Phase;
  // Evaluations per trial step: k2 .. k7 for DOPRI5, k2 .. k4 and f(t + h, y) for RK4.
  static constexpr int kMaxStageEvals = 6;

  UKES_HD void begin(const BatchInputView& in, const RunSettings<T>& s, int i,
                     const BatchOutputView& out) {
    kernel_.begin(in, s, i, out);
    known_ = 0;
    stepping_ = false;
    seek(s, out);
  }

  UKES_HD bool active() const { return kernel_.phase() != Phase::kDone; }
  UKES_HD const T* params() const { return kernel_.params(); }
  UKES_HD const Model& model() const { return kernel_.model(); }
  // The evaluation wanted next (while active()).
  UKES_HD T request_time() const { return t_req_; }
  UKES_HD const State& request_state() const { return y_req_; }

  // Consumes dx = f(request_time(), request_state()) and its observation; moves on to the next
  // request, or finishes (results written to `out`).
  UKES_HD void take(const RunSettings<T>& s, const BatchOutputView& out, const State& dx,
                    const Observation& e) {
    kernel_.note(e, y_req_);
    if (kernel_.phase() == Phase::kStep) {
      stage_k_[known_++] = dx;
    } else {
      kernel_.take(s, out, dx);
    }
    seek(s, out);
  }

 private:
  // Replays a step: answers its first `known` calls from the stage derivatives, and remembers the
  // first call beyond them (its later calls get zeros; their results are discarded).
  struct Replay {
    const State* k;
    int known;
    int calls = 0;
    bool wanted = false;
    T t_wanted = T(0);
    State y_wanted;
    UKES_HD Replay(const State* stage_k, int stages_known) : k(stage_k), known(stages_known) {}
    UKES_HD void operator()(T t, const State& y, State& dx) {
      if (calls < known) {
        dx = k[calls];
      } else {
        if (!wanted) {
          wanted = true;
          t_wanted = t;
          y_wanted = y;
        }
        dx = State::zero();
      }
      ++calls;
    }
  };

  // Runs the control logic until it wants an evaluation or the integration has ended.
  UKES_HD void seek(const RunSettings<T>& s, const BatchOutputView& out) {
    for (;;) {
      const Phase phase = kernel_.phase();
      if (phase == Phase::kDone) return;
      if (phase != Phase::kStep) {
        t_req_ = kernel_.request(y_req_);
        return;
      }
      if (!stepping_) {
        if (!kernel_.propose(s, out)) return;
        stepping_ = true;
        known_ = 0;
      }
      Replay f(stage_k_, known_);
      State y, k_new;
      T err = T(0);
      if (s.method == Method::kRk4) {
        y = rk4_step(f, kernel_.t(), kernel_.x(), kernel_.k(), kernel_.h_try());
        f(kernel_.step_end_time(), y, k_new);
      } else {
        err = dopri5_step(f, kernel_.t(), kernel_.x(), kernel_.k(), kernel_.h_try(), s.rtol, s.atol,
                          y, k_new, kernel_.state_size());
      }
      if (f.wanted) {
        t_req_ = f.t_wanted;
        y_req_ = f.y_wanted;
        return;
      }
      stepping_ = false;
      kernel_.step_result(s, out, y, k_new, err);
    }
  }

  Kernel kernel_;
  State stage_k_[kMaxStageEvals];  // the current trial step's evaluations so far
  int known_;
  bool stepping_;  // a trial step is proposed and its stages are being evaluated
  T t_req_;
  State y_req_;
};

// System i integrated from t0 to t_end with the right-hand side evaluated at exactly one place:
// the fused GPU kernel's body for user models (FusedSystem,
// kernels/backend/device/system_kernels.hpp). SystemKernel::run calls the right-hand side from
// eleven places (the first evaluation, three inside rk4_step and one at the RK4 step's end, six
// inside dopri5_step), and nvcc inlines them: for scara in FP64 that is three times the PTX of this
// loop. Same control logic, same numbers: tests/staged/one_call_site_test.cpp checks it against
// SystemKernel::run bit for bit.
template <class Model, class T>
UKES_HD void integrate_with_one_call_site(const BatchInputView& in, const RunSettings<T>& s, int i,
                                          const BatchOutputView& out) {
  using Kernel = SystemKernel<Model, T>;
  StagedSystem<Model, T> sys;
  sys.begin(in, s, i, out);
  while (sys.active()) {
    const typename Kernel::State& x = sys.request_state();
    Vec<T, Model::kN> q, qd;
    Kernel::split(x, q, qd);
    const DynamicsEval<Model, T> e = evaluate_dynamics<Model, T>(
        sys.model(), q, qd, sys.request_time(), sys.params(), s.dynamics);
    typename Kernel::State dx;
    Kernel::derivative_of(x, e, dx);
    sys.take(s, out, dx, Kernel::observation_of(e));
  }
}

}  // namespace ukes
