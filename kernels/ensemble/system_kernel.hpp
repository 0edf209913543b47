// Integrates one system of a batch from t0 to t_end: the unit of work every backend launches
// (a loop iteration on a CPU thread, a thread on the GPU). Everything here is __host__ __device__.
//
// Invariant of the main loop: (t, x) is an accepted state, k = f(t, x), and `eval` holds that
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
  static constexpr int kMp = Model::kPositionRows;
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

  // x' = (qd, qdd); remembers the last evaluation for observation, and whether some evaluation
  // at a finite state found M not positive definite (why a trial step failed).
  struct Rhs {
    const T* p;
    DynamicsSettings<T> settings;
    Observation last;
    bool mass_failed = false;
    UKES_HD void operator()(T t, const State& x, State& dx) {
      Vec<T, kN> q, qd;
      split(x, q, qd);
      const DynamicsEval<Model, T> e = evaluate_dynamics<Model, T>(q, qd, t, p, settings);
      last = {e.form.value, e.form.rate,    e.Qc,     e.inconsistency,
              e.rhs_norm,   e.conditioning, e.mass_ok};
      if (!e.mass_ok && all_finite(x)) mass_failed = true;
      for (int j = 0; j < kN; ++j) {
        dx[j] = qd[j];
        dx[kN + j] = e.mass_ok ? e.qdd[j] : T(NAN);
      }
    }
  };

  UKES_HD static void run(const BatchInputView& in, const RunSettings<T>& s, int i,
                          const BatchOutputView& out) {
    T p[kP > 0 ? kP : 1];
    for (int k = 0; k < kP; ++k) p[k] = T(in.params[k * in.count + i]);
    Vec<T, kN> q, qd;
    for (int j = 0; j < kN; ++j) {
      q[j] = T(in.q0[j * in.count + i]);
      qd[j] = T(in.qd0[j * in.count + i]);
    }
    SystemKernel kernel(s, p, i, out);
    kernel.integrate(q, qd);
  }

 private:
  UKES_HD SystemKernel(const RunSettings<T>& s, const T* p, int i, const BatchOutputView& out)
      : s_(s), p_(p), i_(i), out_(out) {
    slot_ = out.traj_slot ? out.traj_slot[i] : -1;
    for (int r = 0; r < kR; ++r) residual_max_[r] = T(0);
    projection_.tol = s.projection_tol > T(0) ? s.projection_tol : T(1000) * Epsilon<T>::value;
    projection_.max_iterations = 10;
    projection_.rank_rtol =
        s.dynamics.rank_rtol < T(0) ? default_rank_rtol<T>(kM, kN) : s.dynamics.rank_rtol;
    inconsistency_tol_ =
        s.inconsistency_tol > T(0) ? s.inconsistency_tol : default_inconsistency_tol<T>();
  }

  UKES_HD static bool all_finite(const State& x) {
    for (int j = 0; j < kD; ++j)
      if (!isfinite(x[j])) return false;
    return true;
  }

  // Why integration cannot go on. Rank loss first: when the constraint Jacobian is within
  // eps^(1/4) of losing rank (sin q2 -> 0 for a SCARA arm asked to reach out of range), the
  // accelerations that keep the rows diverge and the step size collapses; the cause to report is
  // that the rows cannot be met, not the symptom.
  UKES_HD Status failure_status(const Rhs& f, bool nonfinite) const {
    if (f.mass_failed) return Status::kSingularMass;
    if (conditioning_ < pow(Epsilon<T>::value, T(0.25))) return Status::kInconsistent;
    return nonfinite ? Status::kNonfinite : Status::kStepUnderflow;
  }

  UKES_HD static void split(const State& x, Vec<T, kN>& q, Vec<T, kN>& qd) {
    for (int j = 0; j < kN; ++j) {
      q[j] = x[j];
      qd[j] = x[kN + j];
    }
  }

  UKES_HD T sample_time(int k) const {
    if (k >= s_.samples - 1) return s_.t_end;
    return s_.t0 + (s_.t_end - s_.t0) * T(k) / T(s_.samples - 1);
  }

  UKES_HD void integrate(Vec<T, kN> q, Vec<T, kN> qd) {
    T t = s_.t0;
    if (s_.assemble) {
      ProjectionSettings<T> assembly = projection_;
      assembly.max_iterations = 50;
      if (!project_positions<Model, T>(q, t, p_, assembly) ||
          !project_velocities<Model, T>(q, qd, t, p_, assembly)) {
        status_ = Status::kInconsistent;
      }
    }
    State x, k;
    for (int j = 0; j < kN; ++j) {
      x[j] = q[j];
      x[kN + j] = qd[j];
    }
    Rhs f{p_, s_.dynamics, {}};
    f(t, x, k);
    if (status_ == Status::kOk) observe(f, x, 0);
    int next_sample = 1;

    const T span = s_.t_end - s_.t0;
    const T h_min = T(10) * Epsilon<T>::value * max_of(abs(s_.t_end), abs(span));
    T h = s_.dt;
    if (s_.method == Method::kDopri5 && !(h > T(0))) h = initial_step(f, t, x, k);
    if (s_.method == Method::kRk4 && !(h > T(0))) h = span / T(1000);
    bool last_rejected = false;
    bool last_nonfinite = false;

    while (status_ == Status::kOk && next_sample < s_.samples) {
      if (steps_ + rejected_ >= s_.max_steps) {
        status_ = Status::kMaxSteps;
        break;
      }
      const T t_target = sample_time(next_sample);
      // Land exactly on the next sample time when within a hair of it (avoids sliver steps).
      const bool landing = t + T(1.0001) * h >= t_target;
      const T h_try = landing ? t_target - t : h;
      State y, k_new;
      if (s_.method == Method::kRk4) {
        y = rk4_step(f, t, x, k, h_try);
        f(landing ? t_target : t + h_try, y, k_new);
      } else {
        const T err = dopri5_step(f, t, x, k, h_try, s_.rtol, s_.atol, y, k_new);
        if (!(err <= T(1))) {
          ++rejected_;
          last_rejected = true;
          last_nonfinite = !isfinite(err);
          h = h_try * dopri5_step_factor(err, T(0.2), T(1));
          if (abs(h) < h_min) status_ = failure_status(f, last_nonfinite);
          continue;
        }
        const T grow = dopri5_step_factor(err, T(0.2), last_rejected ? T(1) : T(10));
        // A step shortened to land on a sample says little about the next one: keep the longer.
        h = landing ? max_of(h, h_try * grow) : h_try * grow;
        last_rejected = false;
      }
      t = landing ? t_target : t + h_try;
      x = y;
      k = k_new;
      ++steps_;
      if (s_.projection) {
        Vec<T, kN> qp, qdp;
        split(x, qp, qdp);
        if (project_positions<Model, T>(qp, t, p_, projection_)) {
          project_velocities<Model, T>(qp, qdp, t, p_, projection_);
        }
        for (int j = 0; j < kN; ++j) {
          x[j] = qp[j];
          x[kN + j] = qdp[j];
        }
        f(t, x, k);
      }
      observe(f, x, landing ? next_sample : -1);
      f.mass_failed = false;
      if (landing) ++next_sample;
    }
    finish(t, x, next_sample);
  }

  // Hairer's starting-step heuristic (HNW I, sec. II.4).
  UKES_HD T initial_step(Rhs& f, T t, const State& x, const State& k) {
    T d0 = T(0), d1 = T(0);
    for (int j = 0; j < kD; ++j) {
      const T sc = s_.atol + s_.rtol * abs(x[j]);
      d0 += square(x[j] / sc);
      d1 += square(k[j] / sc);
    }
    d0 = sqrt(d0 / T(kD));
    d1 = sqrt(d1 / T(kD));
    T h0 = (d0 < T(1e-5) || d1 < T(1e-5)) ? T(1e-6) : T(0.01) * d0 / d1;
    h0 = min_of(h0, s_.t_end - t);
    State y, k1;
    for (int j = 0; j < kD; ++j) y[j] = x[j] + h0 * k[j];
    const Observation keep = f.last;
    f(t + h0, y, k1);
    f.last = keep;
    T d2 = T(0);
    for (int j = 0; j < kD; ++j) {
      const T sc = s_.atol + s_.rtol * abs(x[j]);
      d2 += square((k1[j] - k[j]) / sc);
    }
    d2 = sqrt(d2 / T(kD)) / h0;
    const T dm = max_of(d1, d2);
    const T h1 = !(dm > T(1e-15)) ? max_of(T(1e-6), h0 * T(1e-3)) : pow(T(0.01) / dm, T(0.2));
    return min_of(T(100) * h0, h1);
  }

  UKES_HD void observe(const Rhs& f, const State& x, int sample) {
    const Observation& e = f.last;
    if (!all_finite(x)) {
      status_ = failure_status(f, true);
    } else if (!e.mass_ok) {
      status_ = Status::kSingularMass;
    } else {
      conditioning_ = e.conditioning;
    }
    for (int r = 0; r < kMp; ++r) {
      residual_max_[r] = max_of(residual_max_[r], abs(e.value[r]));
      residual_max_[kMp + r] = max_of(residual_max_[kMp + r], abs(e.rate[r]));
    }
    for (int r = kMp; r < kM; ++r) {
      residual_max_[kMp + r] = max_of(residual_max_[kMp + r], abs(e.value[r]));
    }
    force_max_ = max_of(force_max_, norm2(e.Qc));
    inconsistency_max_ = max_of(inconsistency_max_, e.inconsistency);
    if (e.inconsistency > inconsistency_tol_ * (T(1) + e.rhs_norm)) status_ = Status::kInconsistent;
    if (sample >= 0 && slot_ >= 0) record(e, x, sample);
  }

  UKES_HD void record(const Observation& e, const State& x, int sample) {
    const long base = (static_cast<long>(slot_) * s_.samples + sample);
    for (int j = 0; j < kN; ++j) {
      out_.traj_q[base * kN + j] = double(x[j]);
      out_.traj_qd[base * kN + j] = double(x[kN + j]);
      out_.traj_force[base * kN + j] = double(e.Qc[j]);
    }
    for (int r = 0; r < kMp; ++r) {
      out_.traj_residual[base * kR + r] = double(e.value[r]);
      out_.traj_residual[base * kR + kMp + r] = double(e.rate[r]);
    }
    for (int r = kMp; r < kM; ++r) {
      out_.traj_residual[base * kR + kMp + r] = double(e.value[r]);
    }
  }

  UKES_HD void finish(T t, const State& x, int next_sample) {
    const int c = out_.count;
    out_.status[i_] = static_cast<int>(status_);
    out_.t[i_] = double(t);
    for (int j = 0; j < kN; ++j) {
      out_.q[j * c + i_] = double(x[j]);
      out_.qd[j * c + i_] = double(x[kN + j]);
    }
    for (int r = 0; r < kR; ++r) out_.residual_max[r * c + i_] = double(residual_max_[r]);
    out_.force_max[i_] = double(force_max_);
    out_.inconsistency_max[i_] = double(inconsistency_max_);
    out_.steps[i_] = steps_;
    out_.rejected[i_] = rejected_;
    // Samples a failed system never reached are NaN, never stale memory.
    if (slot_ >= 0) {
      for (int k = next_sample; k < s_.samples; ++k) {
        const long base = static_cast<long>(slot_) * s_.samples + k;
        for (int j = 0; j < kN; ++j) {
          out_.traj_q[base * kN + j] = NAN;
          out_.traj_qd[base * kN + j] = NAN;
          out_.traj_force[base * kN + j] = NAN;
        }
        for (int r = 0; r < kR; ++r) out_.traj_residual[base * kR + r] = NAN;
      }
    }
  }

  const RunSettings<T>& s_;
  const T* p_;
  int i_;
  const BatchOutputView& out_;
  int slot_ = -1;
  Status status_ = Status::kOk;
  T residual_max_[kR > 0 ? kR : 1];
  T force_max_ = T(0);
  T inconsistency_max_ = T(0);
  T inconsistency_tol_;
  T conditioning_ = T(1);  // of the constraint Jacobian at the last accepted state
  ProjectionSettings<T> projection_{};
  std::int64_t steps_ = 0;
  std::int64_t rejected_ = 0;
};

}  // namespace ukes
