#include "service/results/results_json.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <vector>

#include "kernels/ensemble/run_settings.hpp"
#include "kernels/uk/servo_control.hpp"
#include "service/engine/version.hpp"
#include "service/results/on_threads.hpp"
#include "service/runspec/model_source.hpp"

namespace ukes {

namespace {

using json = nlohmann::json;

std::int64_t total_steps(const BatchResults& r) {
  std::int64_t s = 0;
  for (auto v : r.steps) s += v;
  return s;
}

json named_summaries(const std::vector<Summary>& s, const std::vector<std::string>& names,
                     std::size_t first, std::size_t count) {
  json a = json::array();
  for (std::size_t k = 0; k < count && first + k < s.size(); ++k) {
    json j = summary_json(s[first + k]);
    j["name"] = names[k];
    a.push_back(std::move(j));
  }
  return a;
}

std::vector<std::string> row_names(const char* prefix, int rows) {
  std::vector<std::string> v;
  for (int k = 0; k < rows; ++k) v.push_back(std::string(prefix) + "[" + std::to_string(k) + "]");
  return v;
}

}  // namespace

json summary_json(const Summary& s) {
  return {{"count", s.count}, {"min", s.min}, {"max", s.max}, {"mean", s.mean},
          {"std", s.std},     {"p50", s.p50}, {"p95", s.p95}, {"p99", s.p99}};
}

namespace {

// A controlled run's control section as it ran: servo rows, the controller's parameters,
// actuation, robust term and the servo rows' relative degrees (docs/CONTROL.md).
json control_json(const RunSpec& spec) {
  const ModelInfo& m = *spec.model;
  const ControlOptions& c = spec.settings.control;
  json rows = json::array();
  for (int r = 0; r < m.rows(); ++r)
    if (has_bit(c.servo_rows, r)) rows.push_back(r);
  json params = json::object();
  for (std::size_t k = 0; k < m.params.size(); ++k)
    params[m.params[k].name] = spec.control_params[k];
  json actuation = "full";
  if (c.actuation == Actuation::kCoordinates) {
    actuation = json::array();
    for (int j = 0; j < m.n; ++j)
      if (has_bit(c.actuated, j)) actuation.push_back(m.coordinates[static_cast<std::size_t>(j)]);
  } else if (c.actuation == Actuation::kMatrix) {
    actuation = m.user->definition.actuation;
  }
  json degrees = json::array();  // every servo row's relative degree, in row order
  for (int r = 0; r < m.rows(); ++r)
    if (has_bit(c.servo_rows, r))
      degrees.push_back(has_bit(c.higher_degree_rows, r)
                            ? int(c.relative_degree[static_cast<std::size_t>(r)])
                            : (r < m.position_rows ? 2 : 1));
  return {{"rows", rows},
          {"params", params},
          {"actuation", actuation},
          {"robust", {{"gain", c.gain}, {"epsilon", c.epsilon}}},
          {"relative_degree", degrees}};
}

}  // namespace

json results_header_json(const RunSpec& spec, const RunOutcome& out) {
  const ModelInfo& m = *spec.model;
  const EnsembleSettings& s = spec.settings;
  json h;
  h["model"] = m.name;
  h["n"] = m.n;
  h["m"] = m.rows();
  h["backend"] = out.backend;
  h["precision"] = precision_name(s.precision);
  h["elapsed_s"] = out.elapsed_s;
  h["ukes_version"] = version();
  h["position_rows"] = m.position_rows;
  h["velocity_rows"] = m.velocity_rows;
  h["coordinates"] = m.coordinates;
  // A user model's definition in full: the result reproduces itself (docs/MODEL_FORMAT.md).
  if (m.user) {
    h["model_id"] = model_id(m);
    h["model_definition"] = model_definition_json(m);
  }
  json params = json::object();
  for (std::size_t k = 0; k < m.params.size(); ++k) params[m.params[k].name] = spec.params[k];
  h["params"] = params;
  if (s.control.active) h["control"] = control_json(spec);
  const double inconsistency_tol =
      s.inconsistency_tol > 0
          ? s.inconsistency_tol
          : (s.precision == Precision::kFp64 ? default_inconsistency_tol<double>()
                                             : double(default_inconsistency_tol<float>()));
  h["settings"] = {
      {"method", method_name(s.method)},
      {"t0", s.t0},
      {"t_end", s.t_end},
      {"dt", s.dt},
      {"rtol", s.rtol},
      {"atol", s.atol},
      {"max_steps", s.max_steps},
      {"assemble", s.assemble},
      {"alpha", s.alpha},
      {"beta", s.beta},
      {"projection", s.projection},
      {"inconsistency_tol", inconsistency_tol},  // relative to 1 + |b|
      {"precision", precision_name(s.precision)},
      {"device", device_name(spec.device)},
      {"gpu_path", gpu_path_name(spec.settings.gpu_path)},
      {"samples", spec.output.samples},
      {"trajectories", static_cast<std::int64_t>(spec.output.trajectory_ids.size())},
      {"threads", out.threads},
  };
  if (spec.sweep) {
    json dims = json::array();
    for (const auto& d : spec.sweep->dimensions) dims.push_back(d.name);
    h["sweep"] = {{"count", spec.sweep->count},
                  {"seed", spec.sweep->seed},
                  {"sampler", sampler_name(spec.sweep->sampler)},
                  {"dimensions", dims}};
  }
  if (s.events.count > 0) {
    h["events"] = s.event_names;
    h["event_records"] = s.events.records;
  }
  if (spec.sharded())
    h["shard"] = {
        {"first", spec.shard.first}, {"count", spec.shard.count}, {"of", spec.whole_count}};
  const std::int64_t steps = total_steps(out.results);
  h["total_s"] = out.total_s;
  h["steps_total"] = steps;
  h["system_steps_per_s"] = out.elapsed_s > 0 ? static_cast<double>(steps) / out.elapsed_s : 0.0;
  return h;
}

namespace {

// Appends numbers as JSON: the shortest text that reads back to the same double (with ".0" when
// it would read as an integer, as nlohmann::json writes them), null for non-finite values.
void append_number(std::string& out, double v) {
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  char text[32];
  const auto [end, ec] = std::to_chars(text, text + sizeof text, v);
  const std::string_view digits(text, static_cast<std::size_t>(end - text));
  out += digits;
  if (digits.find_first_of(".e") == std::string_view::npos) out += ".0";
}
void append_number(std::string& out, std::int64_t v) {
  char text[24];
  const auto [end, ec] = std::to_chars(text, text + sizeof text, v);
  out.append(text, end);
}
void append_number(std::string& out, std::int32_t v) {
  append_number(out, static_cast<std::int64_t>(v));
}

// Writes each system's line of "systems" from the record table (system_record.hpp): the id, every
// result field by its name (statuses by name; residual maxima split into position,
// position_rate and velocity rows), and for swept systems their sample.
class SystemLines {
 public:
  SystemLines(const RunSpec& spec, const RunOutcome& out)
      : spec_(spec), results_(out.results), shape_(out.results.shape()) {
    if (spec.sweep)
      for (const auto& d : spec.sweep->dimensions) sample_keys_.push_back(json(d.name).dump());
  }

  void append(std::string& line, int i) const {
    line += "{\"id\": ";
    append_number(line, spec_.shard.first + i);  // a shard's: the whole run's ids
    for_each_result(
        [&](const FieldInfo& f, const auto& values) {
          if (!field_present(f, shape_)) return;
          line += ", \"";
          line += f.name;
          line += "\": ";
          append_field(line, f, values.data(), i);
        },
        results_);
    append_sample(line, i);
    line += '}';
  }

 private:
  template <class Value>
  void append_field(std::string& line, const FieldInfo& f, const Value* values, int i) const {
    const auto at = [&](int k) {
      return values[static_cast<std::size_t>(k) * results_.count + static_cast<std::size_t>(i)];
    };
    if (f.encoding == Encoding::kStatus) {
      line += '"';
      line += status_name(static_cast<Status>(at(0)));
      line += '"';
    } else if (f.width == Width::kOne) {
      append_number(line, at(0));
    } else if (f.width == Width::kEvents || f.width == Width::kEventRecords ||
               f.width == Width::kEventCoordinates) {
      append_events(line, f.width, at, i);
    } else if (f.width == Width::kResidualSlots) {
      const int mp = spec_.model->position_rows, mv = spec_.model->velocity_rows;
      line += "{\"position\": ";
      append_array(line, at, 0, mp);
      line += ", \"position_rate\": ";
      append_array(line, at, mp, 2 * mp);
      line += ", \"velocity\": ";
      append_array(line, at, 2 * mp, 2 * mp + mv);
      line += '}';
    } else {
      append_array(line, at, 0, shape_(f.width));
    }
  }

  // An event field as an object by event name: its count, or its records (those kept: the first
  // min(count, max) of each event), a time or a state [coordinate] each.
  template <class At>
  void append_events(std::string& line, Width width, const At& at, int i) const {
    const int records = shape_.event_records, n = shape_.n;
    const auto c = static_cast<std::size_t>(results_.count);
    line += '{';
    for (int e = 0; e < shape_.events; ++e) {
      if (e > 0) line += ", ";
      line += json(spec_.settings.event_names[static_cast<std::size_t>(e)]).dump();
      line += ": ";
      if (width == Width::kEvents) {
        append_number(line, at(e));
        continue;
      }
      const std::int64_t count =
          results_.event_count[static_cast<std::size_t>(e) * c + static_cast<std::size_t>(i)];
      const int kept =
          static_cast<int>(std::min<std::int64_t>(count, spec_.settings.events.max_records[e]));
      line += '[';
      for (int r = 0; r < kept; ++r) {
        if (r > 0) line += ", ";
        const int record = e * records + r;
        if (width == Width::kEventRecords) {
          append_number(line, at(record));
        } else {
          append_array(line, at, record * n, record * n + n);
        }
      }
      line += ']';
    }
    line += '}';
  }

  template <class At>
  static void append_array(std::string& line, const At& at, int begin, int end) {
    line += '[';
    for (int k = begin; k < end; ++k) {
      if (k > begin) line += ", ";
      append_number(line, at(k));
    }
    line += ']';
  }

  void append_sample(std::string& line, int i) const {
    if (sample_keys_.empty()) return;
    const Batch& b = spec_.batch;
    const auto c = static_cast<std::size_t>(b.count);
    line += ", \"sample\": {";
    for (std::size_t d = 0; d < sample_keys_.size(); ++d) {
      const SweepTarget& target = spec_.sweep->dimensions[d].target;
      const std::vector<double>& inputs = target.kind == SweepTarget::Kind::kParam ? b.params
                                          : target.kind == SweepTarget::Kind::kQ0  ? b.q0
                                                                                   : b.qd0;
      if (d > 0) line += ", ";
      line += sample_keys_[d];
      line += ": ";
      append_number(
          line, inputs[static_cast<std::size_t>(target.index) * c + static_cast<std::size_t>(i)]);
    }
    line += '}';
  }

  const RunSpec& spec_;
  const BatchResults& results_;
  RecordShape shape_;
  std::vector<std::string> sample_keys_;  // the dimensions' names, as JSON strings
};

// The systems' lines, formatted a block of systems at a time on every thread (shortest
// round-trip number formatting is most of a writer's time) and written in system order.
void write_system_lines(std::ostream& os, const SystemLines& lines, int count) {
  constexpr int kBlockSystems = 4096;
  const std::size_t blocks_per_round = 4 * std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::string> blocks(blocks_per_round);
  for (int first = 0; first < count;) {
    const int round_end = static_cast<int>(
        std::min<std::int64_t>(count, first + std::int64_t{kBlockSystems} * blocks.size()));
    const auto round_blocks =
        static_cast<std::size_t>((round_end - first + kBlockSystems - 1) / kBlockSystems);
    on_threads(round_blocks, [&](std::size_t b) {
      std::string& block = blocks[b];
      block.clear();
      const int begin = first + static_cast<int>(b) * kBlockSystems;
      const int end = std::min(round_end, begin + kBlockSystems);
      for (int i = begin; i < end; ++i) {
        block += i == 0 ? "\n" : ",\n";
        lines.append(block, i);
      }
    });
    for (std::size_t b = 0; b < round_blocks; ++b)
      os.write(blocks[b].data(), static_cast<std::streamsize>(blocks[b].size()));
    first = round_end;
  }
}

}  // namespace

json system_json(const RunSpec& spec, const RunOutcome& out, int i) {
  std::string line;
  SystemLines(spec, out).append(line, i);
  return json::parse(line);
}

json ensemble_json(const RunSpec& spec, const RunOutcome& out) {
  const ModelInfo& m = *spec.model;
  const EnsembleStatistics& st = out.statistics;
  json by_status = json::object();
  for (int k = 0; k < kStatusCount; ++k)
    by_status[status_name(static_cast<Status>(k))] = st.by_status[static_cast<std::size_t>(k)];
  const auto mp = static_cast<std::size_t>(m.position_rows);
  const auto mv = static_cast<std::size_t>(m.velocity_rows);
  json ensemble = {
      {"count", st.count},
      {"ok", st.ok},
      {"failed", st.failed},
      {"by_status", by_status},
      {"q", named_summaries(st.q, m.coordinates, 0, static_cast<std::size_t>(m.n))},
      {"qd", named_summaries(st.qd, m.coordinates, 0, static_cast<std::size_t>(m.n))},
      {"residual_max",
       {{"position", named_summaries(st.residual, row_names("phi", m.position_rows), 0, mp)},
        {"position_rate", named_summaries(st.residual, row_names("phid", m.position_rows), mp, mp)},
        {"velocity", named_summaries(st.residual, row_names("psi", m.velocity_rows), 2 * mp, mv)}}},
  };
#define UKES_SCALAR_JSON(name, encoding) ensemble[#name] = summary_json(st.name);
  UKES_SUMMARIZED_SCALARS(UKES_SCALAR_JSON)
#undef UKES_SCALAR_JSON
  return ensemble;
}

json results_json(const RunSpec& spec, const RunOutcome& out) {
  std::ostringstream os;
  write_results_json(os, spec, out);
  return json::parse(os.str());
}

void write_results_json(std::ostream& os, const RunSpec& spec, const RunOutcome& out) {
  const json header = results_header_json(spec, out);
  // Contract keys first, then the extras (nlohmann::json objects iterate sorted).
  static const char* const kFirst[] = {"model", "n", "m", "backend", "precision", "elapsed_s"};
  os << "{\n";
  for (const char* key : kFirst) os << json(key).dump() << ": " << header.at(key).dump() << ",\n";
  for (auto it = header.begin(); it != header.end(); ++it) {
    bool first = false;
    for (const char* key : kFirst) first = first || it.key() == key;
    if (!first) os << json(it.key()).dump() << ": " << it.value().dump() << ",\n";
  }
  os << "\"systems\": [";
  write_system_lines(os, SystemLines(spec, out), out.results.count);
  os << "\n],\n\"ensemble\": " << ensemble_json(spec, out).dump(2) << "\n}\n";
}

PendingFile stage_results_json(const std::string& path, const RunSpec& spec,
                               const RunOutcome& out) {
  PendingFile f = create_pending_file(path);
  {
    std::ofstream os(f.temp_path(), std::ios::out | std::ios::trunc | std::ios::binary);
    if (!os) throw std::runtime_error(path + ": cannot write");
    write_results_json(os, spec, out);
    os.close();
    if (os.fail()) throw std::runtime_error(path + ": cannot write (disk full?)");
  }
  sync_file(f.temp_path());
  return f;
}

}  // namespace ukes
