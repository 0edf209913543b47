#include "kernels/ensemble/ensemble.hpp"

#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/backend/cpu/cpu_backend.hpp"
#include "kernels/ensemble/to_run_settings.hpp"
#include "kernels/models/dispatch.hpp"

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

RecordShape record_shape(const ModelInfo& m) {
  return {m.n, m.residual_slots(), static_cast<int>(m.params.size())};
}

RecordShape Batch::shape() const {
  RecordShape s = record_shape(*model);
  if (!control_params.empty()) s.control_params = s.params;
  return s;
}

BatchInputView Batch::view() const {
  BatchInputView v;
  v.count = count;
  for_each_input([](const FieldInfo&, auto& to, const auto& from) { to = from.data(); }, v, *this);
  v.program = program_of(*model);
  return v;
}

void BatchResults::allocate(const Batch& batch, int k_samples, const std::vector<std::int32_t>& ids,
                            const EventTable& table) {
  count = batch.count;
  n = batch.model->n;
  residual_slots = batch.model->residual_slots();
  samples = k_samples;
  events = table.count;
  event_records = table.records;
  const RecordShape widths = shape();
  const auto c = static_cast<std::size_t>(count);
  for_each_result([&](const FieldInfo& f, auto& v) { v.assign(c * widths(f.width), 0); }, *this);
  traj_ids = ids;
  traj_slot.assign(c, -1);
  for (std::size_t s = 0; s < ids.size(); ++s) {
    if (ids[s] < 0 || ids[s] >= count) throw std::out_of_range("trajectory id out of range");
    traj_slot[ids[s]] = static_cast<std::int32_t>(s);
  }
  const std::size_t per = ids.size() * static_cast<std::size_t>(samples);
  for_each_trajectory([&](const FieldInfo& f, auto& v) { v.assign(per * widths(f.width), NAN); },
                      *this);
}

BatchOutputView BatchResults::view() {
  BatchOutputView v;
  v.count = count;
  for_each_result([](const FieldInfo&, auto& to, auto& from) { to = from.data(); }, v, *this);
  v.traj_slot = traj_slot.data();
  for_each_trajectory([](const FieldInfo&, auto& to, auto& from) { to = from.data(); }, v, *this);
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
    case Status::kTerminated:
      return "terminated";
  }
  return "unknown";
}

std::vector<double> sample_times(const EnsembleSettings& s) {
  std::vector<double> t(static_cast<std::size_t>(s.samples));
  for (int k = 0; k < s.samples; ++k)
    t[k] = k == s.samples - 1 ? s.t_end : s.t0 + (s.t_end - s.t0) * k / (s.samples - 1);
  return t;
}

std::string cpu_lanes_description(const EnsembleSettings& s) {
  const CpuIsa isa = s.cpu_isa.value_or(cpu_isa());
  if (s.precision != Precision::kFp64 || isa == CpuIsa::kScalar || !cpu_supports(isa) ||
      !lanes_take(to_run_settings<double>(s)))
    return {};
  return std::string(cpu_isa_name(isa)) + " lanes of " + std::to_string(cpu_isa_lanes(isa));
}

void run_ensemble_cpu(const Batch& batch, const EnsembleSettings& s, BatchResults& results,
                      const std::vector<std::int32_t>& traj_ids) {
  if (s.samples < 2) throw std::invalid_argument("samples must be at least 2");
  results.allocate(batch, s.samples, traj_ids, s.events);
  results.backend = "cpu";
  const auto start = std::chrono::steady_clock::now();
  const CpuIsa isa = s.cpu_isa.value_or(cpu_isa());
  const auto run = [&]<class M>() {
    if (s.precision == Precision::kFp64) {
      run_batch_cpu<M, double>(batch.view(), to_run_settings<double>(s), results.view(), s.threads,
                               isa);
    } else {
      run_batch_cpu<M, float>(batch.view(), to_run_settings<float>(s), results.view(), s.threads,
                              isa);
    }
  };
  const bool found = dispatch_model_of(*batch.model, run);
  if (!found) throw std::invalid_argument("unknown model: " + batch.model->name);
  results.elapsed_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace ukes
