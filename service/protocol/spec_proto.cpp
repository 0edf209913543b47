#include "service/protocol/spec_proto.hpp"

#include "service/runspec/run_spec.hpp"
#include "service/runspec/spec_text.hpp"

namespace ukes {

namespace {

using nlohmann::json;

json params_json(const google::protobuf::Map<std::string, double>& params) {
  json o = json::object();
  for (const auto& [name, value] : params) o[name] = value;
  return o;
}

json array_json(const google::protobuf::RepeatedField<double>& values) {
  return json(std::vector<double>(values.begin(), values.end()));
}

json distribution_json(const v1::Distribution& d) {
  switch (d.kind_case()) {
    case v1::Distribution::kUniform:
      return {{"uniform", {d.uniform().low(), d.uniform().high()}}};
    case v1::Distribution::kNormal:
      return {{"normal", {d.normal().mean(), d.normal().sd()}}};
    case v1::Distribution::kLognormal:
      return {{"lognormal", {d.lognormal().mu(), d.lognormal().sigma()}}};
    case v1::Distribution::kValues:
      return {{"values", array_json(d.values().values())}};
    case v1::Distribution::KIND_NOT_SET:
      break;
  }
  return json::object();  // the validator reports the missing distribution
}

json control_json(const v1::ControlSpec& c) {
  json o = json::object();
  if (c.rows_size() > 0) o["rows"] = std::vector<std::int32_t>(c.rows().begin(), c.rows().end());
  if (!c.params().empty()) o["params"] = params_json(c.params());
  if (c.actuation_size() > 0 && c.actuation_matrix_size() > 0)
    throw SpecError("control.actuation_matrix", "give actuation or actuation_matrix, not both");
  if (c.actuation_size() > 0)
    o["actuation"] = std::vector<std::string>(c.actuation().begin(), c.actuation().end());
  if (c.actuation_matrix_size() > 0) {
    json rows = json::array();
    for (const v1::ActuationRow& row : c.actuation_matrix())
      rows.push_back(std::vector<std::string>(row.entries().begin(), row.entries().end()));
    o["actuation"] = std::move(rows);
  }
  if (c.has_robust()) {
    json r = json::object();
    if (c.robust().has_gain()) r["gain"] = c.robust().gain();
    if (c.robust().has_epsilon()) r["epsilon"] = c.robust().epsilon();
    o["robust"] = std::move(r);
  }
  if (c.relative_degree_size() == 1) o["relative_degree"] = c.relative_degree(0);
  if (c.relative_degree_size() > 1)
    o["relative_degree"] =
        std::vector<std::int32_t>(c.relative_degree().begin(), c.relative_degree().end());
  return o;
}

json events_json(const google::protobuf::RepeatedPtrField<v1::EventSpec>& events) {
  json list = json::array();
  for (const v1::EventSpec& e : events) {
    json o = {{"name", e.name()}, {"condition", e.condition()}};
    if (e.has_direction()) o["direction"] = e.direction();
    if (e.has_action()) o["action"] = e.action();
    if (e.reset_q_size() > 0 || e.reset_qd_size() > 0) {
      json reset = json::object();
      if (e.reset_q_size() > 0)
        reset["q"] = std::vector<std::string>(e.reset_q().begin(), e.reset_q().end());
      if (e.reset_qd_size() > 0)
        reset["qd"] = std::vector<std::string>(e.reset_qd().begin(), e.reset_qd().end());
      o["reset"] = std::move(reset);
    }
    if (e.has_max()) o["max"] = e.max();
    list.push_back(std::move(o));
  }
  return list;
}

}  // namespace

json spec_json_from_proto(const v1::RunSpec& s) {
  json j = json::object();
  if (!s.model().empty()) j["model"] = s.model();
  if (s.has_model_definition_json()) {
    if (!s.model().empty())
      throw SpecError("model_definition_json", "give model or model_definition_json, not both");
    try {
      j["model"] = parse_spec_text(s.model_definition_json());
    } catch (const SpecError& e) {
      throw SpecError("model_definition_json", e.field() + ": " + e.reason());
    }
  }
  if (s.has_description()) j["description"] = s.description();
  if (!s.params().empty()) j["params"] = params_json(s.params());
  if (s.systems_size() > 0) {
    json systems = json::array();
    for (const auto& sys : s.systems()) {
      json o = json::object();
      if (!sys.params().empty()) o["params"] = params_json(sys.params());
      if (sys.q0_size() > 0) o["q0"] = array_json(sys.q0());
      if (sys.qd0_size() > 0) o["qd0"] = array_json(sys.qd0());
      systems.push_back(std::move(o));
    }
    j["systems"] = std::move(systems);
  }
  if (s.has_sweep()) {
    const v1::Sweep& w = s.sweep();
    json o = {{"count", w.count()}};
    if (w.has_seed()) o["seed"] = w.seed();
    if (w.has_sampler()) o["sampler"] = w.sampler();
    json vary = json::object();
    for (const auto& [target, dist] : w.vary()) vary[target] = distribution_json(dist);
    o["vary"] = std::move(vary);
    j["sweep"] = std::move(o);
  }
  if (s.has_assemble()) j["assemble"] = s.assemble();
  if (s.has_integrator()) {
    const v1::IntegratorSpec& in = s.integrator();
    json o = json::object();
    if (in.has_method()) o["method"] = in.method();
    if (in.has_t0()) o["t0"] = in.t0();
    if (in.has_t_end()) o["t_end"] = in.t_end();
    if (in.has_dt()) o["dt"] = in.dt();
    if (in.has_rtol()) o["rtol"] = in.rtol();
    if (in.has_atol()) o["atol"] = in.atol();
    if (in.has_max_steps()) o["max_steps"] = in.max_steps();
    j["integrator"] = std::move(o);
  }
  if (s.has_stabilization()) {
    const v1::StabilizationSpec& st = s.stabilization();
    json o = json::object();
    if (st.has_alpha()) o["alpha"] = st.alpha();
    if (st.has_beta()) o["beta"] = st.beta();
    if (st.has_projection()) o["projection"] = st.projection();
    if (st.has_inconsistency_tol()) o["inconsistency_tol"] = st.inconsistency_tol();
    if (st.has_projection_tol()) o["projection_tol"] = st.projection_tol();
    j["stabilization"] = std::move(o);
  }
  if (s.has_control()) j["control"] = control_json(s.control());
  if (s.events_size() > 0) j["events"] = events_json(s.events());
  if (s.has_shard()) j["shard"] = {{"first", s.shard().first()}, {"count", s.shard().count()}};
  if (s.has_precision()) j["precision"] = s.precision();
  if (s.has_device()) j["device"] = s.device();
  if (s.device_ids_size() > 0)
    j["device_ids"] = std::vector<int>(s.device_ids().begin(), s.device_ids().end());
  if (s.has_gpu_path()) j["gpu_path"] = s.gpu_path();
  if (s.has_output()) {
    const v1::OutputSpec& out = s.output();
    json o = json::object();
    if (out.has_samples()) o["samples"] = out.samples();
    if (out.has_trajectories() && out.trajectory_ids_size() > 0)
      throw SpecError("output.trajectories",
                      "give either trajectories or trajectory_ids, not both");
    if (out.has_trajectories()) o["trajectories"] = out.trajectories();
    if (out.trajectory_ids_size() > 0)
      o["trajectories"] =
          std::vector<std::int32_t>(out.trajectory_ids().begin(), out.trajectory_ids().end());
    if (out.fields_size() > 0)
      o["fields"] = std::vector<std::string>(out.fields().begin(), out.fields().end());
    j["output"] = std::move(o);
  }
  return j;
}

}  // namespace ukes
