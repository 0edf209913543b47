#include "service/protocol/result_chunks.hpp"

#include <algorithm>

namespace ukes {

v1::SystemStatus status_to_proto(std::int32_t status) {
  if (status < 0 || status >= kStatusCount) return v1::SYSTEM_STATUS_UNSPECIFIED;
  return static_cast<v1::SystemStatus>(status + 1);
}

std::int32_t status_from_proto(v1::SystemStatus status) {
  const int s = static_cast<int>(status) - 1;
  return s >= 0 && s < kStatusCount ? s : -1;
}

std::vector<v1::SystemSummaries> summary_chunks(const Batch& inputs, const BatchResults& part,
                                                std::int32_t first_id, std::size_t budget) {
  const int n = part.n, slots = part.residual_slots;
  const int params = inputs.count > 0 ? static_cast<int>(inputs.params.size()) / inputs.count : 0;
  // Doubles per system plus varint-coded status and step counts.
  const std::size_t per_system = 8 * static_cast<std::size_t>(5 + 4 * n + slots + params) + 24;
  const int per_chunk = static_cast<int>(std::max<std::size_t>(1, budget / per_system));
  const auto stride = static_cast<std::size_t>(inputs.count);
  std::vector<v1::SystemSummaries> chunks;
  for (int begin = 0; begin < part.count; begin += per_chunk) {
    const int end = std::min(part.count, begin + per_chunk);
    v1::SystemSummaries& c = chunks.emplace_back();
    c.set_first_id(first_id + begin);
    c.set_count(end - begin);
    for (int i = begin; i < end; ++i) {
      c.add_status(status_to_proto(part.status[i]));
      c.add_t(part.t[i]);
      for (int j = 0; j < n; ++j) c.add_q(part.q_at(j, i));
      for (int j = 0; j < n; ++j) c.add_qd(part.qd_at(j, i));
      for (int r = 0; r < slots; ++r) c.add_residual_max(part.residual_at(r, i));
      c.add_force_max(part.force_max[i]);
      c.add_inconsistency_max(part.inconsistency_max[i]);
      c.add_steps(part.steps[i]);
      c.add_rejected(part.rejected[i]);
      for (int k = 0; k < params; ++k) c.add_params(inputs.params[k * stride + i]);
      for (int j = 0; j < n; ++j) c.add_q0(inputs.q0[j * stride + i]);
      for (int j = 0; j < n; ++j) c.add_qd0(inputs.qd0[j * stride + i]);
    }
  }
  return chunks;
}

namespace {

// Appends samples [k0, k1) of `slot` for one field stored [slot][sample][component].
void append_samples(const std::vector<double>& src, int slot, int samples, int width, int k0,
                    int k1, google::protobuf::RepeatedField<double>* dst) {
  const auto base = (static_cast<std::size_t>(slot) * samples + k0) * width;
  const auto len = static_cast<std::size_t>(k1 - k0) * width;
  dst->Add(src.begin() + static_cast<std::ptrdiff_t>(base),
           src.begin() + static_cast<std::ptrdiff_t>(base + len));
}

}  // namespace

std::vector<v1::TrajectoryChunk> trajectory_chunks(const BatchResults& part, std::int32_t first_id,
                                                   const OutputSpec& output, std::size_t budget) {
  const int n = part.n, slots = part.residual_slots, K = part.samples;
  const std::size_t width = (output.q ? n : 0) + (output.qd ? n : 0) + (output.force ? n : 0) +
                            (output.residual ? slots : 0);
  const std::size_t sample_bytes = std::max<std::size_t>(8, 8 * width);
  const auto fill = [&](v1::TrajectoryChunk& c, int slot, int k0, int k1) {
    if (output.q) append_samples(part.traj_q, slot, K, n, k0, k1, c.mutable_q());
    if (output.qd) append_samples(part.traj_qd, slot, K, n, k0, k1, c.mutable_qd());
    if (output.force) append_samples(part.traj_force, slot, K, n, k0, k1, c.mutable_force());
    if (output.residual)
      append_samples(part.traj_residual, slot, K, slots, k0, k1, c.mutable_residual());
  };
  std::vector<v1::TrajectoryChunk> chunks;
  const int recorded = static_cast<int>(part.traj_ids.size());
  const std::size_t system_bytes = sample_bytes * static_cast<std::size_t>(K);
  if (system_bytes <= budget) {
    // Whole systems, as many per chunk as fit.
    const int per_chunk = static_cast<int>(budget / system_bytes);
    for (int s0 = 0; s0 < recorded; s0 += per_chunk) {
      v1::TrajectoryChunk& c = chunks.emplace_back();
      c.set_sample_begin(0);
      c.set_sample_count(K);
      for (int s = s0; s < std::min(recorded, s0 + per_chunk); ++s) {
        c.add_system_ids(first_id + part.traj_ids[s]);
        fill(c, s, 0, K);
      }
    }
    return chunks;
  }
  // One system per chunk, cut by samples.
  const int per_chunk = static_cast<int>(std::max<std::size_t>(1, budget / sample_bytes));
  for (int s = 0; s < recorded; ++s) {
    for (int k0 = 0; k0 < K; k0 += per_chunk) {
      const int k1 = std::min(K, k0 + per_chunk);
      v1::TrajectoryChunk& c = chunks.emplace_back();
      c.add_system_ids(first_id + part.traj_ids[s]);
      c.set_sample_begin(k0);
      c.set_sample_count(k1 - k0);
      fill(c, s, k0, k1);
    }
  }
  return chunks;
}

namespace {

void summary_to_proto(const Summary& s, v1::Summary* out) {
  out->set_count(s.count);
  out->set_min(s.min);
  out->set_max(s.max);
  out->set_mean(s.mean);
  out->set_std(s.std);
  out->set_p50(s.p50);
  out->set_p95(s.p95);
  out->set_p99(s.p99);
}

Summary summary_from_proto(const v1::Summary& s) {
  return {s.count(), s.min(), s.max(), s.mean(), s.std(), s.p50(), s.p95(), s.p99()};
}

}  // namespace

v1::Progress progress_after(const SliceDone& slice, int total) {
  v1::Progress p;
  const double elapsed = slice.elapsed_s;
  p.set_systems_done(slice.systems_done);
  p.set_systems_total(total);
  p.set_steps_done(slice.steps_done);
  p.set_elapsed_s(elapsed);
  p.set_system_steps_per_s(elapsed > 0 ? static_cast<double>(slice.steps_done) / elapsed : 0.0);
  p.set_eta_s(slice.systems_done > 0 ? elapsed * (total - slice.systems_done) / slice.systems_done
                                     : -1.0);
  return p;
}

void statistics_to_proto(const EnsembleStatistics& s, v1::EnsembleStatistics* out) {
  out->set_count(s.count);
  out->set_ok(s.ok);
  out->set_failed(s.failed);
  for (int k = 0; k < kStatusCount; ++k)
    (*out->mutable_by_status())[status_name(static_cast<Status>(k))] =
        s.by_status[static_cast<std::size_t>(k)];
  for (const auto& x : s.q) summary_to_proto(x, out->add_q());
  for (const auto& x : s.qd) summary_to_proto(x, out->add_qd());
  for (const auto& x : s.residual) summary_to_proto(x, out->add_residual_max());
  summary_to_proto(s.force_max, out->mutable_force_max());
  summary_to_proto(s.steps, out->mutable_steps());
}

EnsembleStatistics statistics_from_proto(const v1::EnsembleStatistics& s) {
  EnsembleStatistics out;
  out.count = s.count();
  out.ok = s.ok();
  out.failed = s.failed();
  for (int k = 0; k < kStatusCount; ++k) {
    const auto it = s.by_status().find(status_name(static_cast<Status>(k)));
    out.by_status[static_cast<std::size_t>(k)] = it == s.by_status().end() ? 0 : it->second;
  }
  for (const auto& x : s.q()) out.q.push_back(summary_from_proto(x));
  for (const auto& x : s.qd()) out.qd.push_back(summary_from_proto(x));
  for (const auto& x : s.residual_max()) out.residual.push_back(summary_from_proto(x));
  out.force_max = summary_from_proto(s.force_max());
  out.steps = summary_from_proto(s.steps());
  return out;
}

}  // namespace ukes
