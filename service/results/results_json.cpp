#include "service/results/results_json.hpp"

#include <fstream>
#include <stdexcept>
#include <vector>

#include "kernels/ensemble/run_settings.hpp"
#include "service/engine/version.hpp"
#include "service/runspec/model_source.hpp"

namespace ukes {

namespace {

using json = nlohmann::json;

json row_values(const BatchResults& r, int first, int rows, int i) {
  json a = json::array();
  for (int k = 0; k < rows; ++k) a.push_back(r.residual_at(first + k, i));
  return a;
}

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
  const std::int64_t steps = total_steps(out.results);
  h["total_s"] = out.total_s;
  h["steps_total"] = steps;
  h["system_steps_per_s"] = out.elapsed_s > 0 ? static_cast<double>(steps) / out.elapsed_s : 0.0;
  return h;
}

json system_json(const RunSpec& spec, const RunOutcome& out, int i) {
  const ModelInfo& m = *spec.model;
  const BatchResults& r = out.results;
  json q = json::array(), qd = json::array();
  for (int j = 0; j < m.n; ++j) {
    q.push_back(r.q_at(j, i));
    qd.push_back(r.qd_at(j, i));
  }
  const auto ui = static_cast<std::size_t>(i);
  json sj = {
      {"id", i},
      {"status", status_name(static_cast<Status>(r.status[ui]))},
      {"t", r.t[ui]},
      {"q", std::move(q)},
      {"qd", std::move(qd)},
      {"residual_max",
       {{"position", row_values(r, 0, m.position_rows, i)},
        {"position_rate", row_values(r, m.position_rows, m.position_rows, i)},
        {"velocity", row_values(r, 2 * m.position_rows, m.velocity_rows, i)}}},
      {"force_max", r.force_max[ui]},
      {"inconsistency_max", r.inconsistency_max[ui]},
      {"steps", r.steps[ui]},
      {"rejected", r.rejected[ui]},
  };
  if (spec.sweep && !spec.sweep->dimensions.empty()) {
    const Batch& b = spec.batch;
    const auto c = static_cast<std::size_t>(b.count);
    json sample = json::object();
    for (const auto& d : spec.sweep->dimensions) {
      const auto k = static_cast<std::size_t>(d.target.index) * c + ui;
      switch (d.target.kind) {
        case SweepTarget::Kind::kParam:
          sample[d.name] = b.params[k];
          break;
        case SweepTarget::Kind::kQ0:
          sample[d.name] = b.q0[k];
          break;
        case SweepTarget::Kind::kQd0:
          sample[d.name] = b.qd0[k];
          break;
      }
    }
    sj["sample"] = std::move(sample);
  }
  return sj;
}

json ensemble_json(const RunSpec& spec, const RunOutcome& out) {
  const ModelInfo& m = *spec.model;
  const EnsembleStatistics& st = out.statistics;
  json by_status = json::object();
  for (int k = 0; k < kStatusCount; ++k)
    by_status[status_name(static_cast<Status>(k))] = st.by_status[static_cast<std::size_t>(k)];
  const auto mp = static_cast<std::size_t>(m.position_rows);
  const auto mv = static_cast<std::size_t>(m.velocity_rows);
  return {
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
      {"force_max", summary_json(st.force_max)},
      {"steps", summary_json(st.steps)},
  };
}

json results_json(const RunSpec& spec, const RunOutcome& out) {
  json doc = results_header_json(spec, out);
  json systems = json::array();
  for (int i = 0; i < out.results.count; ++i) systems.push_back(system_json(spec, out, i));
  doc["systems"] = std::move(systems);
  doc["ensemble"] = ensemble_json(spec, out);
  return doc;
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
  for (int i = 0; i < out.results.count; ++i)
    os << (i == 0 ? "\n" : ",\n") << system_json(spec, out, i).dump();
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
