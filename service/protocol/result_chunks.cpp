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

namespace {

// A value as SystemSummaries carries it: statuses as SystemStatus numbers.
template <Encoding E, class Value>
auto to_wire(Value v) {
  if constexpr (E == Encoding::kStatus) {
    return static_cast<int>(status_to_proto(v));
  } else {
    return v;
  }
}

// Appends systems [begin, end) of one field stored [component][stride] as [system][component].
template <Encoding E, class Wire, class Value>
void encode_field(google::protobuf::RepeatedField<Wire>* out, const Value* values,
                  std::size_t stride, int width, int begin, int end) {
  const int old_size = out->size();
  out->Resize(old_size + (end - begin) * width, Wire{});
  Wire* dst = out->mutable_data() + old_size;
  for (int i = begin; i < end; ++i)
    for (int k = 0; k < width; ++k)
      *dst++ = static_cast<Wire>(to_wire<E>(values[static_cast<std::size_t>(k) * stride + i]));
}

// Upper bound of one system's encoded fields: doubles take 8 bytes, integers at most 10 (varint).
std::size_t wire_bytes_per_system(const RecordShape& shape) {
  std::size_t bytes = 0;
  const auto add = [&](const FieldInfo& f) {
    bytes += static_cast<std::size_t>(shape(f.width)) * (f.encoding == Encoding::kReal ? 8 : 10);
  };
  BatchOutputView results;
  BatchInputView inputs;
  for_each_result([&](const FieldInfo& f, auto*) { add(f); }, results);
  for_each_input([&](const FieldInfo& f, auto*) { add(f); }, inputs);
  return bytes;
}

}  // namespace

std::vector<v1::SystemSummaries> summary_chunks(const Batch& inputs, const BatchResults& part,
                                                std::int32_t first_id, std::size_t budget) {
  RecordShape shape = inputs.shape();
  shape.events = part.events;
  shape.event_records = part.event_records;
  const int per_chunk =
      static_cast<int>(std::max<std::size_t>(1, budget / wire_bytes_per_system(shape)));
  const auto stride = static_cast<std::size_t>(part.count);
  std::vector<v1::SystemSummaries> chunks;
  for (int begin = 0; begin < part.count; begin += per_chunk) {
    const int end = std::min(part.count, begin + per_chunk);
    v1::SystemSummaries& c = chunks.emplace_back();
    c.set_first_id(first_id + begin);
    c.set_count(end - begin);
#define UKES_ENCODE_FIELD(name, encoding, width, text)                           \
  encode_field<Encoding::encoding>(c.mutable_##name(), part.name.data(), stride, \
                                   shape(Width::width), begin, end);
    UKES_SYSTEM_RESULTS(UKES_ENCODE_FIELD)
#undef UKES_ENCODE_FIELD
#define UKES_ENCODE_INPUT(name, encoding, width, text)                             \
  encode_field<Encoding::encoding>(c.mutable_##name(), inputs.name.data(), stride, \
                                   shape(Width::width), begin, end);
    UKES_SYSTEM_INPUTS(UKES_ENCODE_INPUT)
#undef UKES_ENCODE_INPUT
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
  const int K = part.samples;
  const RecordShape shape = part.shape();
  std::size_t width = 0;
  for_each_trajectory(
      [&](const FieldInfo& f, const auto&) {
        if (output.wants(f.name)) width += static_cast<std::size_t>(shape(f.width));
      },
      part);
  const std::size_t sample_bytes = std::max<std::size_t>(8, 8 * width);
  const auto fill = [&](v1::TrajectoryChunk& c, int slot, int k0, int k1) {
#define UKES_APPEND_TRAJECTORY(name, width, text) \
  if (output.wants(#name))                        \
    append_samples(part.traj_##name, slot, K, shape(Width::width), k0, k1, c.mutable_##name());
    UKES_TRAJECTORY_FIELDS(UKES_APPEND_TRAJECTORY)
#undef UKES_APPEND_TRAJECTORY
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
#define UKES_SCALAR_TO_PROTO(name, encoding) summary_to_proto(s.name, out->mutable_##name());
  UKES_SUMMARIZED_SCALARS(UKES_SCALAR_TO_PROTO)
#undef UKES_SCALAR_TO_PROTO
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
#define UKES_SCALAR_FROM_PROTO(name, encoding) out.name = summary_from_proto(s.name());
  UKES_SUMMARIZED_SCALARS(UKES_SCALAR_FROM_PROTO)
#undef UKES_SCALAR_FROM_PROTO
  return out;
}

}  // namespace ukes
