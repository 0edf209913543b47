#include "service/protocol/result_assembler.hpp"

#include <unistd.h>

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include "service/protocol/result_chunks.hpp"
#include "service/runspec/model_source.hpp"
#include "service/runspec/spec_text.hpp"

namespace ukes {

namespace {

[[noreturn]] void bad_chunk(std::int64_t sequence, const std::string& why) {
  throw std::runtime_error("result chunk " + std::to_string(sequence) + ": " + why);
}

std::int64_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return std::numeric_limits<std::int64_t>::max();
  const long double bytes = static_cast<long double>(pages) * static_cast<long double>(page);
  return bytes >= static_cast<long double>(std::numeric_limits<std::int64_t>::max())
             ? std::numeric_limits<std::int64_t>::max()
             : static_cast<std::int64_t>(bytes);
}

// Bytes held per system of records shaped `shape` (n coordinates) while a header is rebuilt and
// afterwards: the batch's parameters and initial conditions with the defaults computed beside
// them, the results of BatchResults::allocate, and trajectory ids ("all") in the spec and the
// header.
std::int64_t bytes_per_system(const RecordShape& shape, int n) {
  const auto inputs = static_cast<std::int64_t>(input_bytes_per_system(shape)) + 16 * n;
  const auto results = static_cast<std::int64_t>(result_bytes_per_system(shape)) + 4;  // + slot
  return inputs + results + 8;
}

// The same for any run of `m` before its spec is parsed: as if controlled, without events.
std::int64_t bytes_per_system(const ModelInfo& m) {
  RecordShape shape = record_shape(m);
  shape.control_params = shape.params;
  return bytes_per_system(shape, m.n);
}

// The model a spec document names or defines, or null (parse_run_spec then refuses it before it
// allocates anything). A catalogue model is not owned: the pointer aliases the catalogue.
std::shared_ptr<const ModelInfo> model_of(const nlohmann::json& doc) {
  if (!doc.is_object()) return nullptr;
  const auto it = doc.find("model");
  if (it == doc.end()) return nullptr;
  if (it->is_object()) {
    try {
      return user_model_from_json(*it, "model");
    } catch (const SpecError&) {
      return nullptr;
    }
  }
  if (!it->is_string()) return nullptr;
  return std::shared_ptr<const ModelInfo>(std::shared_ptr<const ModelInfo>(),
                                          find_model(it->get<std::string>()));
}

// Whether size == a * b * c, without overflow.
bool is_product(std::size_t size, std::size_t a, std::size_t b, std::size_t c) {
  if (a == 0 || b == 0 || c == 0) return size == 0;
  return size % a == 0 && (size / a) % b == 0 && size / a / b == c;
}

// Copies samples of one field from a chunk laid out [system][sample][component].
void copy_samples(const google::protobuf::RepeatedField<double>& src, std::size_t src_offset,
                  std::vector<double>& dst, std::size_t dst_offset, std::size_t len) {
  std::copy(src.begin() + static_cast<std::ptrdiff_t>(src_offset),
            src.begin() + static_cast<std::ptrdiff_t>(src_offset + len),
            dst.begin() + static_cast<std::ptrdiff_t>(dst_offset));
}

// A SystemSummaries value as the results hold it: SystemStatus numbers as Status codes.
template <Encoding E, class Wire>
auto from_wire(Wire v) {
  if constexpr (E == Encoding::kStatus) {
    return status_from_proto(static_cast<v1::SystemStatus>(v));
  } else {
    return v;
  }
}

// Stores one field's values, sent [system][component] for systems first.., into arrays stored
// [component][stride].
template <Encoding E, class Wire, class Value>
void decode_field(const google::protobuf::RepeatedField<Wire>& in, Value* values,
                  std::size_t stride, int width, int first) {
  if (width == 0) return;
  const int count = in.size() / width;
  const Wire* src = in.data();
  for (int i = 0; i < count; ++i)
    for (int k = 0; k < width; ++k)
      values[static_cast<std::size_t>(k) * stride + static_cast<std::size_t>(first + i)] =
          static_cast<Value>(from_wire<E>(*src++));
}

}  // namespace

ResultAssembler::ResultAssembler() : ResultAssembler(physical_memory_bytes()) {}

ResultAssembler::ResultAssembler(std::int64_t max_result_bytes)
    : max_result_bytes_(std::max<std::int64_t>(0, max_result_bytes)) {}

void ResultAssembler::add(const v1::StreamJobResultsResponse& chunk) {
  if (finished_) bad_chunk(chunk.sequence(), "arrived after the end of the job");
  if (chunk.sequence() != last_sequence_ + 1)
    bad_chunk(chunk.sequence(), "expected sequence " + std::to_string(last_sequence_ + 1));
  if (!has_header() && !chunk.has_header()) bad_chunk(chunk.sequence(), "expected the header");
  switch (chunk.payload_case()) {
    case v1::StreamJobResultsResponse::kHeader:
      if (has_header()) bad_chunk(chunk.sequence(), "a second header");
      try {
        on_header(chunk.header());
      } catch (const std::runtime_error& e) {
        bad_chunk(chunk.sequence(), e.what());
      }
      break;
    case v1::StreamJobResultsResponse::kProgress:
      progress_ = chunk.progress();
      break;
    case v1::StreamJobResultsResponse::kSummaries:
      try {
        on_summaries(chunk.summaries());
      } catch (const std::runtime_error& e) {
        bad_chunk(chunk.sequence(), e.what());
      }
      break;
    case v1::StreamJobResultsResponse::kTrajectory:
      try {
        on_trajectory(chunk.trajectory());
      } catch (const std::runtime_error& e) {
        bad_chunk(chunk.sequence(), e.what());
      }
      break;
    case v1::StreamJobResultsResponse::kStatistics:
      outcome_.statistics = statistics_from_proto(chunk.statistics());
      has_statistics_ = true;
      break;
    case v1::StreamJobResultsResponse::kEnd:
      end_ = chunk.end();
      outcome_.elapsed_s = end_.elapsed_s();
      outcome_.results.elapsed_s = end_.elapsed_s();
      finished_ = true;
      break;
    case v1::StreamJobResultsResponse::PAYLOAD_NOT_SET:
      bad_chunk(chunk.sequence(), "no payload");
  }
  last_sequence_ = chunk.sequence();
}

void ResultAssembler::on_header(const v1::JobHeader& h) {
  // The header is checked in full before anything is kept or allocated from it: the buffers it
  // asks for must fit max_result_bytes_.
  if (h.count() < 1)
    throw std::runtime_error("header: count must be at least 1, got " + std::to_string(h.count()));
  const nlohmann::json doc = parse_spec_text(h.spec_json());
  // The server validated the spec against its own limits; here it only has to be rebuilt, within
  // the systems the header announces and the memory this assembler may use. parse_run_spec checks
  // both limits before it builds the batch.
  ParseOptions options;
  options.gpu_available = true;
  options.limits.max_systems = h.count();
  options.limits.max_samples = std::numeric_limits<std::int32_t>::max();
  options.limits.max_trajectory_bytes = max_result_bytes_;
  // The systems' inputs travel with their summaries (on_summaries): validate only.
  options.build_batch = false;
  if (const auto m = model_of(doc)) {
    const std::int64_t per_system = bytes_per_system(*m);
    if (h.count() > max_result_bytes_ / per_system)
      throw std::runtime_error("header: " + std::to_string(h.count()) + " systems of " + m->name +
                               " need about " + std::to_string(h.count() * per_system) +
                               " bytes, over this client's limit of " +
                               std::to_string(max_result_bytes_));
  }
  RunSpec spec;
  try {
    spec = parse_run_spec(doc, options);
  } catch (const LimitError& e) {
    throw std::runtime_error("header: the spec does not fit the header's count of " +
                             std::to_string(h.count()) + " systems or this client's limit of " +
                             std::to_string(max_result_bytes_) + " bytes: " + e.what());
  }
  if (spec.batch.count != h.count()) throw std::runtime_error("header: count does not match spec");
  // The recorded systems are the spec's (the server sends spec.output.trajectory_ids).
  const std::vector<std::int32_t> ids(h.trajectory_ids().begin(), h.trajectory_ids().end());
  if (ids != spec.output.trajectory_ids)
    throw std::runtime_error("header: trajectory ids do not match the spec's " +
                             std::to_string(spec.output.trajectory_ids.size()) +
                             " recorded systems");
  const std::int64_t bytes =
      trajectory_bytes(*spec.model, static_cast<std::int64_t>(ids.size()), spec.settings.samples);
  // The spec's own records now: its events' included.
  const std::int64_t records = h.count() * bytes_per_system(record_shape(spec), spec.model->n);
  if (bytes > max_result_bytes_ - records) {
    const EventTable& events = spec.settings.events;
    std::string what = "header: the records of " + std::to_string(h.count()) + " systems";
    if (events.count > 0)
      what += " (" + std::to_string(events.records) + " records of " +
              std::to_string(events.count) + " events each)";
    what += " and " + std::to_string(ids.size()) + " trajectories of " +
            std::to_string(spec.settings.samples) + " samples need " +
            std::to_string(records + bytes) + " bytes, over this client's limit of " +
            std::to_string(max_result_bytes_);
    throw std::runtime_error(what);
  }
  header_ = h;
  // NaN until the summaries of each system bring its inputs.
  Batch& b = spec.batch;
  const auto count = static_cast<std::size_t>(b.count);
  const double unknown = std::numeric_limits<double>::quiet_NaN();
  const RecordShape shape = record_shape(spec);
  for_each_input([&](const FieldInfo& f, auto& v) { v.assign(shape(f.width) * count, unknown); },
                 b);
  outcome_.results.allocate(spec.batch, spec.settings.samples, ids, spec.settings.events);
  outcome_.results.backend = h.backend();
  outcome_.backend = h.backend();
  outcome_.threads = h.threads();
  spec_ = std::move(spec);
}

void ResultAssembler::on_summaries(const v1::SystemSummaries& s) {
  BatchResults& r = outcome_.results;
  Batch& inputs = spec_->batch;
  const RecordShape shape = record_shape(*spec_);
  if (s.first_id() < 0 || s.count() < 0 || std::int64_t{s.first_id()} + s.count() > r.count)
    throw std::runtime_error("summaries outside the batch");
  const auto c = static_cast<std::size_t>(s.count());
  bool sizes_match = true;
#define UKES_CHECK_SIZE(name, encoding, width, text) \
  sizes_match = sizes_match && static_cast<std::size_t>(s.name##_size()) == c * shape(Width::width);
  UKES_SYSTEM_RESULTS(UKES_CHECK_SIZE)
  UKES_SYSTEM_INPUTS(UKES_CHECK_SIZE)
#undef UKES_CHECK_SIZE
  if (!sizes_match) throw std::runtime_error("summary arrays do not match count");
  const auto stride = static_cast<std::size_t>(r.count);
#define UKES_DECODE_FIELD(name, encoding, width, text)                                   \
  decode_field<Encoding::encoding>(s.name(), r.name.data(), stride, shape(Width::width), \
                                   s.first_id());
  UKES_SYSTEM_RESULTS(UKES_DECODE_FIELD)
#undef UKES_DECODE_FIELD
#define UKES_DECODE_INPUT(name, encoding, width, text)                                        \
  decode_field<Encoding::encoding>(s.name(), inputs.name.data(), stride, shape(Width::width), \
                                   s.first_id());
  UKES_SYSTEM_INPUTS(UKES_DECODE_INPUT)
#undef UKES_DECODE_INPUT
  systems_received_ += s.count();
}

void ResultAssembler::on_trajectory(const v1::TrajectoryChunk& c) {
  BatchResults& r = outcome_.results;
  const int K = r.samples;
  const RecordShape shape = r.shape();
  if (c.sample_begin() < 0 || c.sample_count() < 0 ||
      std::int64_t{c.sample_begin()} + c.sample_count() > K)
    throw std::runtime_error("trajectory samples outside 0.." + std::to_string(K - 1));
  const auto systems = static_cast<std::size_t>(c.system_ids_size());
  const auto len = static_cast<std::size_t>(c.sample_count());
  const auto check = [&](int size, int width, const char* field) {
    if (size != 0 &&
        !is_product(static_cast<std::size_t>(size), systems, len, static_cast<std::size_t>(width)))
      throw std::runtime_error(std::string("trajectory field ") + field + " has the wrong size");
  };
#define UKES_CHECK_TRAJECTORY(name, width, text) check(c.name##_size(), shape(Width::width), #name);
  UKES_TRAJECTORY_FIELDS(UKES_CHECK_TRAJECTORY)
#undef UKES_CHECK_TRAJECTORY
  for (std::size_t s = 0; s < systems; ++s) {
    const int id = c.system_ids(static_cast<int>(s));
    if (id < 0 || id >= r.count || r.traj_slot[id] < 0)
      throw std::runtime_error("trajectory of system " + std::to_string(id) +
                               ", which is not recorded");
    const auto slot = static_cast<std::size_t>(r.traj_slot[id]);
    const auto dst = slot * K + static_cast<std::size_t>(c.sample_begin());
    const auto src = s * len;
#define UKES_COPY_TRAJECTORY(name, width, text)                                          \
  if (const auto w = static_cast<std::size_t>(shape(Width::width)); c.name##_size() > 0) \
    copy_samples(c.name(), src* w, r.traj_##name, dst* w, len* w);
    UKES_TRAJECTORY_FIELDS(UKES_COPY_TRAJECTORY)
#undef UKES_COPY_TRAJECTORY
  }
}

}  // namespace ukes
