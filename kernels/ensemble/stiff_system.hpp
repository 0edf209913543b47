// Integrates one system with the stiff method, RODAS4 (kernels/integrators/rosenbrock.hpp): the
// CPU backend's loop and the GPU's fused kernel for Method::kRosenbrock (FusedSystem,
// kernels/backend/device/system_kernels.hpp, which the CUDA module compiles for the model at run
// time). Everything here is __host__ __device__.
//
// It drives a SystemKernel (kernels/ensemble/system_kernel.hpp) and keeps that class's loading
// and assembly, sample landing, step acceptance, projection, statistics and results, so that a
// stiff run's outputs mean what every other run's mean. What it adds per step: the Jacobian of
// the right-hand side at the accepted state (kernels/uk/dynamics_jacobian.hpp), reused after a
// rejection; the factorization of W for the trial step size; the six stages.
#pragma once

#include "kernels/ensemble/system_kernel.hpp"
#include "kernels/integrators/rosenbrock.hpp"
#include "kernels/uk/dynamics_jacobian.hpp"

namespace ukes {

template <class Model, class T>
class StiffSystem {
 public:
  using Kernel = SystemKernel<Model, T>;
  using State = typename Kernel::State;
  using Observation = typename Kernel::Observation;
  static constexpr int kN = Model::kN;
  static constexpr int kP = Kernel::kP;

  // kGeneral false: s.projection and s.control.active are false and s.events is empty; kEvents:
  // the kernel locates s.events (as for SystemKernel::run).
  template <bool kGeneral = true, bool kEvents = false>
  UKES_HD static void run(const BatchInputView& in, const RunSettings<T>& s, int i,
                          const BatchOutputView& out) {
    static_assert(kGeneral || !kEvents, "events are the general kernel's");
    StiffSystem sys;
    sys.integrate<kGeneral, kEvents>(in, s, i, out);
  }

 private:
  template <bool kGeneral, bool kEvents>
  UKES_HD void integrate(const BatchInputView& in, const RunSettings<T>& s, int i,
                         const BatchOutputView& out) {
    Kernel& k = k_;
    k.begin(in, s, i, out, kEvents);
    n_ = model_shape(k.model_).n;
    const Observation initial = evaluate<kGeneral>(s, k.t_, k.x_, k.k_);
    k.start(s, out, initial);
    if (!(k.h_ > T(0)) && k.status_ == Status::kOk) {  // Hairer's starting step, as DOPRI5's
      k.begin_initial_step(s);
      State k1;
      evaluate<kGeneral>(s, k.t_req_, k.y_, k1);
      k.h_ = k.finish_initial_step(s, k1);
    }
    bool jacobian_current = false;
    while (k.status_ == Status::kOk && k.next_sample_ < s.samples) {
      if (k.steps_ + k.rejected_ >= s.max_steps) {
        k.status_ = Status::kMaxSteps;
        break;
      }
      if ((k.steps_ + k.rejected_) % kStopPollInterval == 0 && stop_requested(s.cancel)) {
        k.status_ = Status::kCancelled;
        break;
      }
      k.t_target_ = Kernel::sample_time(s, k.next_sample_);
      k.landing_ = k.t_ + T(1.0001) * k.h_ >= k.t_target_;
      k.h_try_ = k.landing_ ? k.t_target_ - k.t_ : k.h_;
      bool factored = jacobian_current || jacobian<kGeneral>(s);
      jacobian_current = factored;
      factored = factored && w_.factor(jacobian_, k.h_try_, n_);
      const T err = factored ? trial_step<kGeneral>(s) : T(NAN);
      if (!(err <= T(1))) {
        reject(s, err);
        continue;
      }
      const T grow = step_factor<3>(err, T(0.2), k.last_rejected_ ? T(1) : T(6));
      // A step shortened to land on a sample says little about the next one: keep the longer.
      k.h_ = k.landing_ ? max_of(k.h_, k.h_try_ * grow) : k.h_try_ * grow;
      k.last_rejected_ = false;
      // The acceptance itself is SystemKernel's (which controls DOPRI5's steps alone, so for this
      // method it only accepts): the new state, events, the step projection, sampling and
      // statistics.
      State k_new;
      const Observation e = evaluate<kGeneral>(s, k.step_end_time(), k.y_, k_new);
      k.step_result(kGeneral, kEvents, s, out, k_new, T(0), e);
      if (k.phase_ == Kernel::Phase::kProjectedEval) {
        const Observation projected = evaluate<kGeneral>(s, k.t_, k.x_, k.k_);
        k.complete_step(s, out, projected);
      }
      jacobian_current = false;
    }
    k.finish(s, out);
  }

  // f(t, y) into dx, with its observation; notes a mass that failed at a finite state.
  template <bool kGeneral>
  UKES_HD Observation evaluate(const RunSettings<T>& s, T t, const State& y, State& dx) {
    k_.t_req_ = t;
    Vec<T, kN> q, qd;
    Kernel::split(y, q, qd);
    const DynamicsEval<Model, T> e = k_.template evaluate<kGeneral>(s, q, qd);
    Kernel::derivative_of(y, e, dx);
    if (!e.mass_ok && Kernel::all_finite(y)) k_.mass_failed_ = true;
    return Kernel::observation_of(e);
  }

  // The Jacobian at the accepted state (t, x), the plant's under its controller in a controlled
  // run, as SystemKernel::evaluate has it.
  template <bool kGeneral>
  UKES_HD bool jacobian(const RunSettings<T>& s) {
    using D = Dual<T>;
    const Kernel& k = k_;
    D p[kP > 0 ? kP : 1], p_hat[kP > 0 ? kP : 1];
    for (int j = 0; j < kP; ++j) {
      p[j] = D(k.p_[j], T(0));
      p_hat[j] = D(s.control.active ? k.p_hat_[j] : T(0), T(0));
    }
    const DynamicsSettings<D> dynamics = settings_in<D>(s.dynamics);
    const ControlSettings<D> control = settings_in<D>(s.control);
    const auto evaluate = [&](const Vec<D, kN>& q, const Vec<D, kN>& qd, D t) {
      if constexpr (kGeneral) {
        if (s.control.active)
          return evaluate_controlled_dynamics<Model, D>(k.model_, q, qd, t, p, p_hat, dynamics,
                                                        control);
      }
      return evaluate_dynamics<Model, D>(k.model_, q, qd, t, p, dynamics);
    };
    Vec<T, kN> q, qd;
    Kernel::split(k.x_, q, qd);
    return second_order_jacobian(evaluate, q, qd, k.t_, n_, jacobian_);
  }

  // The trial step from the accepted state to step_end_time(): its new state in the kernel's y_,
  // and the error norm.
  template <bool kGeneral>
  UKES_HD T trial_step(const RunSettings<T>& s) {
    Kernel& k = k_;
    const auto f = [&](T t, const State& y, State& dx) { evaluate<kGeneral>(s, t, y, dx); };
    return rodas4_step(f, k.t_, k.x_, k.k_, jacobian_, w_, k.h_try_, s.rtol, s.atol, k.y_, n_,
                       k.state_size());
  }

  // A rejected trial step: shorter, or the integration's end when the step size underflows.
  UKES_HD void reject(const RunSettings<T>& s, T err) {
    Kernel& k = k_;
    ++k.rejected_;
    k.last_rejected_ = true;
    k.h_ = k.h_try_ * step_factor<3>(err, T(0.2), T(1));
    if (abs(k.h_) < Kernel::h_min(s)) k.status_ = k.failure_status(!isfinite(err));
  }

  Kernel k_;
  int n_;  // the model's own coordinates (a bucket's, without its padding)
  SecondOrderJacobian<T, kN> jacobian_;
  SecondOrderW<T, kN> w_;
};

}  // namespace ukes
