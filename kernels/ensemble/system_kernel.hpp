// Integrates one system of a batch from t0 to t_end: the unit of work every backend launches
// (a loop iteration on a CPU thread, a thread on the GPU). Everything here is __host__ __device__.
//
// The integration is a resumable per-system state machine (trivially copyable, so it can also live
// in device memory between kernel launches) that wants one right-hand-side evaluation at a time:
// begin() loads and assembles the system; while active(), the caller evaluates
// f(request_time(), request_state()) and hands the derivative and its observation to take(), which
// runs the control logic (RK stages, step acceptance, projection, sampling) up to the next
// evaluation it wants. run() is that loop with the right-hand side inline: the CPU backend and the
// GPU's fused kernel. The staged and warp paths (kernels/staged/) drive the same state, batching
// each evaluation's factorizations over systems. With the right-hand side at one place, nvcc
// inlines it once (it inlined it eleven times when the RK steps called it themselves), and
// run<Method>() compiles one method's stage storage alone.
//
// A controlled run (s.control.active) evaluates the controller's model at every right-hand side
// (kernels/uk/servo_control.hpp) with the system's controller parameters p_hat_.
//
// The stiff method (Method::kRosenbrock) wants a Jacobian as well as right-hand sides, so it is a
// loop of its own, StiffSystem (kernels/ensemble/stiff_system.hpp), driving this state with this
// class's loading, step acceptance, projection, sampling and statistics; run() and take() here
// integrate RK4 and DOPRI5.
//
// Events (docs/EVENTS.md) are located after each accepted step on the method's dense output by
// kernels built with them (kEvents; the CPU's, and the GPU's fused kernels compiled for the model
// at run time): each crossing is recorded, and the first terminating or resetting one ends the
// step there (kernels/ensemble/events.hpp).
//
// Invariant between steps: (t, x) is an accepted state and k = f(t, x). Statistics are maxima over
// all accepted states, the initial one included, kept in the output arrays as they grow. Steps end
// exactly on the K sample times, so results do not depend on which systems record trajectories.
#pragma once

#include "kernels/ensemble/events.hpp"
#include "kernels/ensemble/run_settings.hpp"
#include "kernels/integrators/dopri5.hpp"
#include "kernels/integrators/projection.hpp"
#include "kernels/integrators/rk4.hpp"
#include "kernels/integrators/step_control.hpp"

namespace ukes {

template <class Model, class T>
class StiffSystem;

template <class Model, class T>
class SystemKernel {
  friend class StiffSystem<Model, T>;

 public:
  static constexpr int kN = Model::kN;
  static constexpr int kD = 2 * kN;  // first-order state x = (q, qd)
  static constexpr int kP = kParamCount<Model>;
  using State = Vec<T, kD>;
  static constexpr int kM = kRows<Model>;

  // What statistics and trajectories need from an evaluation: not A and b, so that a stage's
  // matrices die with it instead of occupying registers for the whole step.
  struct Observation {
    Vec<T, kM> value;  // phi, psi
    Vec<T, kM> rate;   // phid
    Vec<T, kN> Qc;
    Vec<T, kN> control;  // the control force B u of a controlled run; zero otherwise
    T inconsistency;
    T rhs_norm;
    T conditioning;
    bool mass_ok;
  };

  // kInitialEval: f(t0, x0); kStepProbe: the starting-step heuristic's trial evaluation;
  // kStep: a trial step's evaluations (stage_ of them taken); kProjectedEval: f at a state just
  // projected; kDone.
  enum class Phase : int { kInitialEval, kStepProbe, kStep, kProjectedEval, kDone };

  static UKES_HD Observation observation_of(const DynamicsEval<Model, T>& e) {
    return {e.form.value,    e.form.rate, e.Qc,           e.control,
            e.inconsistency, e.rhs_norm,  e.conditioning, e.mass_ok};
  }

  // x' = (qd, qdd); NaN accelerations when M was not positive definite.
  static UKES_HD void derivative_of(const State& x, const DynamicsEval<Model, T>& e, State& dx) {
    for (int j = 0; j < kN; ++j) {
      dx[j] = x[kN + j];
      dx[kN + j] = e.mass_ok ? e.qdd[j] : T(NAN);
    }
  }

  // The whole integration of system i (RK4 or DOPRI5), on the method's own instantiation.
  // kServoDerivatives: the build follows servo rows of a higher relative degree too (its
  // translation unit includes kernels/uk/servo_derivatives.hpp; a run without such rows takes the
  // same code either way). kEvents: it locates s.events (a run without any takes the same code).
  template <bool kServoDerivatives = false, bool kEvents = false>
  UKES_HD static void run(const BatchInputView& in, const RunSettings<T>& s, int i,
                          const BatchOutputView& out) {
    if (s.method == Method::kRk4) {
      run<Method::kRk4, true, kServoDerivatives, kEvents>(in, s, i, out);
    } else {
      run<Method::kDopri5, true, kServoDerivatives, kEvents>(in, s, i, out);
    }
  }

  // kGeneral false: s.projection and s.control.active are false and s.events is empty, and the
  // step projection's and the controller's code and arrays drop out of the instantiation (the
  // fused kernels for the runs without either, kernels/backend/device/). kEvents (with kGeneral):
  // the kernel locates s.events.
  template <Method kMethod, bool kGeneral = true, bool kServoDerivatives = false,
            bool kEvents = false>
  UKES_HD static void run(const BatchInputView& in, const RunSettings<T>& s, int i,
                          const BatchOutputView& out) {
    static_assert(kGeneral || !kEvents, "events are the general kernel's");
    SystemKernel sys;
    sys.begin(in, s, i, out, kEvents);
    while (sys.active()) {
      const State& y = sys.request_state();
      Vec<T, kN> q, qd;
      split(y, q, qd);
      const DynamicsEval<Model, T> e = sys.template evaluate<kGeneral, kServoDerivatives>(s, q, qd);
      State dx;
      derivative_of(y, e, dx);
      sys.template take<kMethod, kGeneral, kEvents>(s, out, dx, observation_of(e));
    }
  }

  // f at (request_time(), q, qd): the plant under its controller in a controlled run.
  template <bool kGeneral = true, bool kServoDerivatives = false>
  UKES_HD DynamicsEval<Model, T> evaluate(const RunSettings<T>& s, const Vec<T, kN>& q,
                                          const Vec<T, kN>& qd) const {
    return evaluate_at<kGeneral, kServoDerivatives>(s, t_req_, q, qd);
  }

  // f at (t, q, qd).
  template <bool kGeneral = true, bool kServoDerivatives = false>
  UKES_HD DynamicsEval<Model, T> evaluate_at(const RunSettings<T>& s, T t, const Vec<T, kN>& q,
                                             const Vec<T, kN>& qd) const {
    if constexpr (kGeneral) {
      if constexpr (kServoDerivatives) {
        if (s.control.active && s.control.higher_degree_rows != 0) {
          return evaluate_servo_derivative_dynamics<Model, T>(model_, q, qd, t, p_, p_hat_,
                                                              s.dynamics, s.control);
        }
      }
      if (s.control.active) {
        return evaluate_controlled_dynamics<Model, T>(model_, q, qd, t, p_, p_hat_, s.dynamics,
                                                      s.control);
      }
    }
    return evaluate_dynamics<Model, T>(model_, q, qd, t, p_, s.dynamics);
  }

  // Loads system i, assembles it when asked to; then wants f(t0, x0). `events`: the caller
  // locates s.events (kEvents), whose records start empty.
  UKES_HD void begin(const BatchInputView& in, const RunSettings<T>& s, int i,
                     const BatchOutputView& out, bool events = false) {
    model_ = model_for<Model>(in);
    const ModelShape shape = model_shape(model_);
    i_ = i;
    slot_ = out.traj_slot ? out.traj_slot[i] : -1;
    phase_ = Phase::kInitialEval;
    status_ = Status::kOk;
    clear_statistics(out);
    if (events && s.events.count > 0) clear_events(s, out);
    event_after_ = -1;
    conditioning_ = T(1);
    steps_ = 0;
    rejected_ = 0;
    mass_failed_ = false;
    last_rejected_ = false;

    // A bucket model's padding (parameters, coordinates past its own) reads as zero.
    for (int k = 0; k < kP; ++k) p_[k] = k < shape.params ? T(in.params[k * in.count + i]) : T(0);
    derive_parameters(model_, p_);
    if (s.control.active) {
      for (int k = 0; k < kP; ++k)
        p_hat_[k] = k < shape.params ? T(in.control_params[k * in.count + i]) : T(0);
      derive_parameters(model_, p_hat_);
    }
    Vec<T, kN> q, qd;
    for (int j = 0; j < kN; ++j) {
      q[j] = j < shape.n ? T(in.q0[j * in.count + i]) : T(0);
      qd[j] = j < shape.n ? T(in.qd0[j * in.count + i]) : T(0);
    }
    t_ = s.t0;
    if (s.assemble) {
      ProjectionSettings<T> assembly = projection(s);
      assembly.max_iterations = 50;
      if (!project_positions<Model, T>(model_, q, t_, p_, assembly) ||
          !project_velocities<Model, T>(model_, q, qd, t_, p_, assembly)) {
        status_ = Status::kInconsistent;
      }
    }
    for (int j = 0; j < kN; ++j) {
      x_[j] = q[j];
      x_[kN + j] = qd[j];
    }
    want_current_state();
  }

  UKES_HD bool active() const { return phase_ != Phase::kDone; }
  UKES_HD const Model& model() const { return model_; }
  UKES_HD const T* params() const { return p_; }
  // The evaluation wanted next (while active()).
  UKES_HD T request_time() const { return t_req_; }
  UKES_HD const State& request_state() const { return y_; }

  // Consumes dx = f(request_time(), request_state()) and its observation; moves on to the next
  // evaluation wanted, or finishes (results written to `out`). The method is s.method: one copy
  // of the control logic for both (the staged and warp paths, which locate no events).
  UKES_HD void take(const RunSettings<T>& s, const BatchOutputView& out, const State& dx,
                    const Observation& e) {
    take_with(s.method, true, false, s, out, dx, e);
  }

  // The same for a method known at compile time (s.method must be kMethod): the constant folds
  // through take_with, and the other method's stages and storage drop out; so does the step
  // projection when kMayProject is false (s.projection must then be false), and the events'
  // code without kEvents.
  template <Method kMethod, bool kMayProject = true, bool kEvents = false>
  UKES_HD void take(const RunSettings<T>& s, const BatchOutputView& out, const State& dx,
                    const Observation& e) {
    take_with(kMethod, kMayProject, kEvents, s, out, dx, e);
  }

  // An RK4 step whose stages the caller evaluates itself: the CPU's lanes take the steps of
  // systems that agree on its time and size side by side, their stages in vectors
  // (kernels/backend/cpu/simd/lane_batch_impl.hpp). At the start of an RK4 run's step
  // (at_rk4_step_start()) the step goes from (step_time(), state()), with derivative() = f there,
  // over step_size() to step_end_time(); take_rk4_step() then takes its new state y (Rk4Stages's,
  // after the three stage evaluations), k_new = f(step_end_time(), y) and its observation, as
  // take() would have after the stages. `stage_mass_failed`: some stage found M not positive
  // definite at a finite state (take() notes it at each stage).
  UKES_HD bool at_rk4_step_start() const { return phase_ == Phase::kStep && stage_ == 0; }
  UKES_HD T step_time() const { return t_; }
  UKES_HD T step_size() const { return h_try_; }
  // Where the trial step ends: exactly on the sample time when landing.
  UKES_HD T step_end_time() const { return landing_ ? t_target_ : t_ + h_try_; }
  UKES_HD const State& state() const { return x_; }
  UKES_HD const State& derivative() const { return k_; }
  template <bool kMayProject = true, bool kEvents = false>
  UKES_HD void take_rk4_step(const RunSettings<T>& s, const BatchOutputView& out, const State& y,
                             const State& k_new, const Observation& e, bool stage_mass_failed) {
    if (stage_mass_failed) mass_failed_ = true;
    y_ = y;
    stage_ = Rk4Stages<T, kD>::kStageEvaluations;
    take_with(Method::kRk4, kMayProject, kEvents, s, out, k_new, e);
  }

  // Runs of plain RK4 steps (the CPU's lanes, kernels/backend/cpu/simd/lane_batch_impl.hpp).
  // Most steps change nothing but the state, its derivative, the statistics' maxima and the
  // conditioning: no projection or event, no failure, nothing for propose() to check but the
  // time, and no sample recorded (a system whose trajectory is not kept only counts the samples
  // it lands on). The caller takes such steps on its own from a step's start, at most
  // steps_before_check() of them, each as propose() would: of nominal_step(), or ending exactly on
  // the next sample where lands(); it reduces their observations (merge_statistics) and hands the
  // run over at once (take_plain_rk4_steps). A system that records() must take the steps that
  // land itself; the run's last step lands on the last sample at the latest.
  UKES_HD bool landing() const { return landing_; }
  UKES_HD bool records() const { return slot_ >= 0; }
  UKES_HD int next_sample() const { return next_sample_; }
  UKES_HD T next_sample_time() const { return t_target_; }
  UKES_HD T nominal_step() const { return h_; }
  UKES_HD static bool lands(T t, T h, T t_target) { return t + T(1.0001) * h >= t_target; }
  UKES_HD static T sample_time(const RunSettings<T>& s, int k) {
    if (k >= s.samples - 1) return s.t_end;
    return s.t0 + (s.t_end - s.t0) * T(k) / T(s.samples - 1);
  }
  // Accepted steps from here to the first whose propose() checks the step budget or polls for
  // cancellation.
  UKES_HD std::int64_t steps_before_check(const RunSettings<T>& s) const {
    const std::int64_t taken = steps_ + rejected_;
    const std::int64_t to_poll = kStopPollInterval - taken % kStopPollInterval;
    return to_poll < s.max_steps - taken ? to_poll : s.max_steps - taken;
  }
  // Whether observe() finds an observation inconsistent: for one system, or lane by lane.
  template <class V>
  UKES_HD static auto inconsistent(const RunSettings<T>& s, const V& inconsistency,
                                   const V& rhs_norm) {
    const T tol = s.inconsistency_tol > T(0) ? s.inconsistency_tol : default_inconsistency_tol<T>();
    return inconsistency > V(tol) * (V(1) + rhs_norm);
  }
  // |Qc|, the force statistic, for observe() and for runs alike. On the host one compiled copy:
  // inlined where each caller is compiled, GCC contracted and vectorized the sum differently in
  // observe() and in the lanes' runs (four_bar's nine terms rounded apart in the last bit), and a
  // system's force maximum depended on where its runs ended, hence on its lane-mates. The device
  // inlines it, as it did observe()'s norm (benchmarks/kernel_resources.tsv).
#ifdef __CUDA_ARCH__
  UKES_HD static T force_norm(const Vec<T, kN>& Qc) { return norm2(Qc); }
#else
  UKES_HD UKES_NOINLINE static T force_norm(const Vec<T, kN>& Qc) { return norm2(Qc); }
#endif
  // Maxima over a run's observations, per residual slot (observe()'s layout) and of the force and
  // inconsistency norms, merged into `out`. max_of keeps the later of equals, so merging a run's
  // maximum gives the bits observe() gives one observation at a time, provided no value is NaN.
  UKES_HD void merge_statistics(const BatchOutputView& out, const double* residual_max,
                                double force_max, double inconsistency_max) const {
    const int c = out.count, slots = model_shape(model_).residual_slots();
    for (int r = 0; r < slots; ++r) {
      out.residual_max[r * c + i_] = max_of(out.residual_max[r * c + i_], residual_max[r]);
    }
    out.force_max[i_] = max_of(out.force_max[i_], force_max);
    out.control_effort_max[i_] = max_of(out.control_effort_max[i_], 0.0);  // never controlled
    out.inconsistency_max[i_] = max_of(out.inconsistency_max[i_], inconsistency_max);
  }
  // The run's `steps` plain steps taken, `samples` of them landing on samples, the last ending
  // at (t, x) with k = f(t, x) and that evaluation's conditioning, its statistics merged: then the
  // next step proposed, as after any.
  UKES_HD void take_plain_rk4_steps(const RunSettings<T>& s, const BatchOutputView& out, int steps,
                                    int samples, T t, const State& x, const State& k,
                                    T conditioning) {
    t_ = t;
    x_ = x;
    k_ = k;
    steps_ += steps;
    next_sample_ += samples;
    conditioning_ = conditioning;
    propose(Method::kRk4, s, out);
  }

  UKES_HD static bool all_finite(const State& x) {
    for (int j = 0; j < kD; ++j)
      if (!isfinite(x[j])) return false;
    return true;
  }

  UKES_HD static void split(const State& x, Vec<T, kN>& q, Vec<T, kN>& qd) {
    for (int j = 0; j < kN; ++j) {
      q[j] = x[j];
      qd[j] = x[kN + j];
    }
  }

 private:
  UKES_HD UKES_INLINE void take_with(Method method, bool may_project, bool events,
                                     const RunSettings<T>& s, const BatchOutputView& out,
                                     const State& dx, const Observation& e) {
    // Whether some evaluation at a finite state found M not positive definite (why a trial step
    // failed).
    if (!e.mass_ok && all_finite(y_)) mass_failed_ = true;
    switch (phase_) {
      case Phase::kInitialEval:
        k_ = dx;
        start(s, out, e);
        break;
      case Phase::kStepProbe:
        h_ = finish_initial_step(s, dx);
        phase_ = Phase::kStep;
        break;
      case Phase::kProjectedEval:
        k_ = dx;
        complete_step(s, out, e);
        break;
      case Phase::kStep:
        if (take_stage(method, may_project, events, s, out, dx, e)) return;
        break;
      case Phase::kDone:
        return;
    }
    if (phase_ == Phase::kStep) propose(method, s, out);
  }

  // Components of the first-order state that the model has (kD but for a bucket's padding):
  // the error norms average over these alone, as they would for a model of exactly this size.
  UKES_HD int state_size() const { return 2 * model_shape(model_).n; }

  // Below it the integration has broken down.
  UKES_HD static T h_min(const RunSettings<T>& s) {
    return T(10) * Epsilon<T>::value * max_of(abs(s.t_end), abs(s.t_end - s.t0));
  }

  UKES_HD ProjectionSettings<T> projection(const RunSettings<T>& s) const {
    ProjectionSettings<T> p;
    p.tol = s.projection_tol > T(0) ? s.projection_tol : T(1000) * Epsilon<T>::value;
    p.max_iterations = 10;
    p.rank_rtol = rank_rtol_of(s.dynamics, model_);
    return p;
  }

  UKES_HD void want_current_state() {
    y_ = x_;
    t_req_ = t_;
  }

  // One of the trial step's evaluations is in: true while the step wants more (request set),
  // false once the step is decided (accepted, rejected or projected).
  UKES_HD bool take_stage(Method method, bool may_project, bool events, const RunSettings<T>& s,
                          const BatchOutputView& out, const State& dx, const Observation& e) {
    T err = T(0);  // RK4 has no error estimate
    if (method == Method::kRk4) {
      if (++stage_ <= Rk4Stages<T, kD>::kStageEvaluations) {
        t_req_ = rk4_.advance(stage_, t_, h_try_, x_, k_, dx, y_);
        // The new state is evaluated where the step ends: exactly on the sample when landing.
        if (stage_ == Rk4Stages<T, kD>::kStageEvaluations) t_req_ = step_end_time();
        return true;
      }
    } else {
      // DOPRI5's k7 = f(t + h, y) is both the last stage and the new state's evaluation.
      if (++stage_ <= Dopri5Stages<T, kD>::kStageEvaluations) {
        t_req_ = dopri5_.advance(stage_, t_, h_try_, x_, k_, dx, y_);
        return true;
      }
      err = dopri5_.error_norm(h_try_, s.rtol, s.atol, x_, k_, y_, dx, state_size());
    }
    // One call: its projection is inlined once.
    step_result(may_project, events, s, out, dx, err, e);
    return false;
  }

  // kStep: starts the next trial step (its first stage wanted), or ends the integration (all
  // samples reached, a failure, or the step budget) with its results written.
  UKES_HD void propose(Method method, const RunSettings<T>& s, const BatchOutputView& out) {
    if (!(status_ == Status::kOk && next_sample_ < s.samples)) {
      finish(s, out);
      return;
    }
    if (steps_ + rejected_ >= s.max_steps) {
      status_ = Status::kMaxSteps;
      finish(s, out);
      return;
    }
    if ((steps_ + rejected_) % kStopPollInterval == 0 && stop_requested(s.cancel)) {
      status_ = Status::kCancelled;
      finish(s, out);
      return;
    }
    t_target_ = sample_time(s, next_sample_);
    // Land exactly on the next sample time when within a hair of it (avoids sliver steps).
    landing_ = lands(t_, h_, t_target_);
    h_try_ = landing_ ? t_target_ - t_ : h_;
    stage_ = 0;
    if (method == Method::kRk4) {
      t_req_ = rk4_.begin(t_, h_try_, x_, k_, y_);
    } else {
      t_req_ = dopri5_.begin(t_, h_try_, x_, k_, y_);
    }
  }

  // The trial step's outcome: the new state y_, k_new = f(step_end_time(), y_) with observation
  // e, and for DOPRI5 the error norm. Accepts, or rejects a DOPRI5 step (the stiff method's loop
  // rejects its own before this); after a projection, or an event that ended the step early,
  // wants f at the new state. `events`: locates s.events in the step.
  UKES_HD void step_result(bool may_project, bool events, const RunSettings<T>& s,
                           const BatchOutputView& out, const State& k_new, T err,
                           const Observation& e) {
    if (s.method == Method::kDopri5) {
      if (!(err <= T(1))) {
        ++rejected_;
        last_rejected_ = true;
        const bool nonfinite = !isfinite(err);
        h_ = h_try_ * step_factor<4>(err, T(0.2), T(1));
        if (abs(h_) < h_min(s)) status_ = failure_status(nonfinite);
        return;
      }
      const T grow = step_factor<4>(err, T(0.2), last_rejected_ ? T(1) : T(10));
      // A step shortened to land on a sample says little about the next one: keep the longer.
      h_ = landing_ ? max_of(h_, h_try_ * grow) : h_try_ * grow;
      last_rejected_ = false;
    }
    if (events && s.events.count > 0 && stop_at_event(s, out, k_new)) return;
    t_ = landing_ ? t_target_ : t_ + h_try_;
    x_ = y_;
    k_ = k_new;
    ++steps_;
    if (may_project && s.projection) {
      Vec<T, kN> qp, qdp;
      split(x_, qp, qdp);
      const ProjectionSettings<T> settings = projection(s);
      if (project_positions<Model, T>(model_, qp, t_, p_, settings)) {
        project_velocities<Model, T>(model_, qp, qdp, t_, p_, settings);
      }
      for (int j = 0; j < kN; ++j) {
        x_[j] = qp[j];
        x_[kN + j] = qdp[j];
      }
      phase_ = Phase::kProjectedEval;
      want_current_state();
      return;
    }
    complete_step(s, out, e);
  }

  // Events in the accepted step [t_, step_end_time()] (y_ and k_new at its end): records every
  // crossing up to the first that terminates or resets, and ends the step there (true; the
  // state is then the event's, and f is wanted at it).
  UKES_HD bool stop_at_event(const RunSettings<T>& s, const BatchOutputView& out,
                             const State& k_new) {
    const EventTable& table = s.events;
    const T t_end = step_end_time(), h = t_end - t_;
    T before[kMaxEvents], after[kMaxEvents], when[kMaxEvents];
    conditions_at(table, t_, x_, before);
    conditions_at(table, t_end, y_, after);
    const T tol = event_time_tolerance(t_, h) / abs(h);
    int stop = -1;
    for (int ev = 0; ev < table.count; ++ev) {
      when[ev] = T(-1);
      const int event = ev;
      const auto g = [&](T theta) {
        State z;
        dense_state(s, theta, h, k_new, z);
        T values[kMaxEvents];
        conditions_at(table, t_ + theta * h, z, values);
        return values[event];
      };
      T a, b, ga, gb;
      if (!bracket_crossing(table, ev, g, before[ev], after[ev], a, b, ga, gb)) continue;
      const T theta = locate_crossing(g, a, b, ga, gb, tol);
      when[ev] = theta;
      if (table.action[ev] != EventAction::kRecord && (stop < 0 || theta < when[stop])) stop = ev;
    }
    event_after_ = -1;
    State z;
    for (int ev = 0; ev < table.count; ++ev) {
      if (when[ev] < T(0) || (stop >= 0 && when[ev] > when[stop])) continue;
      dense_state(s, when[ev], h, k_new, z);
      record_event(s, out, ev, when[ev] < T(1) ? t_ + when[ev] * h : t_end, z);
    }
    if (stop < 0) return false;
    const T theta = when[stop];
    dense_state(s, theta, h, k_new, z);
    x_ = z;
    t_ = theta < T(1) ? t_ + theta * h : t_end;
    ++steps_;
    landing_ = false;  // the sample it aimed at is not reached
    if (table.action[stop] == EventAction::kTerminate) {
      status_ = Status::kTerminated;
    } else {
      if (!reset_at_event(s, stop)) status_ = Status::kInconsistent;
      // The next step is scanned for this event from its first kResetScanPoints-th on
      // (bracket_crossing): no longer than the way here, a flight after the reset that is a
      // fraction (a restitution) of the one before it still spans the scan.
      const T way_here = max_of(theta, T(1e-3)) * h;
      if (s.method != Method::kRk4 && abs(way_here) < abs(h_)) h_ = way_here;
    }
    phase_ = Phase::kProjectedEval;
    want_current_state();
    return true;
  }

  // Event ev's crossing in the step, bracketed as [a, b] (in theta) with g there ga, gb: between
  // the step's ends (g0, g1). In the step after ev's own reset g starts at its zero, and a flight
  // that returns to it within the step has one sign at both ends: the step's kResetScanPoints-ths
  // are searched, from the first on, for the first pair whose signs cross. False: none.
  template <class G>
  UKES_HD bool bracket_crossing(const EventTable& table, int ev, const G& g, T g0, T g1, T& a, T& b,
                                T& ga, T& gb) const {
    a = T(0), b = T(1), ga = g0, gb = g1;
    if (ev != event_after_) return crosses(table.direction[ev], g0, g1);
    a = T(1) / T(kResetScanPoints);
    ga = g(a);
    for (int k = 2; k <= kResetScanPoints; ++k) {
      b = T(k) / T(kResetScanPoints);
      gb = k == kResetScanPoints ? g1 : g(b);
      if (crosses(table.direction[ev], ga, gb)) return true;
      a = b, ga = gb;
    }
    return false;
  }

  UKES_HD void conditions_at(const EventTable& table, T t, const State& x, T* g) const {
    Vec<T, kN> q, qd;
    split(x, q, qd);
    event_conditions(table, q, qd, t, p_, g);
  }

  // The step's dense output at t_ + theta h: DOPRI5's own, cubic Hermite for RK4 and RODAS4.
  UKES_HD void dense_state(const RunSettings<T>& s, T theta, T h, const State& k_new,
                           State& z) const {
    if (s.method == Method::kDopri5) {
      dopri5_.dense(theta, h, x_, k_, y_, k_new, z);
    } else {
      cubic_hermite(theta, h, x_, k_, y_, k_new, z);
    }
  }

  // Event e's reset of the state (t_, x_), then the constraints re-met as assembly meets them:
  // positions when the reset gave coordinates, then velocities (M-weighted least change,
  // kernels/integrators/projection.hpp). False when they cannot be.
  UKES_HD bool reset_at_event(const RunSettings<T>& s, int e) {
    Vec<T, kN> q, qd;
    split(x_, q, qd);
    event_reset(s.events, e, t_, p_, q, qd);
    ProjectionSettings<T> settings = projection(s);
    settings.max_iterations = 50;
    bool met = !((s.events.resets_q >> e) & 1u) ||
               project_positions<Model, T>(model_, q, t_, p_, settings);
    met = met && project_velocities<Model, T>(model_, q, qd, t_, p_, settings);
    for (int j = 0; j < kN; ++j) {
      x_[j] = q[j];
      x_[kN + j] = qd[j];
    }
    event_after_ = e;
    return met;
  }

  // Occurrence of event e at (t, z): counted, and kept while the event has records left.
  UKES_HD void record_event(const RunSettings<T>& s, const BatchOutputView& out, int e, T t,
                            const State& z) const {
    const long c = out.count;
    std::int64_t& count = out.event_count[e * c + i_];
    if (count < s.events.max_records[e]) {
      const int n = model_shape(model_).n;
      const long r = e * s.events.records + static_cast<long>(count);
      out.event_t[r * c + i_] = double(t);
      for (int j = 0; j < n; ++j) {
        out.event_q[(r * n + j) * c + i_] = double(z[j]);
        out.event_qd[(r * n + j) * c + i_] = double(z[kN + j]);
      }
    }
    ++count;
  }

  UKES_HD void clear_events(const RunSettings<T>& s, const BatchOutputView& out) const {
    const long c = out.count;
    const long records = static_cast<long>(s.events.count) * s.events.records;
    const int n = model_shape(model_).n;
    for (int e = 0; e < s.events.count; ++e) out.event_count[e * c + i_] = 0;
    for (long r = 0; r < records; ++r) {
      out.event_t[r * c + i_] = NAN;
      for (int j = 0; j < n; ++j) {
        out.event_q[(r * n + j) * c + i_] = NAN;
        out.event_qd[(r * n + j) * c + i_] = NAN;
      }
    }
  }

  // Why integration cannot go on. Rank loss first: when the constraint Jacobian is within
  // eps^(1/4) of losing rank (sin q2 -> 0 for a SCARA arm asked to reach out of range), the
  // accelerations that keep the rows diverge and the step size collapses; the cause to report is
  // that the rows cannot be met, not the symptom.
  UKES_HD Status failure_status(bool nonfinite) const {
    if (mass_failed_) return Status::kSingularMass;
    if (conditioning_ < exact_conditioning_floor<T>()) return Status::kInconsistent;
    return nonfinite ? Status::kNonfinite : Status::kStepUnderflow;
  }

  // After f(t0, x0): observe the initial state, choose the first step size.
  UKES_HD void start(const RunSettings<T>& s, const BatchOutputView& out, const Observation& e) {
    if (status_ == Status::kOk) observe(s, out, 0, e);
    next_sample_ = 1;
    const T span = s.t_end - s.t0;
    h_ = s.dt;
    if (s.method == Method::kRk4 && !(h_ > T(0))) h_ = span / T(1000);
    phase_ = Phase::kStep;
    // A system that already failed takes no step: no starting step to probe for.
    if (s.method == Method::kDopri5 && !(h_ > T(0)) && status_ == Status::kOk) {
      begin_initial_step(s);
    }
  }

  // Hairer's starting-step heuristic (HNW I, sec. II.4), first half: the probe step h0.
  UKES_HD void begin_initial_step(const RunSettings<T>& s) {
    T d0 = T(0), d1 = T(0);
    for (int j = 0; j < kD; ++j) {
      const T sc = s.atol + s.rtol * abs(x_[j]);
      d0 += square(x_[j] / sc);
      d1 += square(k_[j] / sc);
    }
    d0 = sqrt(d0 / T(state_size()));
    d1 = sqrt(d1 / T(state_size()));
    T h0 = (d0 < T(1e-5) || d1 < T(1e-5)) ? T(1e-6) : T(0.01) * d0 / d1;
    probe_h0_ = min_of(h0, s.t_end - t_);
    probe_d1_ = d1;
    phase_ = Phase::kStepProbe;
    for (int j = 0; j < kD; ++j) y_[j] = x_[j] + probe_h0_ * k_[j];
    t_req_ = t_ + probe_h0_;
  }

  // Second half, given k1 = f(t + h0, x + h0 k).
  UKES_HD T finish_initial_step(const RunSettings<T>& s, const State& k1) const {
    T d2 = T(0);
    for (int j = 0; j < kD; ++j) {
      const T sc = s.atol + s.rtol * abs(x_[j]);
      d2 += square((k1[j] - k_[j]) / sc);
    }
    d2 = sqrt(d2 / T(state_size())) / probe_h0_;
    const T dm = max_of(probe_d1_, d2);
    const T h1 =
        !(dm > T(1e-15)) ? max_of(T(1e-6), probe_h0_ * T(1e-3)) : pow(T(0.01) / dm, T(0.2));
    return min_of(T(100) * probe_h0_, h1);
  }

  // An accepted step is complete once k = f(t, x) and e describe the new state.
  UKES_HD void complete_step(const RunSettings<T>& s, const BatchOutputView& out,
                             const Observation& e) {
    observe(s, out, landing_ ? next_sample_ : -1, e);
    mass_failed_ = false;
    if (landing_) ++next_sample_;
    phase_ = Phase::kStep;
  }

  // The statistics' maxima accumulate in `out` itself, as exact doubles of T: held by the system
  // they would stay live through every right-hand side (on the GPU, registers or spills).
  UKES_HD void clear_statistics(const BatchOutputView& out) const {
    const int c = out.count, slots = model_shape(model_).residual_slots();
    for (int r = 0; r < slots; ++r) out.residual_max[r * c + i_] = 0.0;
    out.force_max[i_] = 0.0;
    out.control_effort_max[i_] = 0.0;
    out.inconsistency_max[i_] = 0.0;
  }

  UKES_HD void observe(const RunSettings<T>& s, const BatchOutputView& out, int sample,
                       const Observation& e) {
    if (!all_finite(x_)) {
      status_ = failure_status(true);
    } else if (!e.mass_ok) {
      status_ = Status::kSingularMass;
    } else {
      conditioning_ = e.conditioning;
    }
    // Slots: |phi| rows, then |phid| rows, then |psi| rows (batch_layout.hpp).
    const ModelShape shape = model_shape(model_);
    const int mp = shape.position_rows;
    const int c = out.count;
    double* rmax = out.residual_max + i_;
    for (int r = 0; r < mp; ++r) {
      rmax[r * c] = max_of(rmax[r * c], double(abs(e.value[r])));
      rmax[(mp + r) * c] = max_of(rmax[(mp + r) * c], double(abs(e.rate[r])));
    }
    for (int r = mp; r < shape.rows(); ++r) {
      rmax[(mp + r) * c] = max_of(rmax[(mp + r) * c], double(abs(e.value[r])));
    }
    out.force_max[i_] = max_of(out.force_max[i_], double(force_norm(e.Qc)));
    out.control_effort_max[i_] = max_of(out.control_effort_max[i_], double(norm2(e.control)));
    out.inconsistency_max[i_] = max_of(out.inconsistency_max[i_], double(e.inconsistency));
    if (inconsistent(s, e.inconsistency, e.rhs_norm)) status_ = Status::kInconsistent;
    if (sample >= 0 && slot_ >= 0) record(s, out, sample, e);
  }

  UKES_HD void record(const RunSettings<T>& s, const BatchOutputView& out, int sample,
                      const Observation& e) const {
    const ModelShape shape = model_shape(model_);
    const int n = shape.n, mp = shape.position_rows, slots = shape.residual_slots();
    const long base = (static_cast<long>(slot_) * s.samples + sample);
    for (int j = 0; j < n; ++j) {
      out.traj_q[base * n + j] = double(x_[j]);
      out.traj_qd[base * n + j] = double(x_[kN + j]);
      out.traj_force[base * n + j] = double(e.Qc[j]);
      out.traj_control[base * n + j] = double(e.control[j]);
    }
    for (int r = 0; r < mp; ++r) {
      out.traj_residual[base * slots + r] = double(e.value[r]);
      out.traj_residual[base * slots + mp + r] = double(e.rate[r]);
    }
    for (int r = mp; r < shape.rows(); ++r) {
      out.traj_residual[base * slots + mp + r] = double(e.value[r]);
    }
  }

  UKES_HD void finish(const RunSettings<T>& s, const BatchOutputView& out) {
    phase_ = Phase::kDone;
    const int c = out.count;
    const ModelShape shape = model_shape(model_);
    const int n = shape.n, slots = shape.residual_slots();
    out.status[i_] = static_cast<int>(status_);
    out.t[i_] = double(t_);
    for (int j = 0; j < n; ++j) {
      out.q[j * c + i_] = double(x_[j]);
      out.qd[j * c + i_] = double(x_[kN + j]);
    }
    out.steps[i_] = steps_;
    out.rejected[i_] = rejected_;
    // Samples a failed system never reached are NaN, never stale memory.
    if (slot_ >= 0) {
      for (int k = next_sample_; k < s.samples; ++k) {
        const long base = static_cast<long>(slot_) * s.samples + k;
        for (int j = 0; j < n; ++j) {
          out.traj_q[base * n + j] = NAN;
          out.traj_qd[base * n + j] = NAN;
          out.traj_force[base * n + j] = NAN;
          out.traj_control[base * n + j] = NAN;
        }
        for (int r = 0; r < slots; ++r) out.traj_residual[base * slots + r] = NAN;
      }
    }
  }

  Model model_;
  T p_[kP > 0 ? kP : 1];
  T p_hat_[kP > 0 ? kP : 1];  // the controller's parameters (a controlled run)
  int i_;
  int slot_;
  Phase phase_;
  Status status_;
  T t_;
  State x_;
  State k_;
  T t_req_;  // the evaluation wanted next: f(t_req_, y_)
  State y_;
  int stage_;  // the trial step's evaluations taken so far
  Rk4Stages<T, kD> rk4_;
  Dopri5Stages<T, kD> dopri5_;
  bool mass_failed_;
  int next_sample_;
  T h_;      // step size for the next trial step
  T h_try_;  // the proposed trial step
  T t_target_;
  bool landing_;
  bool last_rejected_;
  T probe_h0_, probe_d1_;  // the starting-step heuristic between its two halves
  int event_after_;        // the event that reset the state at t_ (its next step scanned), or -1
  T conditioning_;         // of the constraint Jacobian at the last accepted state
  std::int64_t steps_;
  std::int64_t rejected_;
};

}  // namespace ukes
