#include "service/runspec/run_spec.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <set>
#include <sstream>
#include <string_view>
#include <utility>

#include "kernels/backend/gpu/gpu_backend.hpp"
#include "kernels/models/user/buckets.hpp"
#include "kernels/uk/servo_control.hpp"
#include "service/runspec/events.hpp"
#include "service/runspec/initial_state.hpp"
#include "service/runspec/model_source.hpp"
#include "service/runspec/printable_text.hpp"

namespace ukes {

SpecError::SpecError(const std::string& field, const std::string& reason)
    : SpecError(printable_text(field, kMaxQuotedFieldBytes),
                printable_text(reason, kMaxQuotedReasonBytes), Printable{}) {}

SpecError::SpecError(std::string field, std::string reason, Printable)
    : std::runtime_error(field + ": " + reason),
      field_(std::move(field)),
      reason_(std::move(reason)) {}

const char* method_name(Method m) {
#define UKES_METHOD_NAME(id, name) \
  if (m == Method::id) return name;
  UKES_METHODS(UKES_METHOD_NAME)
#undef UKES_METHOD_NAME
  return "?";
}

const char* precision_name(Precision p) { return p == Precision::kFp32 ? "fp32" : "fp64"; }

const char* sampler_name(Sampler s) {
  switch (s) {
    case Sampler::kRandom:
      return "random";
    case Sampler::kLhs:
      return "lhs";
    case Sampler::kSobol:
      return "sobol";
  }
  return "random";
}

const char* gpu_path_name(GpuPath p) {
  switch (p) {
    case GpuPath::kAuto:
      return "auto";
    case GpuPath::kFused:
      return "fused";
    case GpuPath::kWarp:
      return "warp";
    case GpuPath::kCusolver:
      return "cusolver";
  }
  return "auto";
}

std::int64_t trajectory_bytes(const ModelInfo& model, std::int64_t systems, std::int64_t samples) {
  const auto per_sample =
      static_cast<long double>(trajectory_bytes_per_sample(record_shape(model)));
  const long double bytes =
      static_cast<long double>(systems) * static_cast<long double>(samples) * per_sample;
  const auto cap = static_cast<long double>(std::numeric_limits<std::int64_t>::max());
  return bytes >= cap ? std::numeric_limits<std::int64_t>::max() : static_cast<std::int64_t>(bytes);
}

namespace {

using json = nlohmann::json;

[[noreturn]] void fail(const std::string& field, const std::string& reason) {
  throw SpecError(field, reason);
}

std::string member(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

std::string element(const std::string& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

std::string number_text(double v) {
  std::ostringstream os;
  os.precision(17);
  os << v;
  return os.str();
}

std::string join_names(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

std::string kind_of(const json& j) {
  if (j.is_null()) return "null";
  if (j.is_boolean()) return "a boolean";
  if (j.is_number()) return "a number";
  if (j.is_string()) return "a string";
  if (j.is_array()) return "an array";
  return "an object";
}

void require_object(const json& j, const std::string& path) {
  if (!j.is_object()) fail(path, "must be an object, got " + kind_of(j));
}

void check_keys(const json& obj, const std::string& path,
                std::initializer_list<std::string_view> allowed) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (std::find(allowed.begin(), allowed.end(), it.key()) != allowed.end()) continue;
    std::string list;
    for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
    fail(member(path, it.key()), "unknown field (expected one of: " + list + ")");
  }
}

double get_number(const json& j, const std::string& path) {
  if (!j.is_number()) fail(path, "must be a number, got " + kind_of(j));
  const double v = j.get<double>();
  if (!std::isfinite(v)) fail(path, "must be a finite number");
  return v;
}

bool get_bool(const json& j, const std::string& path) {
  if (!j.is_boolean()) fail(path, "must be true or false, got " + kind_of(j));
  return j.get<bool>();
}

std::string get_string(const json& j, const std::string& path) {
  if (!j.is_string()) fail(path, "must be a string, got " + kind_of(j));
  return j.get<std::string>();
}

// One of a fixed set of names, e.g. "rk4" | "dopri5"; `what` names the kind in the message.
template <class E>
E get_choice(const json& j, const std::string& path, const char* what,
             std::initializer_list<std::pair<std::string_view, E>> choices) {
  const std::string name = get_string(j, path);
  std::string expected;
  std::size_t k = 0;
  for (const auto& [text, value] : choices) {
    if (name == text) return value;
    expected += (k == 0 ? "" : k + 1 == choices.size() ? " or " : ", ") + std::string(text);
    ++k;
  }
  fail(path, "unknown " + std::string(what) + " '" + name + "' (expected " + expected + ")");
}

// An integer in [lo, hi]; integral floating-point values (1e6) are accepted.
std::int64_t get_integer(const json& j, const std::string& path, std::int64_t lo, std::int64_t hi) {
  std::int64_t v = 0;
  if (j.is_number_unsigned()) {
    const auto u = j.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(hi)) fail(path, "must be at most " + std::to_string(hi));
    v = static_cast<std::int64_t>(u);
  } else if (j.is_number_integer()) {
    v = j.get<std::int64_t>();
  } else if (j.is_number_float()) {
    const double d = j.get<double>();
    if (!std::isfinite(d) || d != std::floor(d)) fail(path, "must be an integer");
    if (d < static_cast<double>(lo)) fail(path, "must be at least " + std::to_string(lo));
    if (d >= 9.2e18 || d > static_cast<double>(hi))
      fail(path, "must be at most " + std::to_string(hi));
    v = static_cast<std::int64_t>(d);
  } else {
    fail(path, "must be an integer, got " + kind_of(j));
  }
  if (v < lo) fail(path, "must be at least " + std::to_string(lo));
  if (v > hi) fail(path, "must be at most " + std::to_string(hi));
  return v;
}

const json* find(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

std::vector<std::string> param_names(const ModelInfo& m) {
  std::vector<std::string> v;
  for (const auto& p : m.params) v.emplace_back(p.name);
  return v;
}

// Parameter `name` of the model, or a SpecError at `path`.
int param_index(const ModelInfo& m, const std::string& name, const std::string& path) {
  const int k = m.param_index(name);
  if (k < 0)
    fail(path, "unknown parameter of model " + m.name +
                   " (parameters: " + join_names(param_names(m)) + ")");
  return k;
}

void check_structural(const ModelInfo& m, int k, double value, const std::string& path) {
  const ParamSpec& p = m.params[static_cast<std::size_t>(k)];
  if (p.structural && value != p.value)
    fail(path,
         std::string("structural parameter (it fixes the model's dimensions): only its value ") +
             number_text(p.value) + " is accepted in this build");
}

// {name: value} overrides into `values` (indexed like the model's parameters).
void parse_params(const json& j, const std::string& path, const ModelInfo& m,
                  std::vector<double>& values, std::vector<bool>* set = nullptr) {
  require_object(j, path);
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string p = member(path, it.key());
    const int k = param_index(m, it.key(), p);
    const double v = get_number(it.value(), p);
    check_structural(m, k, v, p);
    values[static_cast<std::size_t>(k)] = v;
    if (set) (*set)[static_cast<std::size_t>(k)] = true;
  }
}

std::vector<double> parse_vector(const json& j, const std::string& path, const ModelInfo& m) {
  if (!j.is_array()) fail(path, "must be an array of " + std::to_string(m.n) + " numbers");
  if (static_cast<int>(j.size()) != m.n)
    fail(path, "expected " + std::to_string(m.n) + " numbers (" + join_names(m.coordinates) +
                   "), got " + std::to_string(j.size()));
  std::vector<double> v;
  for (std::size_t i = 0; i < j.size(); ++i) v.push_back(get_number(j[i], element(path, i)));
  return v;
}

struct ExplicitSystem {
  std::vector<double> params;
  std::vector<double> q0, qd0;  // empty: the model's default
};

// "q0[12]" -> 12 with strict digits (no sign, no leading zeros); -1 when malformed.
long long parse_index(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size() + 3 || s.substr(0, prefix.size()) != prefix) return -1;
  if (s[prefix.size()] != '[' || s.back() != ']') return -1;
  const std::string_view digits = s.substr(prefix.size() + 1, s.size() - prefix.size() - 2);
  if (digits.empty() || digits.size() > 9) return -1;
  if (digits.size() > 1 && digits[0] == '0') return -1;
  long long v = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return -1;
    v = v * 10 + (c - '0');
  }
  return v;
}

SweepTarget parse_target(const std::string& name, const std::string& path, const ModelInfo& m) {
  SweepTarget t;
  const bool controller = name.rfind("control.params.", 0) == 0;
  if (controller || name.rfind("params.", 0) == 0) {
    t.kind = controller ? SweepTarget::Kind::kControlParam : SweepTarget::Kind::kParam;
    t.index = param_index(m, name.substr(controller ? 15 : 7), path);
    if (m.params[static_cast<std::size_t>(t.index)].structural)
      fail(path, "structural parameter (it fixes the model's dimensions) cannot be swept");
    return t;
  }
  for (const auto& [prefix, kind] : {std::pair{std::string_view("q0"), SweepTarget::Kind::kQ0},
                                     std::pair{std::string_view("qd0"), SweepTarget::Kind::kQd0}}) {
    if (name.rfind(std::string(prefix) + "[", 0) != 0) continue;
    const long long i = parse_index(name, prefix);
    if (i < 0)
      fail(path, "malformed target: expected " + std::string(prefix) + "[i], i = 0.." +
                     std::to_string(m.n - 1));
    if (i >= m.n)
      fail(path, "coordinate index " + std::to_string(i) + " out of range: model " + m.name +
                     " has n = " + std::to_string(m.n) + " (" + join_names(m.coordinates) + ")");
    t.kind = kind;
    t.index = static_cast<int>(i);
    return t;
  }
  fail(path, "unknown sweep target: expected params.NAME, q0[i], qd0[i] or control.params.NAME");
}

Distribution parse_distribution(const json& j, const std::string& path) {
  require_object(j, path);
  if (j.size() != 1)
    fail(path, "expected exactly one distribution: uniform, normal, lognormal or values");
  const std::string kind = j.begin().key();
  const json& arg = j.begin().value();
  const std::string p = member(path, kind);
  Distribution d;
  if (kind == "values") {
    d.kind = Distribution::Kind::kValues;
    if (!arg.is_array() || arg.empty()) fail(p, "must be a non-empty array of numbers");
    for (std::size_t i = 0; i < arg.size(); ++i)
      d.values.push_back(get_number(arg[i], element(p, i)));
    return d;
  }
  if (kind == "uniform") {
    d.kind = Distribution::Kind::kUniform;
  } else if (kind == "normal") {
    d.kind = Distribution::Kind::kNormal;
  } else if (kind == "lognormal") {
    d.kind = Distribution::Kind::kLognormal;
  } else {
    fail(p, "unknown distribution (expected uniform, normal, lognormal or values)");
  }
  if (!arg.is_array() || arg.size() != 2) fail(p, "must be an array of two numbers");
  d.a = get_number(arg[0], element(p, 0));
  d.b = get_number(arg[1], element(p, 1));
  if (d.kind == Distribution::Kind::kUniform && d.a > d.b)
    fail(p, "lower bound " + number_text(d.a) + " exceeds upper bound " + number_text(d.b));
  if (d.kind == Distribution::Kind::kNormal && d.b < 0)
    fail(p, "standard deviation must be >= 0, got " + number_text(d.b));
  if (d.kind == Distribution::Kind::kLognormal && d.b < 0)
    fail(p, "sigma must be >= 0, got " + number_text(d.b));
  return d;
}

SweepSpec parse_sweep(const json& j, const ModelInfo& m) {
  const std::string path = "sweep";
  require_object(j, path);
  check_keys(j, path, {"count", "seed", "sampler", "vary"});
  SweepSpec s;
  const json* count = find(j, "count");
  if (!count) fail("sweep.count", "required");
  s.count = get_integer(*count, "sweep.count", 1, std::numeric_limits<std::int64_t>::max());
  if (const json* seed = find(j, "seed")) {
    if (seed->is_number_unsigned()) {
      s.seed = seed->get<std::uint64_t>();
    } else {
      s.seed = static_cast<std::uint64_t>(
          get_integer(*seed, "sweep.seed", 0, std::numeric_limits<std::int64_t>::max()));
    }
  }
  if (const json* sampler = find(j, "sampler")) {
    s.sampler = get_choice<Sampler>(
        *sampler, "sweep.sampler", "sampler",
        {{"random", Sampler::kRandom}, {"lhs", Sampler::kLhs}, {"sobol", Sampler::kSobol}});
  }
  if (const json* vary = find(j, "vary")) {
    require_object(*vary, "sweep.vary");
    // nlohmann::json objects iterate in sorted key order: dimension d is the d-th name.
    for (auto it = vary->begin(); it != vary->end(); ++it) {
      const std::string p = member("sweep.vary", it.key());
      SweepDimension dim;
      dim.name = it.key();
      dim.target = parse_target(it.key(), p, m);
      dim.distribution = parse_distribution(it.value(), p);
      s.dimensions.push_back(std::move(dim));
    }
  }
  if (s.sampler == Sampler::kSobol &&
      s.dimensions.size() > static_cast<std::size_t>(sampling::kSobolMaxDims))
    fail("sweep.vary", "the sobol sampler supports at most " +
                           std::to_string(sampling::kSobolMaxDims) + " dimensions, got " +
                           std::to_string(s.dimensions.size()));
  return s;
}

void parse_trajectories(const json& j, std::int64_t count, OutputSpec& out) {
  const std::string path = "output.trajectories";
  if (j.is_string()) {
    const std::string s = j.get<std::string>();
    if (s == "none") {
      out.trajectories = TrajectoryMode::kNone;
      return;
    }
    if (s == "all") {
      out.trajectories = TrajectoryMode::kAll;
      return;
    }
    if (s.rfind("first:", 0) == 0) {
      const std::string digits = s.substr(6);
      bool ok = !digits.empty() && digits.size() <= 18;
      for (char c : digits) ok = ok && c >= '0' && c <= '9';
      if (ok) {
        out.trajectories = TrajectoryMode::kFirst;
        out.first = std::stoll(digits);
        return;
      }
    }
    fail(path, "expected none, all, first:N or a list of system ids, got '" + s + "'");
  }
  if (!j.is_array())
    fail(path, "expected none, all, first:N or a list of system ids, got " + kind_of(j));
  out.trajectories = TrajectoryMode::kList;
  std::set<std::int64_t> seen;
  for (std::size_t i = 0; i < j.size(); ++i) {
    const std::string p = element(path, i);
    if (!j[i].is_number()) fail(p, "must be a system id (an integer), got " + kind_of(j[i]));
    const std::int64_t id = get_integer(j[i], p, std::numeric_limits<std::int64_t>::min(),
                                        std::numeric_limits<std::int64_t>::max());
    if (id < 0 || id >= count)
      fail(p,
           "system id " + std::to_string(id) + " out of range [0, " + std::to_string(count) + ")");
    if (!seen.insert(id).second) fail(p, "duplicate system id " + std::to_string(id));
    out.listed_ids.push_back(static_cast<std::int32_t>(id));
  }
}

void parse_fields(const json& j, bool controlled, OutputSpec& out) {
  const std::string path = "output.fields";
  if (!j.is_array() || j.empty())
    fail(path, "must be a non-empty array of field names (q, qd, residual, force)");
  out.q = out.qd = out.residual = out.force = out.control = false;
  for (std::size_t i = 0; i < j.size(); ++i) {
    const std::string p = element(path, i);
    const std::string name = get_string(j[i], p);
    bool* flag = name == "q"          ? &out.q
                 : name == "qd"       ? &out.qd
                 : name == "residual" ? &out.residual
                 : name == "force"    ? &out.force
                 : name == "control"  ? &out.control
                                      : nullptr;
    if (!flag) fail(p, "unknown field '" + name + "' (expected q, qd, residual, force or control)");
    if (flag == &out.control && !controlled) fail(p, "the spec has no control section");
    if (*flag) fail(p, "duplicate field '" + name + "'");
    *flag = true;
  }
}

// The batch of the spec's explicit systems (b.model and b.count set).
void build_explicit_batch(const std::vector<ExplicitSystem>& systems, Batch& b) {
  const ModelInfo& m = *b.model;
  const int c = b.count;
  b.params.resize(m.params.size() * static_cast<std::size_t>(c));
  for (std::size_t k = 0; k < m.params.size(); ++k)
    for (int i = 0; i < c; ++i)
      b.param(static_cast<int>(k), i) = systems[static_cast<std::size_t>(i)].params[k];
  default_initial_states(b, b.q0, b.qd0);
  for (int i = 0; i < c; ++i) {
    const ExplicitSystem& es = systems[static_cast<std::size_t>(i)];
    for (int j = 0; j < m.n; ++j) {
      if (!es.q0.empty()) b.q(j, i) = es.q0[static_cast<std::size_t>(j)];
      if (!es.qd0.empty()) b.qd(j, i) = es.qd0[static_cast<std::size_t>(j)];
    }
  }
}

// Systems [first, first + count) of `all` into `part` (structure of arrays: each component row is
// sliced).
void slice_batch(const Batch& all, int first, int count, Batch& part) {
  const auto take = [&](const std::vector<double>& src, std::vector<double>& dst) {
    const std::size_t rows = all.count > 0 ? src.size() / all.count : 0;
    dst.resize(rows * count);
    for (std::size_t r = 0; r < rows; ++r)
      std::copy_n(src.begin() + static_cast<std::ptrdiff_t>(r * all.count + first), count,
                  dst.begin() + static_cast<std::ptrdiff_t>(r * count));
  };
  for_each_input([&](const FieldInfo&, const auto& src, auto& dst) { take(src, dst); }, all, part);
}

// "control.actuation" when it is a matrix (an array of arrays), else null.
const json* actuation_matrix_of(const json& spec) {
  const json* control = find(spec, "control");
  const json* a = control && control->is_object() ? find(*control, "actuation") : nullptr;
  return a && a->is_array() && !a->empty() && a->front().is_array() ? a : nullptr;
}

// A user model the spec defines inline or names by id; null for a catalogue model.
std::shared_ptr<const ModelInfo> resolve_model(const json& model, const ParseOptions& options) {
  if (model.is_object()) return user_model_from_json(model, "model");
  const std::string name = get_string(model, "model");
  if (is_model_id(name)) {
    if (!options.models) fail("model", "model ids name models registered with a server");
    if (auto found = options.models->find(options.model_owner, name)) return found;
    fail("model", "no model is registered with id '" + name + "' (RegisterModel first)");
  }
  if (!find_model(name)) {
    std::vector<std::string> names;
    for (const auto& info : catalogue_info()) names.push_back(info.name);
    fail("model", "unknown model '" + name + "' (models: " + join_names(names) +
                      "; or a definition object, docs/MODEL_FORMAT.md)");
  }
  return nullptr;
}

// "model" (a catalogue name, a registered model's id or a definition) and "description".
void parse_model(const json& spec, const ParseOptions& options, RunSpec& rs) {
  const json* model = find(spec, "model");
  if (!model) fail("model", "required");
  rs.user_model = resolve_model(*model, options);
  // A controlled run's actuation matrix of expressions is compiled into the user model's program
  // here, before anything reads the model.
  if (const json* matrix = actuation_matrix_of(spec); matrix && rs.user_model)
    rs.user_model = with_actuation_matrix(*rs.user_model, *matrix, "control.actuation");
  rs.model = rs.user_model ? rs.user_model.get() : find_model(model->get<std::string>());
  if (const json* d = find(spec, "description")) get_string(*d, "description");
}

// The systems a spec runs, before any batch is built: its explicit ones, or how many a sweep or
// the one default system makes; count_field names the field a LimitError on the count points at.
struct SpecSystems {
  std::vector<ExplicitSystem> explicit_systems;
  std::int64_t count = 1;
  std::string count_field = "systems";
};

// "systems": each system's parameters (the shared ones, overridden) and initial conditions.
std::vector<ExplicitSystem> parse_explicit_systems(const json& systems, const ModelInfo& m,
                                                   const std::vector<double>& shared_params) {
  if (!systems.is_array() || systems.empty())
    fail("systems", "must be a non-empty array of systems");
  std::vector<ExplicitSystem> parsed;
  for (std::size_t i = 0; i < systems.size(); ++i) {
    const std::string p = element("systems", i);
    const json& sj = systems[i];
    require_object(sj, p);
    check_keys(sj, p, {"params", "q0", "qd0"});
    ExplicitSystem es;
    es.params = shared_params;
    if (const json* sp = find(sj, "params")) parse_params(*sp, member(p, "params"), m, es.params);
    if (const json* q0 = find(sj, "q0")) es.q0 = parse_vector(*q0, member(p, "q0"), m);
    if (const json* qd0 = find(sj, "qd0")) es.qd0 = parse_vector(*qd0, member(p, "qd0"), m);
    parsed.push_back(std::move(es));
  }
  return parsed;
}

// "systems" or "sweep" (one or the other); neither: one system of the shared parameters.
SpecSystems parse_systems(const json& spec, RunSpec& rs) {
  const json* systems = find(spec, "systems");
  const json* sweep = find(spec, "sweep");
  if (systems && sweep) fail("sweep", "systems and sweep are exclusive: give one or the other");
  SpecSystems parsed;
  if (systems) {
    parsed.explicit_systems = parse_explicit_systems(*systems, *rs.model, rs.params);
    parsed.count = static_cast<std::int64_t>(parsed.explicit_systems.size());
    rs.explicit_systems = true;
  } else if (sweep) {
    rs.sweep = parse_sweep(*sweep, *rs.model);
    parsed.count = rs.sweep->count;
    parsed.count_field = "sweep.count";
  }
  return parsed;
}

// "shard": which of the `whole` systems the spec describes this run integrates.
SystemRange parse_shard(const json& j, std::int64_t whole) {
  require_object(j, "shard");
  check_keys(j, "shard", {"first", "count"});
  const json* first = find(j, "first");
  if (!first) fail("shard.first", "required");
  const json* count = find(j, "count");
  if (!count) fail("shard.count", "required");
  SystemRange r;
  r.first = get_integer(*first, "shard.first", 0, whole - 1);
  r.count = get_integer(*count, "shard.count", 1, whole - r.first);
  return r;
}

// The shard's systems alone: explicit ones outside it are dropped, and the limits judge its count.
void narrow_to_shard(const SystemRange& shard, SpecSystems& systems) {
  auto& explicit_systems = systems.explicit_systems;
  if (!explicit_systems.empty()) {
    explicit_systems.erase(explicit_systems.begin() + shard.end(), explicit_systems.end());
    explicit_systems.erase(explicit_systems.begin(), explicit_systems.begin() + shard.first);
  }
  systems.count = shard.count;
  systems.count_field = "shard.count";
}

// The fields of "integrator" into s; true when it gives dt.
bool read_integrator(const json& in, EnsembleSettings& s) {
  require_object(in, "integrator");
  check_keys(in, "integrator", {"method", "t0", "t_end", "dt", "rtol", "atol", "max_steps"});
  if (const json* v = find(in, "method")) {
#define UKES_METHOD_CHOICE(id, name) {name, Method::id},
    s.method =
        get_choice<Method>(*v, "integrator.method", "method", {UKES_METHODS(UKES_METHOD_CHOICE)});
#undef UKES_METHOD_CHOICE
  }
  if (const json* v = find(in, "t0")) s.t0 = get_number(*v, "integrator.t0");
  if (const json* v = find(in, "t_end")) s.t_end = get_number(*v, "integrator.t_end");
  bool dt_given = false;
  if (const json* v = find(in, "dt")) {
    s.dt = get_number(*v, "integrator.dt");
    dt_given = true;
  }
  if (const json* v = find(in, "rtol")) s.rtol = get_number(*v, "integrator.rtol");
  if (const json* v = find(in, "atol")) s.atol = get_number(*v, "integrator.atol");
  if (const json* v = find(in, "max_steps"))
    s.max_steps =
        get_integer(*v, "integrator.max_steps", 1, std::numeric_limits<std::int64_t>::max());
  return dt_given;
}

// "integrator" (null when the spec has none) over the run defaults, then checked as a whole: a
// finite interval forward in time, positive tolerances, and a step for rk4 (1000 of the interval
// unless given).
void parse_integrator(const json* in, EnsembleSettings& s) {
  s.rtol = s.atol = 1e-9;
  s.max_steps = 1000000;
  s.threads = 0;
  const bool dt_given = in && read_integrator(*in, s);
  if (!(s.t_end > s.t0))
    fail("integrator.t_end",
         "must be greater than t0 = " + number_text(s.t0) + ", got " + number_text(s.t_end));
  if (!std::isfinite(s.t_end - s.t0))
    fail("integrator.t_end", "t_end - t0 overflows: the interval must be a finite number");
  if (!(s.rtol > 0)) fail("integrator.rtol", "must be > 0, got " + number_text(s.rtol));
  if (!(s.atol > 0)) fail("integrator.atol", "must be > 0, got " + number_text(s.atol));
  if (s.method == Method::kRk4) {
    if (!dt_given) s.dt = (s.t_end - s.t0) / 1000.0;
    if (!(s.dt > 0)) fail("integrator.dt", "rk4 needs a step dt > 0, got " + number_text(s.dt));
  } else if (s.dt < 0) {
    fail("integrator.dt", std::string(method_name(s.method)) +
                              " first trial step must be >= 0 (0: automatic), got " +
                              number_text(s.dt));
  }
}

// "stabilization": Baumgarte gains, projection and its tolerances.
void parse_stabilization(const json& st, EnsembleSettings& s) {
  require_object(st, "stabilization");
  check_keys(st, "stabilization",
             {"alpha", "beta", "projection", "inconsistency_tol", "projection_tol"});
  if (const json* v = find(st, "alpha")) s.alpha = get_number(*v, "stabilization.alpha");
  if (const json* v = find(st, "beta")) s.beta = get_number(*v, "stabilization.beta");
  if (const json* v = find(st, "projection"))
    s.projection = get_bool(*v, "stabilization.projection");
  if (const json* v = find(st, "inconsistency_tol")) {
    s.inconsistency_tol = get_number(*v, "stabilization.inconsistency_tol");
    if (!(s.inconsistency_tol > 0)) fail("stabilization.inconsistency_tol", "must be > 0");
  }
  if (const json* v = find(st, "projection_tol")) {
    s.projection_tol = get_number(*v, "stabilization.projection_tol");
    if (!(s.projection_tol > 0)) fail("stabilization.projection_tol", "must be > 0");
  }
  if (s.alpha < 0) fail("stabilization.alpha", "Baumgarte gain must be >= 0");
  if (s.beta < 0) fail("stabilization.beta", "Baumgarte gain must be >= 0");
}

// "control.rows": "all" or a list of distinct row indices (position rows first).
std::uint64_t parse_servo_rows(const json& j, int rows) {
  if (j.is_string() && j.get<std::string>() == "all") return all_rows_mask(rows);
  if (!j.is_array() || j.empty())
    fail("control.rows", "expected \"all\" or a non-empty array of row indices 0.." +
                             std::to_string(rows - 1) + ", got " + kind_of(j));
  std::uint64_t mask = 0;
  for (std::size_t i = 0; i < j.size(); ++i) {
    const std::string p = element("control.rows", i);
    const auto r = static_cast<int>(get_integer(j[i], p, 0, rows - 1));
    if (has_bit(mask, r)) fail(p, "row " + std::to_string(r) + " is listed twice");
    mask |= std::uint64_t{1} << r;
  }
  return mask;
}

// "control.actuation": "full" (B = I), the names of the actuated coordinates, or (user models)
// an actuation matrix of expressions, which parse_model compiled into the model.
void parse_actuation(const json& j, const ModelInfo& m, ControlOptions& o) {
  if (j.is_string() && j.get<std::string>() == "full") return;
  if (j.is_array() && !j.empty() && j.front().is_array()) {
    if (!m.user)
      fail("control.actuation", "an actuation matrix of expressions needs a user model; model " +
                                    m.name + " takes \"full\" or coordinate names (" +
                                    join_names(m.coordinates) + ")");
    o.actuation = Actuation::kMatrix;
    return;
  }
  if (!j.is_array() || j.empty())
    fail("control.actuation", "expected \"full\", a non-empty array of coordinate names (" +
                                  join_names(m.coordinates) +
                                  ") or, for user models, an n x k matrix of expressions");
  o.actuation = Actuation::kCoordinates;
  o.actuated = 0;
  for (std::size_t i = 0; i < j.size(); ++i) {
    const std::string p = element("control.actuation", i);
    const std::string name = get_string(j[i], p);
    const auto it = std::find(m.coordinates.begin(), m.coordinates.end(), name);
    if (it == m.coordinates.end())
      fail(p, "unknown coordinate of model " + m.name + " (" + join_names(m.coordinates) + ")");
    const auto j_index = static_cast<int>(it - m.coordinates.begin());
    if (has_bit(o.actuated, j_index)) fail(p, "coordinate listed twice");
    o.actuated |= std::uint64_t{1} << j_index;
  }
}

// "control.robust": {gain >= 0, epsilon > 0}.
void parse_robust(const json& j, ControlOptions& o) {
  require_object(j, "control.robust");
  check_keys(j, "control.robust", {"gain", "epsilon"});
  if (const json* v = find(j, "gain")) o.gain = get_number(*v, "control.robust.gain");
  if (const json* v = find(j, "epsilon")) o.epsilon = get_number(*v, "control.robust.epsilon");
  if (!(o.gain >= 0)) fail("control.robust.gain", "must be >= 0, got " + number_text(o.gain));
  if (!(o.epsilon > 0))
    fail("control.robust.epsilon", "must be > 0, got " + number_text(o.epsilon));
}

// The servo rows in the order "control.rows" lists them ("all": row order).
std::vector<int> listed_servo_rows(const json* rows_json, std::uint64_t mask, int rows) {
  std::vector<int> listed;
  if (rows_json && rows_json->is_array()) {
    for (const json& r : *rows_json) listed.push_back(r.get<int>());
  } else {
    for (int r = 0; r < rows; ++r)
      if (has_bit(mask, r)) listed.push_back(r);
  }
  return listed;
}

// "control.relative_degree": how often each servo row is differentiated before the input appears
// in it (docs/CONTROL.md, "Relative degree"): one integer for every servo row, or one per entry of
// "control.rows". A row's own order (2: position row, 1: velocity row) is the default; a higher
// degree is followed through the controller's Taylor series (kernels/uk/servo_derivatives.hpp),
// with every row a servo row and no robust term.
void parse_relative_degree(const json& j, const json* rows_json, const ModelInfo& m,
                           ControlOptions& o) {
  const std::vector<int> listed = listed_servo_rows(rows_json, o.servo_rows, m.rows());
  if (!j.is_number() && !(j.is_array() && j.size() == listed.size()))
    fail("control.relative_degree",
         "expected an integer or an array of one integer per servo row (" +
             std::to_string(listed.size()) + "), got " + kind_of(j));
  for (std::size_t k = 0; k < listed.size(); ++k) {
    const std::string p =
        j.is_array() ? element("control.relative_degree", k) : "control.relative_degree";
    const int row = listed[k];
    const int order = row < m.position_rows ? 2 : 1;
    const auto degree =
        static_cast<int>(get_integer(j.is_array() ? j[k] : j, p, 1, kMaxRelativeDegree));
    if (degree < order)
      fail(p, "row " + std::to_string(row) + " is a " + (order == 2 ? "position" : "velocity") +
                  " row: its relative degree is " + std::to_string(order) + " to " +
                  std::to_string(kMaxRelativeDegree) + ", got " + std::to_string(degree));
    if (degree == order) continue;
    o.higher_degree_rows |= std::uint64_t{1} << row;
    o.relative_degree[static_cast<std::size_t>(row)] = static_cast<std::uint8_t>(degree);
  }
  if (o.higher_degree_rows == 0) return;
  if (o.servo_rows != all_rows_mask(m.rows()))
    fail("control.relative_degree",
         "rows of a higher relative degree need every row a servo row (\"rows\": \"all\"): the "
         "controller's series follow its unconstrained nominal motion");
  if (o.gain > 0)
    fail("control.robust",
         "the robust term applies to rows of their own order; rows of a higher relative degree "
         "take none (docs/CONTROL.md)");
}

// "control": constraint-following control by a controller with its own model (docs/CONTROL.md).
// The controller's parameters are the model's defaults with control.params applied.
void parse_control(const json& c, RunSpec& rs) {
  const ModelInfo& m = *rs.model;
  require_object(c, "control");
  check_keys(c, "control", {"rows", "params", "actuation", "robust", "relative_degree"});
  const int rows = m.rows();
  if (rows == 0) fail("control", "model " + m.name + " has no constraint rows to follow");
  if (rows > kMaxControlRows || m.n > kMaxControlRows)
    fail("control", "control takes models of at most " + std::to_string(kMaxControlRows) +
                        " coordinates and rows");
  ControlOptions& o = rs.settings.control;
  o.active = true;
  o.servo_rows = parse_servo_rows(find(c, "rows") ? *find(c, "rows") : json("all"), rows);
  rs.control_params = m.default_params();
  if (const json* p = find(c, "params")) parse_params(*p, "control.params", m, rs.control_params);
  if (const json* a = find(c, "actuation")) parse_actuation(*a, m, o);
  if (const json* r = find(c, "robust")) parse_robust(*r, o);
  if (const json* d = find(c, "relative_degree")) parse_relative_degree(*d, find(c, "rows"), m, o);
}

// What control asks of the rest of the spec: no step projection with it, rk4 or dopri5 with rows
// of a higher relative degree, no sweep of the controller's parameters without it; its trajectory
// field in the default output.
void check_control_consistency(RunSpec& rs) {
  const bool controlled = rs.settings.control.active;
  if (controlled && rs.settings.control.higher_degree_rows != 0 &&
      rs.settings.method == Method::kRosenbrock)
    fail("integrator.method",
         "rows of a higher relative degree are followed with rk4 or dopri5: the rosenbrock "
         "method's Jacobian does not differentiate the controller's series");
  if (controlled && rs.settings.projection)
    fail("stabilization.projection",
         "a controlled run cannot project onto its rows: the projection would move the plant "
         "onto the servo path the controller is judged by (leave it false)");
  if (rs.sweep && !controlled)
    for (const SweepDimension& dim : rs.sweep->dimensions)
      if (dim.target.kind == SweepTarget::Kind::kControlParam)
        fail(member("sweep.vary", dim.name), "the spec has no control section");
  rs.output.control = controlled;
}

// Every system's controller parameters: the spec's (before any sweep of them).
void fill_control_params(const RunSpec& rs, Batch& b) {
  if (!rs.settings.control.active) return;
  b.control_params.resize(rs.control_params.size() * static_cast<std::size_t>(b.count));
  for (std::size_t k = 0; k < rs.control_params.size(); ++k)
    std::fill_n(b.control_params.begin() + static_cast<std::ptrdiff_t>(k * b.count), b.count,
                rs.control_params[k]);
}

// "device_ids": the GPUs a run spreads its slices over (default: every usable one), each once.
// Checked against the devices here when the run will use the GPU; an `auto` run that lands on
// the CPU has no use for them.
void parse_device_ids(const json& j, const ParseOptions& options, RunSpec& rs) {
  if (!j.is_array() || j.empty())
    fail("device_ids", "must be a non-empty array of GPU ordinals, got " + kind_of(j));
  if (rs.device == Device::kCpu) fail("device_ids", "a run with device cpu uses no GPU");
  std::vector<int> ids;
  for (std::size_t k = 0; k < j.size(); ++k) {
    const auto id =
        static_cast<int>(get_integer(j[k], element("device_ids", k), 0, kMaxGpuDevices - 1));
    if (std::find(ids.begin(), ids.end(), id) != ids.end())
      fail(element("device_ids", k), "GPU " + std::to_string(id) + " is listed twice");
    if (rs.device_resolved == Device::kGpu && id >= options.gpu_devices)
      fail(element("device_ids", k), "no GPU " + std::to_string(id) + " here (" +
                                         std::to_string(options.gpu_devices) + " found)");
    const std::vector<int>& allowed = options.gpu_allowed;
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), id) == allowed.end())
      fail(element("device_ids", k),
           "GPU " + std::to_string(id) + " is not among the server's (ukes-server --devices)");
    ids.push_back(id);
  }
  rs.device_ids = std::move(ids);
}

// "device", and the backend the run gets here (rs.device_resolved) with the reason an `auto` run
// would take the CPU: no usable GPU, or a user model too large for the GPU module's code.
void parse_device(const json& spec, const ParseOptions& options, RunSpec& rs) {
  if (const json* v = find(spec, "device")) {
    rs.device =
        get_choice<Device>(*v, "device", "device",
                           {{"auto", Device::kAuto}, {"cpu", Device::kCpu}, {"gpu", Device::kGpu}});
  }
  if (rs.device == Device::kGpu && !options.gpu_available)
    fail("device", "gpu requested but no GPU can be used here: " + options.gpu_unavailable_reason +
                       " (use auto or cpu)");
  rs.cpu_reason = options.gpu_unavailable_reason;
  bool gpu_can_run = options.gpu_available;
  if (rs.user_model && rs.model->user->bucket > kMaxGpuUserBucket) {
    rs.cpu_reason = "user models with more than " + std::to_string(kMaxGpuUserBucket) +
                    " coordinates or constraint rows run on the CPU only";
    if (rs.device == Device::kGpu) fail("device", rs.cpu_reason + " (use auto or cpu)");
    gpu_can_run = false;
  }
  rs.device_resolved = rs.device != Device::kCpu && gpu_can_run ? Device::kGpu : Device::kCpu;
  if (const json* ids = find(spec, "device_ids")) parse_device_ids(*ids, options, rs);
}

// An expression as a spec gives it: text, or a number (its JSON text).
std::string expression_text(const json& j, const std::string& path) {
  if (j.is_number()) return j.dump();
  if (!j.is_string()) fail(path, "must be an expression (a string or a number), got " + kind_of(j));
  return j.get<std::string>();
}

// An event's name: a name of the expression language, unique among the run's events.
std::string parse_event_name(const json& j, const std::string& path,
                             const std::vector<EventSpec>& before) {
  constexpr std::size_t kMaxEventName = 64;
  const std::string name = get_string(j, path);
  const bool identifier = !name.empty() && name.size() <= kMaxEventName &&
                          std::isdigit(static_cast<unsigned char>(name[0])) == 0 &&
                          std::all_of(name.begin(), name.end(), [](char c) {
                            return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
                          });
  if (!identifier) fail(path, "must be 1 to 64 letters, digits and _, not starting with a digit");
  for (const EventSpec& other : before)
    if (other.name == name) fail(path, "names an event twice");
  return name;
}

// An event's "reset": {"q": [n expressions], "qd": [n expressions]}, either or both.
void parse_event_reset(const json& j, const std::string& path, const ModelInfo& m,
                       EventSpec& event) {
  require_object(j, path);
  check_keys(j, path, {"q", "qd"});
  if (j.empty()) fail(path, "must give q, qd or both");
  const auto read = [&](const char* part, std::vector<std::string>& out) {
    const json* v = find(j, part);
    if (v == nullptr) return;
    const std::string at = member(path, part);
    if (!v->is_array() || v->size() != static_cast<std::size_t>(m.n))
      fail(at, "must be an array of " + std::to_string(m.n) + " expressions, one per coordinate");
    for (std::size_t k = 0; k < v->size(); ++k)
      out.push_back(expression_text((*v)[k], element(at, k)));
  };
  read("q", event.reset_q);
  read("qd", event.reset_qd);
}

EventSpec parse_event(const json& j, const std::string& path, const ModelInfo& m,
                      const std::vector<EventSpec>& before) {
  require_object(j, path);
  check_keys(j, path, {"name", "condition", "direction", "action", "reset", "max"});
  EventSpec event;
  const json* name = find(j, "name");
  if (name == nullptr) fail(member(path, "name"), "required");
  event.name = parse_event_name(*name, member(path, "name"), before);
  const json* condition = find(j, "condition");
  if (condition == nullptr) fail(member(path, "condition"), "required");
  event.condition = expression_text(*condition, member(path, "condition"));
#define UKES_EVENT_CHOICE(id, text) {text, EventDirection::id},
  if (const json* v = find(j, "direction"))
    event.direction = get_choice<EventDirection>(*v, member(path, "direction"), "direction",
                                                 {UKES_EVENT_DIRECTIONS(UKES_EVENT_CHOICE)});
#undef UKES_EVENT_CHOICE
#define UKES_EVENT_CHOICE(id, text) {text, EventAction::id},
  if (const json* v = find(j, "action"))
    event.action = get_choice<EventAction>(*v, member(path, "action"), "action",
                                           {UKES_EVENT_ACTIONS(UKES_EVENT_CHOICE)});
#undef UKES_EVENT_CHOICE
  const json* reset = find(j, "reset");
  if ((reset != nullptr) != (event.action == EventAction::kReset))
    fail(member(path, "reset"), reset != nullptr ? "is given only with action \"reset\""
                                                 : "required with action \"reset\"");
  if (reset != nullptr) parse_event_reset(*reset, member(path, "reset"), m, event);
  event.max = kDefaultEventRecords;
  if (const json* v = find(j, "max"))
    event.max = static_cast<int>(get_integer(*v, member(path, "max"), 0, kMaxEventRecords));
  return event;
}

// "events" (docs/EVENTS.md): checked here, compiled for the model by compile_events.
void parse_events(const json& j, RunSpec& rs) {
  if (!j.is_array()) fail("events", "must be an array, got " + kind_of(j));
  if (j.size() > static_cast<std::size_t>(kMaxEvents))
    throw LimitError("events", std::to_string(j.size()) + " events exceed the limit of " +
                                   std::to_string(kMaxEvents));
  std::vector<EventSpec> events;
  for (std::size_t e = 0; e < j.size(); ++e)
    events.push_back(parse_event(j[e], element("events", e), *rs.model, events));
  compile_events(events, *rs.model, rs.settings);
}

// The event records' bytes (each record a time, q and qd) against the trajectories' limit.
void check_event_bytes(const SpecLimits& lim, const RunSpec& rs, std::int64_t systems) {
  const EventTable& table = rs.settings.events;
  const std::int64_t per_system = std::int64_t{8} * table.count * table.records *
                                  (1 + 2 * static_cast<std::int64_t>(rs.model->n));
  if (per_system > 0 && systems > lim.max_trajectory_bytes / per_system)
    throw LimitError("events", std::to_string(systems) + " systems keeping " +
                                   std::to_string(table.records) +
                                   " records of each event need more than the limit of " +
                                   std::to_string(lim.max_trajectory_bytes) + " bytes");
}

// "gpu_path"; a user model has only the fused path.
GpuPath parse_gpu_path(const json& j, const RunSpec& rs) {
  const auto path = get_choice<GpuPath>(j, "gpu_path", "gpu_path",
                                        {{"auto", GpuPath::kAuto},
                                         {"fused", GpuPath::kFused},
                                         {"warp", GpuPath::kWarp},
                                         {"cusolver", GpuPath::kCusolver}});
  if (rs.user_model && path != GpuPath::kAuto && path != GpuPath::kFused)
    fail("gpu_path", "user models run on the fused GPU path: give auto or fused");
  if (rs.settings.control.active && path != GpuPath::kAuto && path != GpuPath::kFused)
    fail("gpu_path", "controlled runs take the fused GPU path: give auto or fused");
  if (rs.settings.method == Method::kRosenbrock && path != GpuPath::kAuto &&
      path != GpuPath::kFused)
    fail("gpu_path", "the rosenbrock method takes the fused GPU path: give auto or fused");
  if (rs.settings.events.count > 0 && path != GpuPath::kAuto && path != GpuPath::kFused)
    fail("gpu_path", "events are located on the fused GPU path: give auto or fused");
  return path;
}

// "output" (null when the spec has none) into `out`, but for the samples: returned as given, for
// the limits to judge before they are narrowed into out.samples.
std::int64_t parse_output(const json* o, std::int64_t count, bool controlled, OutputSpec& out) {
  std::int64_t samples = out.samples;
  if (!o) return samples;
  require_object(*o, "output");
  check_keys(*o, "output", {"samples", "trajectories", "fields"});
  if (const json* v = find(*o, "samples"))
    samples = get_integer(*v, "output.samples", 2, std::numeric_limits<std::int64_t>::max());
  if (const json* v = find(*o, "trajectories")) parse_trajectories(*v, count, out);
  if (const json* v = find(*o, "fields")) parse_fields(*v, controlled, out);
  return samples;
}

// The systems and samples a valid spec asks for, against the limits (never past INT32_MAX: system
// ids are 32-bit, so a sharded run's whole count is held to that too).
void check_size_limits(const SpecLimits& lim, const SpecSystems& systems, std::int64_t whole,
                       std::int64_t samples) {
  constexpr std::int64_t kMaxIds = std::numeric_limits<std::int32_t>::max();
  if (whole != systems.count && whole > kMaxIds)
    throw LimitError(systems.explicit_systems.empty() ? "sweep.count" : "systems",
                     std::to_string(whole) + " systems exceed the limit of " +
                         std::to_string(kMaxIds) + " system ids");
  const std::int64_t max_systems = std::min<std::int64_t>(lim.max_systems, kMaxIds);
  if (systems.count > max_systems)
    throw LimitError(systems.count_field, std::to_string(systems.count) +
                                              " systems exceed the limit of " +
                                              std::to_string(max_systems));
  const std::int64_t max_samples =
      std::min<std::int64_t>(lim.max_samples, std::numeric_limits<std::int32_t>::max());
  if (samples > max_samples)
    throw LimitError("output.samples", std::to_string(samples) + " samples exceed the limit of " +
                                           std::to_string(max_samples));
}

void check_trajectory_bytes(const SpecLimits& lim, const ModelInfo& m, std::int64_t n_out,
                            std::int64_t samples) {
  const std::int64_t bytes = trajectory_bytes(m, n_out, samples);
  if (bytes > lim.max_trajectory_bytes)
    throw LimitError("output.trajectories",
                     std::to_string(n_out) + " trajectories of " + std::to_string(samples) +
                         " samples need " + std::to_string(bytes) + " bytes, over the limit of " +
                         std::to_string(lim.max_trajectory_bytes));
}

// The recorded systems among the shard's, as batch indices (a list came resolved from the spec,
// in whole-run ids; all and first:N are resolved here), and their trajectories of out.samples
// samples checked against the memory limit.
void resolve_trajectories(const SpecLimits& lim, const ModelInfo& m, std::int64_t whole,
                          const SystemRange& shard, OutputSpec& out) {
  switch (out.trajectories) {
    case TrajectoryMode::kNone:
      break;
    case TrajectoryMode::kAll:
    case TrajectoryMode::kFirst: {
      const std::int64_t recorded =
          out.trajectories == TrajectoryMode::kAll ? whole : std::min(out.first, whole);
      const std::int64_t n_out =
          std::max<std::int64_t>(0, std::min(recorded, shard.end()) - shard.first);
      check_trajectory_bytes(lim, m, n_out, out.samples);
      for (std::int64_t i = 0; i < n_out; ++i)
        out.trajectory_ids.push_back(static_cast<std::int32_t>(i));
      break;
    }
    case TrajectoryMode::kList: {
      for (const std::int32_t id : out.listed_ids)
        if (id >= shard.first && id < shard.end())
          out.trajectory_ids.push_back(static_cast<std::int32_t>(id - shard.first));
      check_trajectory_bytes(lim, m, static_cast<std::int64_t>(out.trajectory_ids.size()),
                             out.samples);
      break;
    }
  }
}

// The batch: explicit systems now (they are in the spec already), generated ones on demand.
void build_batch(const SpecSystems& systems, const ParseOptions& options, RunSpec& rs) {
  rs.batch.model = rs.model;
  rs.batch.count = static_cast<int>(systems.count);
  if (rs.explicit_systems) {
    build_explicit_batch(systems.explicit_systems, rs.batch);
    fill_control_params(rs, rs.batch);
  } else if (options.build_batch) {
    rs.batch = batch_slice(rs, 0, rs.batch.count);
  }
}

}  // namespace

RunSpec parse_run_spec(const json& spec, const ParseOptions& options) {
  if (!spec.is_object()) fail("spec", "must be a JSON object, got " + kind_of(spec));
  check_keys(spec, "",
             {"model", "description", "params", "systems", "sweep", "assemble", "integrator",
              "stabilization", "control", "events", "precision", "device", "device_ids", "gpu_path",
              "output", "shard"});
  RunSpec rs;
  parse_model(spec, options, rs);
  const ModelInfo& m = *rs.model;
  rs.params = m.default_params();  // shared by every system
  if (const json* p = find(spec, "params")) parse_params(*p, "params", m, rs.params);
  SpecSystems systems = parse_systems(spec, rs);
  rs.whole_count = systems.count;
  rs.shard = {0, systems.count};
  if (const json* sh = find(spec, "shard")) {
    rs.shard = parse_shard(*sh, rs.whole_count);
    narrow_to_shard(rs.shard, systems);
  }

  EnsembleSettings& s = rs.settings;
  s = EnsembleSettings::for_model(m);
  if (const json* a = find(spec, "assemble")) s.assemble = get_bool(*a, "assemble");
  parse_integrator(find(spec, "integrator"), s);
  if (const json* st = find(spec, "stabilization")) parse_stabilization(*st, s);
  if (const json* c = find(spec, "control")) parse_control(*c, rs);
  check_control_consistency(rs);
  if (const json* e = find(spec, "events")) parse_events(*e, rs);
  if (const json* v = find(spec, "precision")) {
    s.precision = get_choice<Precision>(*v, "precision", "precision",
                                        {{"fp64", Precision::kFp64}, {"fp32", Precision::kFp32}});
  }
  parse_device(spec, options, rs);
  if (const json* v = find(spec, "gpu_path")) s.gpu_path = parse_gpu_path(*v, rs);
  const std::int64_t samples =
      parse_output(find(spec, "output"), rs.whole_count, s.control.active, rs.output);

  // The spec is valid; is it affordable?
  check_size_limits(options.limits, systems, rs.whole_count, samples);
  check_event_bytes(options.limits, rs, systems.count);
  rs.output.samples = static_cast<int>(samples);
  s.samples = rs.output.samples;
  resolve_trajectories(options.limits, m, rs.whole_count, rs.shard, rs.output);

  build_batch(systems, options, rs);
  return rs;
}

RecordShape record_shape(const RunSpec& spec) {
  RecordShape shape = record_shape(*spec.model);
  if (spec.settings.control.active) shape.control_params = shape.params;
  shape.events = spec.settings.events.count;
  shape.event_records = spec.settings.events.records;
  return shape;
}

bool OutputSpec::wants(std::string_view name) const {
  return name == "q"          ? q
         : name == "qd"       ? qd
         : name == "residual" ? residual
         : name == "force"    ? force
         : name == "control"  ? control
                              : false;
}

Batch batch_slice(const RunSpec& rs, std::int64_t first, int count) {
  const ModelInfo* m = rs.model;
  Batch b;
  b.model = m;
  b.count = count;
  if (rs.explicit_systems) {
    slice_batch(rs.batch, static_cast<int>(first), count, b);
    return b;
  }
  b.params.resize(m->params.size() * static_cast<std::size_t>(count));
  for (std::size_t k = 0; k < m->params.size(); ++k)
    for (int i = 0; i < count; ++i) b.param(static_cast<int>(k), i) = rs.params[k];
  default_initial_states(b, b.q0, b.qd0);
  fill_control_params(rs, b);
  if (rs.sweep) {
    try {
      apply_sweep(*rs.sweep, b, rs.shard.first + first);
    } catch (const std::invalid_argument& e) {
      fail("sweep", e.what());  // validated by parse_run_spec: not expected
    }
    bool params_swept = false;
    std::vector<bool> q_swept(static_cast<std::size_t>(m->n)), qd_swept(q_swept);
    for (const auto& dim : rs.sweep->dimensions) {
      const auto j = static_cast<std::size_t>(dim.target.index);
      switch (dim.target.kind) {
        case SweepTarget::Kind::kParam:
          params_swept = true;
          break;
        case SweepTarget::Kind::kQ0:
          q_swept[j] = true;
          break;
        case SweepTarget::Kind::kQd0:
          qd_swept[j] = true;
          break;
        case SweepTarget::Kind::kControlParam:
          break;  // the controller's belief moves no initial state
      }
    }
    if (params_swept) {
      // The default initial condition may depend on the parameters: recompute what was not swept.
      std::vector<double> q_default, qd_default;
      default_initial_states(b, q_default, qd_default);
      for (int j = 0; j < m->n; ++j) {
        const auto base = static_cast<std::size_t>(j) * count;
        for (int i = 0; i < count; ++i) {
          if (!q_swept[static_cast<std::size_t>(j)]) b.q0[base + i] = q_default[base + i];
          if (!qd_swept[static_cast<std::size_t>(j)]) b.qd0[base + i] = qd_default[base + i];
        }
      }
    }
  }
  return b;
}

}  // namespace ukes
