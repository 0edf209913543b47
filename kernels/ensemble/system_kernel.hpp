// Integrates one system of a batch from t0 to t_end: the unit of work every backend launches
// (a loop iteration on a CPU thread, a thread on the GPU). Everything here is __host__ __device__.
//
// The integration is a resumable per-system state (trivially copyable, so it can also live in
// device memory between kernel launches) whose control logic exists once: begin() loads and
// assembles the system; a phase other than kStep wants one evaluation f(request(y)) handed back
// through take(); in kStep the caller proposes a trial step, evaluates its stages and hands the
// outcome to step_result(). run() is the fused path: that loop with the right-hand side inline.
// The staged path (kernels/staged/) drives the same state one evaluation per kernel launch.
//
// Invariant between steps: (t, x) is an accepted state, k = f(t, x), and last_ holds that
// evaluation's diagnostics (constraint values, constraint force, inconsistency). Statistics are
// maxima over all accepted states, the initial one included. Steps end exactly on the K sample
// times, so results do not depend on which systems record trajectories.
#pragma once

#include "kernels/ensemble/run_settings.hpp"
#include "kernels/integrators/dopri5.hpp"
#include "kernels/integrators/projection.hpp"
#include "kernels/integrators/rk4.hpp"

namespace ukes {

template <class Model, class T>
class SystemKernel {
 public:
  static constexpr int kN = Model::kN;
  static constexpr int kD = 2 * kN;  // first-order state x = (q, qd)
  static constexpr int kP = kParamCount<Model>;
  static constexpr int kR = kResidualSlots<Model>;
  using State = Vec<T, kD>;
  static constexpr int kM = kRows<Model>;

  // What statistics and trajectories need from an evaluation: not A and b, so that a stage's
  // matrices die with it instead of occupying registers for the whole step.
  struct Observation {
    Vec<T, kM> value;  // phi, psi
    Vec<T, kM> rate;   // phid
    Vec<T, kN> Qc;
    T inconsistency;
    T rhs_norm;
    T conditioning;
    bool mass_ok;
  };

  // kInitialEval: f(t0, x0); kStepProbe: the starting-step heuristic's trial evaluation;
  // kStep: the caller takes a trial step; kProjectedEval: f at a state just projected; kDone.
  enum class Phase : int { kInitialEval, kStepProbe, kStep, kProjectedEval, kDone };

  static UKES_HD Observation observation_of(const DynamicsEval<Model, T>& e) {
    return {e.form.value, e.form.rate,    e.Qc,     e.inconsistency,
            e.rhs_norm,   e.conditioning, e.mass_ok};
  }

  // x' = (qd, qdd); NaN accelerations when M was not positive definite.
  static UKES_HD void derivative_of(const State& x, const DynamicsEval<Model, T>& e, State& dx) {
    for (int j = 0; j < kN; ++j) {
      dx[j] = x[kN + j];
      dx[kN + j] = e.mass_ok ? e.qdd[j] : T(NAN);
    }
  }

  // The fused right-hand side: evaluates x' and notes the evaluation into the system.
  struct Rhs {
    SystemKernel& sys;
    const DynamicsSettings<T>& settings;
    UKES_HD void operator()(T t, const State& x, State& dx) {
      Vec<T, kN> q, qd;
      split(x, q, qd);
      const DynamicsEval<Model, T> e =
          evaluate_dynamics<Model, T>(sys.model_, q, qd, t, sys.p_, settings);
      sys.note(observation_of(e), x);
      derivative_of(x, e, dx);
    }
  };

  UKES_HD static void run(const BatchInputView& in, const RunSettings<T>& s, int i,
                          const BatchOutputView& out) {
    SystemKernel sys;
    sys.begin(in, s, i, out);
    Rhs f{sys, s.dynamics};
    while (sys.phase() != Phase::kDone) {
      if (sys.phase() != Phase::kStep) {
        State y, dx;
        const T t = sys.request(y);
        f(t, y, dx);
        sys.take(s, out, dx);
      } else if (sys.propose(s, out)) {
        State y, k_new;
        T err = T(0);
        if (s.method == Method::kRk4) {
          y = rk4_step(f, sys.t(), sys.x(), sys.k(), sys.h_try());
          f(sys.step_end_time(), y, k_new);
        } else {
          err = dopri5_step(f, sys.t(), sys.x(), sys.k(), sys.h_try(), s.rtol, s.atol, y, k_new,
                            sys.state_size());
        }
        sys.step_result(s, out, y, k_new, err);
      }
    }
  }

  // Loads system i, assembles it when asked to; then wants f(t0, x0).
  UKES_HD void begin(const BatchInputView& in, const RunSettings<T>& s, int i,
                     const BatchOutputView& out) {
    model_ = model_for<Model>(in);
    const ModelShape shape = model_shape(model_);
    i_ = i;
    slot_ = out.traj_slot ? out.traj_slot[i] : -1;
    phase_ = Phase::kInitialEval;
    status_ = Status::kOk;
    for (int r = 0; r < kR; ++r) residual_max_[r] = T(0);
    force_max_ = T(0);
    inconsistency_max_ = T(0);
    conditioning_ = T(1);
    steps_ = 0;
    rejected_ = 0;
    mass_failed_ = false;
    last_rejected_ = false;
    projection_.tol = s.projection_tol > T(0) ? s.projection_tol : T(1000) * Epsilon<T>::value;
    projection_.max_iterations = 10;
    projection_.rank_rtol = rank_rtol_of(s.dynamics, model_);
    inconsistency_tol_ =
        s.inconsistency_tol > T(0) ? s.inconsistency_tol : default_inconsistency_tol<T>();

    // A bucket model's padding (parameters, coordinates past its own) reads as zero.
    for (int k = 0; k < kP; ++k) p_[k] = k < shape.params ? T(in.params[k * in.count + i]) : T(0);
    derive_parameters(model_, p_);
    Vec<T, kN> q, qd;
    for (int j = 0; j < kN; ++j) {
      q[j] = j < shape.n ? T(in.q0[j * in.count + i]) : T(0);
      qd[j] = j < shape.n ? T(in.qd0[j * in.count + i]) : T(0);
    }
    t_ = s.t0;
    if (s.assemble) {
      ProjectionSettings<T> assembly = projection_;
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
  }

  UKES_HD Phase phase() const { return phase_; }
  UKES_HD const Model& model() const { return model_; }
  // Components of the first-order state that the model has (kD but for a bucket's padding):
  // the error norms average over these alone, as they would for a model of exactly this size.
  UKES_HD int state_size() const { return 2 * model_shape(model_).n; }
  UKES_HD const T* params() const { return p_; }
  UKES_HD T t() const { return t_; }
  UKES_HD const State& x() const { return x_; }
  UKES_HD const State& k() const { return k_; }
  UKES_HD T h_try() const { return h_try_; }
  // Where the trial step ends: exactly on the sample time when landing.
  UKES_HD T step_end_time() const { return landing_ ? t_target_ : t_ + h_try_; }

  // The evaluation a phase other than kStep wants: fills y, returns the time.
  UKES_HD T request(State& y) const {
    if (phase_ == Phase::kStepProbe) {
      for (int j = 0; j < kD; ++j) y[j] = x_[j] + probe_h0_ * k_[j];
      return t_ + probe_h0_;
    }
    y = x_;
    return t_;
  }

  // Records what the control logic keeps from every evaluation f(., x): its observation (except
  // the starting-step probe's, which is no state of the trajectory) and whether some evaluation
  // at a finite state found M not positive definite (why a trial step failed).
  UKES_HD void note(const Observation& e, const State& x) {
    if (phase_ != Phase::kStepProbe) last_ = e;
    if (!e.mass_ok && all_finite(x)) mass_failed_ = true;
  }

  // Consumes the evaluation request() asked for (noted already): dx = f(request).
  UKES_HD void take(const RunSettings<T>& s, const BatchOutputView& out, const State& dx) {
    if (phase_ == Phase::kInitialEval) {
      k_ = dx;
      start(s, out);
    } else if (phase_ == Phase::kStepProbe) {
      h_ = finish_initial_step(s, dx);
      phase_ = Phase::kStep;
    } else if (phase_ == Phase::kProjectedEval) {
      k_ = dx;
      complete_step(s, out);
    }
  }

  // kStep: decides the next trial step (h_try(), step_end_time()); false when the integration
  // has ended (all samples reached, a failure, or the step budget), its results written.
  UKES_HD bool propose(const RunSettings<T>& s, const BatchOutputView& out) {
    if (!(status_ == Status::kOk && next_sample_ < s.samples)) {
      finish(s, out);
      return false;
    }
    if (steps_ + rejected_ >= s.max_steps) {
      status_ = Status::kMaxSteps;
      finish(s, out);
      return false;
    }
    if ((steps_ + rejected_) % kStopPollInterval == 0 && stop_requested(s.cancel)) {
      status_ = Status::kCancelled;
      finish(s, out);
      return false;
    }
    t_target_ = sample_time(s, next_sample_);
    // Land exactly on the next sample time when within a hair of it (avoids sliver steps).
    landing_ = t_ + T(1.0001) * h_ >= t_target_;
    h_try_ = landing_ ? t_target_ - t_ : h_;
    return true;
  }

  // The proposed step's outcome: the new state y, k_new = f(step_end_time(), y) (noted last),
  // and for DOPRI5 the error norm. Accepts or rejects; after a projection wants f at the
  // projected state.
  UKES_HD void step_result(const RunSettings<T>& s, const BatchOutputView& out, const State& y,
                           const State& k_new, T err) {
    if (s.method == Method::kDopri5) {
      if (!(err <= T(1))) {
        ++rejected_;
        last_rejected_ = true;
        const bool nonfinite = !isfinite(err);
        h_ = h_try_ * dopri5_step_factor(err, T(0.2), T(1));
        if (abs(h_) < h_min_) status_ = failure_status(nonfinite);
        return;
      }
      const T grow = dopri5_step_factor(err, T(0.2), last_rejected_ ? T(1) : T(10));
      // A step shortened to land on a sample says little about the next one: keep the longer.
      h_ = landing_ ? max_of(h_, h_try_ * grow) : h_try_ * grow;
      last_rejected_ = false;
    }
    t_ = landing_ ? t_target_ : t_ + h_try_;
    x_ = y;
    k_ = k_new;
    ++steps_;
    if (s.projection) {
      Vec<T, kN> qp, qdp;
      split(x_, qp, qdp);
      if (project_positions<Model, T>(model_, qp, t_, p_, projection_)) {
        project_velocities<Model, T>(model_, qp, qdp, t_, p_, projection_);
      }
      for (int j = 0; j < kN; ++j) {
        x_[j] = qp[j];
        x_[kN + j] = qdp[j];
      }
      phase_ = Phase::kProjectedEval;
      return;
    }
    complete_step(s, out);
  }

  UKES_HD static void split(const State& x, Vec<T, kN>& q, Vec<T, kN>& qd) {
    for (int j = 0; j < kN; ++j) {
      q[j] = x[j];
      qd[j] = x[kN + j];
    }
  }

 private:
  UKES_HD static bool all_finite(const State& x) {
    for (int j = 0; j < kD; ++j)
      if (!isfinite(x[j])) return false;
    return true;
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

  UKES_HD static T sample_time(const RunSettings<T>& s, int k) {
    if (k >= s.samples - 1) return s.t_end;
    return s.t0 + (s.t_end - s.t0) * T(k) / T(s.samples - 1);
  }

  // After f(t0, x0): observe the initial state, choose the first step size.
  UKES_HD void start(const RunSettings<T>& s, const BatchOutputView& out) {
    if (status_ == Status::kOk) observe(s, out, 0);
    next_sample_ = 1;
    const T span = s.t_end - s.t0;
    h_min_ = T(10) * Epsilon<T>::value * max_of(abs(s.t_end), abs(span));
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

  // An accepted step is complete once k = f(t, x) and last_ describe the new state.
  UKES_HD void complete_step(const RunSettings<T>& s, const BatchOutputView& out) {
    observe(s, out, landing_ ? next_sample_ : -1);
    mass_failed_ = false;
    if (landing_) ++next_sample_;
    phase_ = Phase::kStep;
  }

  UKES_HD void observe(const RunSettings<T>& s, const BatchOutputView& out, int sample) {
    const Observation& e = last_;
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
    for (int r = 0; r < mp; ++r) {
      residual_max_[r] = max_of(residual_max_[r], abs(e.value[r]));
      residual_max_[mp + r] = max_of(residual_max_[mp + r], abs(e.rate[r]));
    }
    for (int r = mp; r < shape.rows(); ++r) {
      residual_max_[mp + r] = max_of(residual_max_[mp + r], abs(e.value[r]));
    }
    force_max_ = max_of(force_max_, norm2(e.Qc));
    inconsistency_max_ = max_of(inconsistency_max_, e.inconsistency);
    if (e.inconsistency > inconsistency_tol_ * (T(1) + e.rhs_norm)) status_ = Status::kInconsistent;
    if (sample >= 0 && slot_ >= 0) record(s, out, sample);
  }

  UKES_HD void record(const RunSettings<T>& s, const BatchOutputView& out, int sample) const {
    const Observation& e = last_;
    const ModelShape shape = model_shape(model_);
    const int n = shape.n, mp = shape.position_rows, slots = shape.residual_slots();
    const long base = (static_cast<long>(slot_) * s.samples + sample);
    for (int j = 0; j < n; ++j) {
      out.traj_q[base * n + j] = double(x_[j]);
      out.traj_qd[base * n + j] = double(x_[kN + j]);
      out.traj_force[base * n + j] = double(e.Qc[j]);
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
    for (int r = 0; r < slots; ++r) out.residual_max[r * c + i_] = double(residual_max_[r]);
    out.force_max[i_] = double(force_max_);
    out.inconsistency_max[i_] = double(inconsistency_max_);
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
        }
        for (int r = 0; r < slots; ++r) out.traj_residual[base * slots + r] = NAN;
      }
    }
  }

  Model model_;
  T p_[kP > 0 ? kP : 1];
  int i_;
  int slot_;
  Phase phase_;
  Status status_;
  T t_;
  State x_;
  State k_;
  Observation last_;  // of the evaluation at the last accepted state (or the last trial stage)
  bool mass_failed_;
  int next_sample_;
  T h_;      // step size for the next trial step
  T h_min_;  // below it the integration has broken down
  T h_try_;  // the proposed trial step
  T t_target_;
  bool landing_;
  bool last_rejected_;
  T probe_h0_, probe_d1_;  // the starting-step heuristic between its two halves
  T residual_max_[kR > 0 ? kR : 1];
  T force_max_;
  T inconsistency_max_;
  T inconsistency_tol_;
  T conditioning_;  // of the constraint Jacobian at the last accepted state
  ProjectionSettings<T> projection_;
  std::int64_t steps_;
  std::int64_t rejected_;
};

}  // namespace ukes
