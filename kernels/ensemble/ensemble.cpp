#include "kernels/ensemble/ensemble.hpp"

#include <chrono>
#include <cmath>
#include <stdexcept>

#include "kernels/backend/cpu/cpu_backend.hpp"
#include "kernels/ensemble/to_run_settings.hpp"
#include "kernels/models/catalogue.hpp"
#include "kernels/models/user/buckets.hpp"

namespace ukes {

EnsembleSettings EnsembleSettings::for_model(const ModelInfo& m) {
  EnsembleSettings s;
  s.t_end = m.t_end;
  s.alpha = m.gains.alpha;
  s.beta = m.gains.beta;
  return s;
}

Batch Batch::defaults(const ModelInfo& m, int count) {
  Batch b;
  b.model = &m;
  b.count = count;
  b.params.resize(m.params.size() * static_cast<std::size_t>(count));
  b.q0.resize(static_cast<std::size_t>(m.n) * count);
  b.qd0.resize(static_cast<std::size_t>(m.n) * count);
  for (int i = 0; i < count; ++i) {
    for (std::size_t k = 0; k < m.params.size(); ++k)
      b.param(static_cast<int>(k), i) = m.params[k].value;
    for (int j = 0; j < m.n; ++j) {
      b.q(j, i) = m.q0[j];
      b.qd(j, i) = m.qd0[j];
    }
  }
  return b;
}

void BatchResults::allocate(const Batch& batch, int k_samples,
                            const std::vector<std::int32_t>& ids) {
  count = batch.count;
  n = batch.model->n;
  residual_slots = batch.model->residual_slots();
  samples = k_samples;
  const auto c = static_cast<std::size_t>(count);
  status.assign(c, 0);
  t.assign(c, 0.0);
  q.assign(c * n, 0.0);
  qd.assign(c * n, 0.0);
  residual_max.assign(c * residual_slots, 0.0);
  force_max.assign(c, 0.0);
  inconsistency_max.assign(c, 0.0);
  steps.assign(c, 0);
  rejected.assign(c, 0);
  traj_ids = ids;
  traj_slot.assign(c, -1);
  for (std::size_t s = 0; s < ids.size(); ++s) {
    if (ids[s] < 0 || ids[s] >= count) throw std::out_of_range("trajectory id out of range");
    traj_slot[ids[s]] = static_cast<std::int32_t>(s);
  }
  const std::size_t per = ids.size() * static_cast<std::size_t>(samples);
  traj_q.assign(per * n, NAN);
  traj_qd.assign(per * n, NAN);
  traj_residual.assign(per * residual_slots, NAN);
  traj_force.assign(per * n, NAN);
}

BatchOutputView BatchResults::view() {
  BatchOutputView v;
  v.count = count;
  v.status = status.data();
  v.t = t.data();
  v.q = q.data();
  v.qd = qd.data();
  v.residual_max = residual_max.data();
  v.force_max = force_max.data();
  v.inconsistency_max = inconsistency_max.data();
  v.steps = steps.data();
  v.rejected = rejected.data();
  v.traj_slot = traj_slot.data();
  v.traj_q = traj_q.data();
  v.traj_qd = traj_qd.data();
  v.traj_residual = traj_residual.data();
  v.traj_force = traj_force.data();
  return v;
}

const char* status_name(Status s) {
  switch (s) {
    case Status::kOk:
      return "ok";
    case Status::kMaxSteps:
      return "max_steps";
    case Status::kNonfinite:
      return "nonfinite";
    case Status::kStepUnderflow:
      return "step_underflow";
    case Status::kInconsistent:
      return "inconsistent";
    case Status::kSingularMass:
      return "singular_mass";
    case Status::kCancelled:
      return "cancelled";
  }
  return "unknown";
}

std::vector<double> sample_times(const EnsembleSettings& s) {
  std::vector<double> t(static_cast<std::size_t>(s.samples));
  for (int k = 0; k < s.samples; ++k)
    t[k] = k == s.samples - 1 ? s.t_end : s.t0 + (s.t_end - s.t0) * k / (s.samples - 1);
  return t;
}

void run_ensemble_cpu(const Batch& batch, const EnsembleSettings& s, BatchResults& results,
                      const std::vector<std::int32_t>& traj_ids) {
  if (s.samples < 2) throw std::invalid_argument("samples must be at least 2");
  results.allocate(batch, s.samples, traj_ids);
  results.backend = "cpu";
  const auto start = std::chrono::steady_clock::now();
  const auto run = [&]<class M>() {
    if (s.precision == Precision::kFp64) {
      run_batch_cpu<M, double>(batch.view(), to_run_settings<double>(s), results.view(), s.threads);
    } else {
      run_batch_cpu<M, float>(batch.view(), to_run_settings<float>(s), results.view(), s.threads);
    }
  };
  const bool found = batch.model->user ? dispatch_user_bucket(batch.model->user->bucket, run)
                                       : dispatch_model(batch.model->name, run);
  if (!found) throw std::invalid_argument("unknown model: " + batch.model->name);
  results.elapsed_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace ukes
