#include "kernels/models/user/definition.hpp"

#include <cctype>
#include <cmath>
#include <map>

#include "kernels/core/sha256.hpp"
#include "kernels/expr/expression.hpp"

namespace ukes {

DefinitionError::DefinitionError(std::string path_, int column_, std::string reason_, bool limit_)
    : std::runtime_error(path_ + (column_ > 0 ? ", column " + std::to_string(column_) : "") + ": " +
                         reason_),
      path(std::move(path_)),
      column(column_),
      reason(std::move(reason_)),
      limit(limit_) {}

namespace {

using json = nlohmann::json;
using expr::Node;
using expr::quoted_text;
using expr::Symbol;

constexpr const char* kFormat = "ukes-model/1";
constexpr std::size_t kMaxNameLength = 64;
constexpr std::size_t kMaxDescriptionLength = 4096;

std::string key_path(const std::string& path, const char* key) { return path + "." + key; }
std::string index_path(const std::string& path, std::size_t k) {
  return path + "[" + std::to_string(k) + "]";
}

[[noreturn]] void fail(const std::string& path, const std::string& reason, int column = 0) {
  throw DefinitionError(path, column, reason);
}
[[noreturn]] void too_large(const std::string& path, const std::string& what, std::size_t size,
                            std::size_t limit) {
  throw DefinitionError(
      path, 0, what + " " + std::to_string(size) + " exceed the limit of " + std::to_string(limit),
      true);
}

std::string kind_of(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::string:
      return "a string";
    case json::value_t::array:
      return "an array";
    case json::value_t::object:
      return "an object";
    default:
      return "a number";
  }
}

// Where an expression may appear, which decides what it may depend on (docs/MODEL_FORMAT.md,
// "Levels").
enum class Level { kIntermediate, kPosition, kVelocity, kNonIdeal, kInitial };

// What an expression's value depends on beyond parameters and constants.
struct Uses {
  std::string state;  // the first coordinate or `t` it uses ("" if none)
  std::string rate;   // the first rate it uses
  std::string via;    // the intermediate through which (for messages)
  bool qc = false;
  void merge(const Uses& u, const std::string& intermediate) {
    if (state.empty() && !u.state.empty()) state = u.state, via = via.empty() ? intermediate : via;
    if (rate.empty() && !u.rate.empty()) rate = u.rate, via = intermediate;
    qc = qc || u.qc;
  }
};

class DefinitionReader {
 public:
  // The language's own names are in the table from the start (add_name keeps users off them).
  // `actuation` (null: none) is a controlled run's actuation matrix, read at `actuation_path`.
  DefinitionReader(const json& doc, std::string path, const json* actuation = nullptr,
                   std::string actuation_path = {})
      : doc_(doc),
        path_(std::move(path)),
        actuation_doc_(actuation),
        actuation_path_(std::move(actuation_path)) {
    symbols_["t"] = {Symbol::Kind::kTime};
    symbols_["pi"] = {Symbol::Kind::kConstant, 0, 3.14159265358979323846};
    symbols_["e"] = {Symbol::Kind::kConstant, 0, 2.71828182845904523536};
  }
  UserModelDefinition read();

 private:
  const json& require(const char* key) const {
    const auto it = doc_.find(key);
    if (it == doc_.end()) fail(key_path(path_, key), "required");
    return *it;
  }
  const json* optional(const char* key) const {
    const auto it = doc_.find(key);
    return it == doc_.end() ? nullptr : &*it;
  }
  static const json& array(const json& v, const std::string& path) {
    if (!v.is_array()) fail(path, "must be an array, got " + kind_of(v));
    return v;
  }
  static double number(const json& v, const std::string& path) {
    if (!v.is_number()) fail(path, "must be a number, got " + kind_of(v));
    const double x = v.get<double>();
    if (!std::isfinite(x)) fail(path, "must be finite");
    return x;
  }
  static std::string text(const json& v, const std::string& path, std::size_t limit) {
    if (!v.is_string()) fail(path, "must be a string, got " + kind_of(v));
    std::string s = v.get<std::string>();
    if (s.size() > limit) too_large(path, "characters", s.size(), limit);
    return s;
  }
  static void check_keys(const json& object, const std::string& path,
                         std::initializer_list<const char*> allowed) {
    if (!object.is_object()) fail(path, "must be an object, got " + kind_of(object));
    for (const auto& [key, value] : object.items()) {
      bool known = false;
      for (const char* a : allowed) known = known || key == a;
      if (!known) fail(path, "unknown field " + quoted_text(key));
    }
  }

  void read_coordinates();
  void read_parameters();
  void read_intermediates();
  void add_name(const std::string& name, const std::string& path, Symbol symbol);
  Node expression(const json& v, const std::string& path, Level level, Uses* uses = nullptr);
  Uses check(const Node& node, const std::string& path, Level level);
  std::vector<Node> vector_of(const json& v, const std::string& path, Level level,
                              std::size_t size);
  void read_mass();
  void read_actuation();
  void check_symmetric(const std::vector<std::vector<Node>>& full,
                       const std::vector<std::pair<std::size_t, std::size_t>>& differing,
                       const std::string& path);
  // The value of `node` at coordinates q (rates 0), t and the default parameters, given the
  // values of the intermediates it uses.
  double evaluate(const Node& node, const std::vector<double>& q, double t,
                  const std::vector<double>& intermediates);
  void compile();

  const json& doc_;
  std::string path_;
  const json* actuation_doc_;
  std::string actuation_path_;
  UserModelDefinition d_;
  std::map<std::string, Symbol> symbols_;
  std::map<std::string, std::string> symbol_origin_;  // name -> what it is, for duplicate errors
  std::vector<Node> intermediates_;
  std::vector<Uses> intermediate_uses_;
  std::vector<std::string> intermediate_names_;
  std::vector<std::vector<Node>> mass_;       // upper triangle: mass_[i][j - i]
  std::vector<std::vector<Node>> actuation_;  // n rows of k entries
  std::vector<Node> force_, position_rows_, velocity_rows_, nonideal_, q0_, qd0_;
  json canonical_ = json::object();
};

bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

void DefinitionReader::add_name(const std::string& name, const std::string& path, Symbol symbol) {
  // A rate's name is its coordinate's and "_dot": the coordinate's length was checked.
  if (symbol.kind != Symbol::Kind::kRate && name.size() > kMaxNameLength)
    too_large(path, "characters", name.size(), kMaxNameLength);
  if (!is_identifier(name))
    fail(path,
         quoted_text(name) + " is not a name: letters, digits and _, not starting with a digit");
  expr::Op op;
  int arity = 0;
  if (name == "t" || name == "pi" || name == "e" || name == "Qc" ||
      expr::find_function(name, op, arity))
    fail(path, quoted_text(name) + " is reserved (time, a constant or a function)");
  if (const auto it = symbol_origin_.find(name); it != symbol_origin_.end())
    fail(path, "duplicate name " + quoted_text(name) + " (already " + it->second + ")");
  const char* what[] = {"a coordinate", "the rate of a coordinate", "time",
                        "a parameter",  "an intermediate",          "a constant"};
  symbol_origin_[name] = what[static_cast<int>(symbol.kind)];
  symbols_[name] = symbol;
}

void DefinitionReader::read_coordinates() {
  const std::string path = key_path(path_, "coordinates");
  const json& c = array(require("coordinates"), path);
  if (c.empty()) fail(path, "a model needs at least one coordinate");
  if (c.size() > kMaxCoordinates) too_large(path, "coordinates", c.size(), kMaxCoordinates);
  for (std::size_t j = 0; j < c.size(); ++j) {
    const std::string name = text(c[j], index_path(path, j), kMaxNameLength);
    add_name(name, index_path(path, j), {Symbol::Kind::kCoordinate, static_cast<int>(j)});
    d_.coordinates.push_back(name);
  }
  // Rates after every coordinate: `x_dot` may not be taken by another coordinate either.
  for (std::size_t j = 0; j < c.size(); ++j)
    add_name(d_.coordinates[j] + "_dot", index_path(path, j),
             {Symbol::Kind::kRate, static_cast<int>(j)});
  canonical_["coordinates"] = d_.coordinates;
}

void DefinitionReader::read_parameters() {
  const json* p = optional("parameters");
  json canonical = json::array();
  if (p) {
    const std::string path = key_path(path_, "parameters");
    array(*p, path);
    if (p->size() > kMaxParameters) too_large(path, "parameters", p->size(), kMaxParameters);
    for (std::size_t k = 0; k < p->size(); ++k) {
      const std::string at = index_path(path, k);
      const json& item = (*p)[k];
      check_keys(item, at, {"name", "value", "description"});
      if (!item.contains("name")) fail(key_path(at, "name"), "required");
      if (!item.contains("value")) fail(key_path(at, "value"), "required");
      UserParameter param;
      param.name = text(item["name"], key_path(at, "name"), kMaxNameLength);
      add_name(param.name, key_path(at, "name"), {Symbol::Kind::kParameter, static_cast<int>(k)});
      param.value = number(item["value"], key_path(at, "value"));
      if (item.contains("description"))
        param.description =
            text(item["description"], key_path(at, "description"), kMaxDescriptionLength);
      json c = {{"name", param.name}, {"value", param.value}};
      if (!param.description.empty()) c["description"] = param.description;
      canonical.push_back(std::move(c));
      d_.parameters.push_back(std::move(param));
    }
  }
  canonical_["parameters"] = std::move(canonical);
}

void DefinitionReader::read_intermediates() {
  const json* list = optional("intermediates");
  json canonical = json::array();
  if (list) {
    const std::string path = key_path(path_, "intermediates");
    array(*list, path);
    if (list->size() > kMaxIntermediates)
      too_large(path, "intermediates", list->size(), kMaxIntermediates);
    intermediates_.reserve(list->size());
    for (std::size_t k = 0; k < list->size(); ++k) {
      const std::string at = index_path(path, k);
      const json& item = (*list)[k];
      check_keys(item, at, {"name", "expr"});
      if (!item.contains("name")) fail(key_path(at, "name"), "required");
      if (!item.contains("expr")) fail(key_path(at, "expr"), "required");
      const std::string name = text(item["name"], key_path(at, "name"), kMaxNameLength);
      Uses uses;
      // The expression first: it may use earlier intermediates only, never itself.
      intermediates_.push_back(
          expression(item["expr"], key_path(at, "expr"), Level::kIntermediate, &uses));
      intermediate_uses_.push_back(uses);
      intermediate_names_.push_back(name);
      add_name(name, key_path(at, "name"), {Symbol::Kind::kIntermediate, static_cast<int>(k)});
      canonical.push_back({{"name", name}, {"expr", item["expr"]}});
    }
  }
  canonical_["intermediates"] = std::move(canonical);
}

// A controlled run's actuation matrix B(q, qd, t, p): n rows (one per coordinate) of the same k
// >= 1 entries (one per actuator input), k <= n (docs/CONTROL.md).
void DefinitionReader::read_actuation() {
  if (!actuation_doc_) return;
  const std::string& path = actuation_path_;
  const std::size_t n = d_.coordinates.size();
  const json& rows = array(*actuation_doc_, path);
  if (rows.size() != n)
    fail(path, "an actuation matrix has one row per coordinate: " + std::to_string(n) +
                   " rows, got " + std::to_string(rows.size()));
  std::size_t k = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::string row_path = index_path(path, i);
    const json& row = array(rows[i], row_path);
    if (i == 0) k = row.size();
    if (row.empty() || row.size() > n || row.size() != k)
      fail(row_path, "each row holds the same k entries, 1 <= k <= " + std::to_string(n) +
                         " (one per actuator input); got " + std::to_string(row.size()) +
                         (i > 0 ? " after " + std::to_string(k) : std::string()));
    actuation_.emplace_back();
    for (std::size_t j = 0; j < k; ++j)
      actuation_[i].push_back(expression(row[j], index_path(row_path, j), Level::kVelocity));
  }
  d_.actuation = *actuation_doc_;
  d_.actuation_columns = static_cast<int>(k);
}

// Resolves every name of `node` and checks it against `level`.
Uses DefinitionReader::check(const Node& node, const std::string& path, Level level) {
  Uses uses;
  switch (node.kind) {
    case Node::Kind::kNumber:
      break;
    case Node::Kind::kConstraintForce: {
      if (level != Level::kNonIdeal)
        fail(path, "Qc( ) is the ideal constraint force: only nonideal_force may use it",
             node.column);
      const auto it = symbols_.find(node.name);
      if (it == symbols_.end() || it->second.kind != Symbol::Kind::kCoordinate)
        fail(path, "Qc( ) takes a coordinate name; " + quoted_text(node.name) + " is not one",
             node.column);
      uses.qc = true;
      break;
    }
    case Node::Kind::kName: {
      const auto it = symbols_.find(node.name);
      if (it == symbols_.end())
        fail(path, "unknown identifier " + quoted_text(node.name), node.column);
      const Symbol& s = it->second;
      if (s.kind == Symbol::Kind::kCoordinate || s.kind == Symbol::Kind::kTime)
        uses.state = node.name;
      if (s.kind == Symbol::Kind::kRate) uses.rate = node.name;
      if (s.kind == Symbol::Kind::kIntermediate)
        uses.merge(intermediate_uses_[static_cast<std::size_t>(s.index)], node.name);
      const std::string through =
          uses.via.empty() ? "" : " (through intermediate " + quoted_text(uses.via) + ")";
      if ((level == Level::kPosition || level == Level::kInitial) && !uses.rate.empty())
        fail(path,
             "uses the rate " + uses.rate + through +
                 ": a position-level expression may not depend on velocities",
             node.column);
      if (level == Level::kInitial && !uses.state.empty())
        fail(path,
             "uses " + quoted_text(uses.state) + through +
                 ": initial_state may use parameters and constants only",
             node.column);
      break;
    }
    case Node::Kind::kCall:
    case Node::Kind::kOperator:
      for (const Node& arg : node.args) {
        const Uses u = check(arg, path, level);
        uses.merge(u, u.via);
      }
      break;
  }
  return uses;
}

Node DefinitionReader::expression(const json& v, const std::string& path, Level level, Uses* uses) {
  Node node;
  if (v.is_number()) {
    node.value = number(v, path);
  } else if (v.is_string()) {
    try {
      node = expr::parse_expression(v.get_ref<const std::string&>());
    } catch (const expr::ExpressionError& e) {
      throw DefinitionError(path, e.column(), e.what(), e.limit());
    }
  } else {
    fail(path, "must be an expression (a string or a number), got " + kind_of(v));
  }
  const Uses u = check(node, path, level);
  if (uses) *uses = u;
  return node;
}

std::vector<Node> DefinitionReader::vector_of(const json& v, const std::string& path, Level level,
                                              std::size_t size) {
  array(v, path);
  if (v.size() != size)
    fail(path, "must have " + std::to_string(size) + " entries (one per coordinate), got " +
                   std::to_string(v.size()));
  std::vector<Node> out;
  for (std::size_t k = 0; k < v.size(); ++k)
    out.push_back(expression(v[k], index_path(path, k), level));
  return out;
}

void DefinitionReader::read_mass() {
  const std::string path = key_path(path_, "mass");
  const json& m = require("mass");
  const std::size_t n = d_.coordinates.size();
  mass_.assign(n, {});
  json upper = json::array();
  if (m.is_object()) {
    check_keys(m, path, {"upper", "diagonal"});
    if (m.size() != 1) fail(path, "give one of upper, diagonal");
    if (m.contains("diagonal")) {
      const std::string at = key_path(path, "diagonal");
      const std::vector<Node> diagonal = vector_of(m["diagonal"], at, Level::kPosition, n);
      for (std::size_t i = 0; i < n; ++i) {
        json row = json::array({m["diagonal"][i]});
        mass_[i].push_back(diagonal[i]);
        for (std::size_t j = i + 1; j < n; ++j) mass_[i].push_back(Node{}), row.push_back(0);
        upper.push_back(std::move(row));
      }
    } else {
      const std::string at = key_path(path, "upper");
      const json& rows = array(m["upper"], at);
      if (rows.size() != n)
        fail(at, "must have " + std::to_string(n) + " rows, got " + std::to_string(rows.size()));
      for (std::size_t i = 0; i < n; ++i) {
        const std::string row_path = index_path(at, i);
        const json& row = array(rows[i], row_path);
        if (row.size() != n - i)
          fail(row_path, "row " + std::to_string(i) + " of the upper triangle holds entries (" +
                             std::to_string(i) + ", " + std::to_string(i) + ") to (" +
                             std::to_string(i) + ", " + std::to_string(n - 1) +
                             "): " + std::to_string(n - i) + ", got " + std::to_string(row.size()));
        for (std::size_t j = 0; j < row.size(); ++j)
          mass_[i].push_back(expression(row[j], index_path(row_path, j), Level::kPosition));
        upper.push_back(row);
      }
    }
  } else {
    const json& rows = array(m, path);
    if (rows.size() != n)
      fail(path,
           "must have " + std::to_string(n) + " rows (n x n), got " + std::to_string(rows.size()));
    std::vector<std::vector<Node>> full(n);
    for (std::size_t i = 0; i < n; ++i) {
      const std::string row_path = index_path(path, i);
      const json& row = array(rows[i], row_path);
      if (row.size() != n)
        fail(row_path, "must have " + std::to_string(n) + " entries (n x n), got " +
                           std::to_string(row.size()));
      for (std::size_t j = 0; j < n; ++j)
        full[i].push_back(expression(row[j], index_path(row_path, j), Level::kPosition));
    }
    for (std::size_t i = 0; i < n; ++i) {
      json row = json::array();
      for (std::size_t j = i; j < n; ++j) {
        mass_[i].push_back(full[i][j]);
        row.push_back(rows[i][j]);
      }
      upper.push_back(std::move(row));
    }
    std::vector<std::pair<std::size_t, std::size_t>> differing;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = i + 1; j < n; ++j)
        if (!expr::same_tree(full[i][j], full[j][i])) differing.emplace_back(i, j);
    if (!differing.empty()) check_symmetric(full, differing, path);
  }
  canonical_["mass"] = {{"upper", upper}};
}

double DefinitionReader::evaluate(const Node& node, const std::vector<double>& q, double t,
                                  const std::vector<double>& intermediates) {
  switch (node.kind) {
    case Node::Kind::kNumber:
      return node.value;
    case Node::Kind::kConstraintForce:
      return 0.0;
    case Node::Kind::kName: {
      if (node.name == "pi") return 3.14159265358979323846;
      if (node.name == "e") return 2.71828182845904523536;
      if (node.name == "t") return t;
      const Symbol& s = symbols_.at(node.name);
      const auto k = static_cast<std::size_t>(s.index);
      switch (s.kind) {
        case Symbol::Kind::kCoordinate:
          return q[k];
        case Symbol::Kind::kParameter:
          return d_.parameters[k].value;
        case Symbol::Kind::kIntermediate:
          return intermediates[k];
        default:
          return 0.0;
      }
    }
    case Node::Kind::kCall:
    case Node::Kind::kOperator: {
      double x[3] = {0, 0, 0};
      for (std::size_t k = 0; k < node.args.size(); ++k)
        x[k] = evaluate(node.args[k], q, t, intermediates);
      if (node.op == expr::Op::kIf) return x[0] != 0 ? x[1] : x[2];
      return expr::detail::apply(node.op, x[0], node.args.size() == 1 ? x[0] : x[1]);
    }
  }
  return 0.0;
}

// Entries (i, j) and (j, i) written differently must still be equal: at the default parameters
// and a few states spread over a few radians (a fixed sequence, so the verdict is reproducible).
// The intermediates are evaluated once per state, in order, so none is evaluated twice and no
// evaluation recurses from one intermediate into another.
void DefinitionReader::check_symmetric(
    const std::vector<std::vector<Node>>& full,
    const std::vector<std::pair<std::size_t, std::size_t>>& differing, const std::string& path) {
  const std::size_t n = d_.coordinates.size();
  std::uint64_t state = 0x9e3779b97f4a7c15ull;
  for (int trial = 0; trial < 4; ++trial) {
    std::vector<double> q(n);
    for (double& x : q) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      x = trial == 0 ? 0.0 : 3.0 * (static_cast<double>(state >> 11) / 9007199254740992.0 - 0.5);
    }
    const double t = 0.5 * trial;
    std::vector<double> values;
    values.reserve(intermediates_.size());
    for (const Node& node : intermediates_) values.push_back(evaluate(node, q, t, values));
    for (const auto& [i, j] : differing) {
      const double a = evaluate(full[i][j], q, t, values);
      const double b = evaluate(full[j][i], q, t, values);
      if (!(std::abs(a - b) <= 1e-12 * std::max(std::abs(a), std::abs(b))) &&
          !(std::isnan(a) && std::isnan(b)))
        fail(index_path(index_path(path, j), i),
             "mass matrix is not symmetric: (" + std::to_string(i) + "," + std::to_string(j) +
                 ") and (" + std::to_string(j) + "," + std::to_string(i) + ") differ");
    }
  }
}

void DefinitionReader::compile() {
  std::vector<const Node*> intermediates;
  for (const Node& node : intermediates_) intermediates.push_back(&node);
  expr::ProgramBuilder b(symbols_, intermediates);
  const int n = d_.n();
  const auto segment = [&](expr::Segment s, const std::vector<Node>& outputs, const char* field) {
    b.begin_segment(s);
    for (std::size_t k = 0; k < outputs.size(); ++k) b.store(outputs[k], {static_cast<int>(k)});
    try {
      b.end_segment();
    } catch (const expr::ExpressionError& e) {
      throw DefinitionError(key_path(path_, field), 0, e.what(), e.limit());
    }
  };
  b.begin_segment(expr::Segment::kMass);
  for (int i = 0; i < n; ++i)
    for (int j = i; j < n; ++j) {
      const Node& entry = mass_[static_cast<std::size_t>(i)][static_cast<std::size_t>(j - i)];
      constexpr int stride = expr::kMassStride;
      if (i == j) {
        b.store(entry, {i * stride + j});
      } else {
        b.store(entry, {i * stride + j, j * stride + i});
      }
    }
  try {
    b.end_segment();
  } catch (const expr::ExpressionError& e) {
    throw DefinitionError(key_path(path_, "mass"), 0, e.what(), e.limit());
  }
  segment(expr::Segment::kForce, force_, "force");
  segment(expr::Segment::kPositionRows, position_rows_, "position_constraints");
  segment(expr::Segment::kVelocityRows, velocity_rows_, "velocity_constraints");
  segment(expr::Segment::kNonIdealForce, nonideal_, "nonideal_force");
  segment(expr::Segment::kInitialQ, q0_, "initial_state");
  segment(expr::Segment::kInitialQd, qd0_, "initial_state");
  b.begin_segment(expr::Segment::kActuation);
  for (std::size_t i = 0; i < actuation_.size(); ++i)
    for (std::size_t j = 0; j < actuation_[i].size(); ++j)
      b.store(actuation_[i][j], {static_cast<int>(i) * expr::kMassStride + static_cast<int>(j)});
  try {
    b.end_segment();
  } catch (const expr::ExpressionError& e) {
    throw DefinitionError(actuation_path_, 0, e.what(), e.limit());
  }
  try {
    d_.program = b.finish();  // adds the Derived segment: parameter-only values
  } catch (const expr::ExpressionError& e) {
    throw DefinitionError(key_path(path_, "parameters"), 0, e.what(), e.limit());
  }

  // The default initial state, by the program itself (the numbers a run starts from).
  std::vector<double> p;
  for (const auto& param : d_.parameters) p.push_back(param.value);
  d_.q0.assign(static_cast<std::size_t>(n), 0.0);
  d_.qd0.assign(static_cast<std::size_t>(n), 0.0);
  const expr::Inputs<double, double> in{nullptr, nullptr, 0.0, p.data(), nullptr};
  const expr::ProgramView view = d_.program.view();
  expr::run_segment<expr::kMaxRegisters>(view, expr::Segment::kInitialQ, in, [&](int k, double v) {
    d_.q0[static_cast<std::size_t>(k)] = v;
  });
  expr::run_segment<expr::kMaxRegisters>(view, expr::Segment::kInitialQd, in, [&](int k, double v) {
    d_.qd0[static_cast<std::size_t>(k)] = v;
  });
}

UserModelDefinition DefinitionReader::read() {
  check_keys(doc_, path_,
             {"format", "name", "description", "coordinates", "parameters", "intermediates", "mass",
              "force", "position_constraints", "velocity_constraints", "nonideal_force",
              "initial_state", "t_end", "baumgarte"});
  if (const json* f = optional("format"))
    if (text(*f, key_path(path_, "format"), kMaxNameLength) != kFormat)
      fail(key_path(path_, "format"), std::string("must be \"") + kFormat + "\"");
  canonical_["format"] = kFormat;
  d_.name = text(require("name"), key_path(path_, "name"), kMaxNameLength);
  if (!is_identifier(d_.name))
    fail(key_path(path_, "name"), quoted_text(d_.name) + " is not a name: letters, digits and _");
  canonical_["name"] = d_.name;
  if (const json* desc = optional("description")) {
    d_.description = text(*desc, key_path(path_, "description"), kMaxDescriptionLength);
    canonical_["description"] = d_.description;
  }
  read_coordinates();
  read_parameters();
  read_intermediates();
  const std::size_t n = d_.coordinates.size();
  read_mass();
  force_ = vector_of(require("force"), key_path(path_, "force"), Level::kVelocity, n);
  canonical_["force"] = require("force");
  std::size_t rows = 0;
  for (const char* field : {"position_constraints", "velocity_constraints"}) {
    const json* list = optional(field);
    if (!list) continue;
    const std::string path = key_path(path_, field);
    array(*list, path);
    rows += list->size();
    if (rows > kMaxConstraintRows) too_large(path, "constraint rows", rows, kMaxConstraintRows);
    const bool position = field[0] == 'p';
    auto& out = position ? position_rows_ : velocity_rows_;
    for (std::size_t k = 0; k < list->size(); ++k)
      out.push_back(expression((*list)[k], index_path(path, k),
                               position ? Level::kPosition : Level::kVelocity));
    if (!list->empty()) canonical_[field] = *list;  // none and [] are the same model
  }
  d_.position_rows = static_cast<int>(position_rows_.size());
  d_.velocity_rows = static_cast<int>(velocity_rows_.size());
  if (const json* c = optional("nonideal_force")) {
    nonideal_ = vector_of(*c, key_path(path_, "nonideal_force"), Level::kNonIdeal, n);
    d_.nonideal = true;
    canonical_["nonideal_force"] = *c;
  }
  if (const json* init = optional("initial_state")) {
    const std::string path = key_path(path_, "initial_state");
    check_keys(*init, path, {"q", "qd"});
    if (init->contains("q")) q0_ = vector_of((*init)["q"], key_path(path, "q"), Level::kInitial, n);
    if (init->contains("qd"))
      qd0_ = vector_of((*init)["qd"], key_path(path, "qd"), Level::kInitial, n);
    canonical_["initial_state"] = *init;
  }
  if (const json* t_end = optional("t_end")) {
    d_.t_end = number(*t_end, key_path(path_, "t_end"));
    if (!(d_.t_end > 0)) fail(key_path(path_, "t_end"), "must be > 0");
  }
  canonical_["t_end"] = d_.t_end;
  if (const json* g = optional("baumgarte")) {
    const std::string path = key_path(path_, "baumgarte");
    check_keys(*g, path, {"alpha", "beta"});
    if (g->contains("alpha")) d_.gains.alpha = number((*g)["alpha"], key_path(path, "alpha"));
    if (g->contains("beta")) d_.gains.beta = number((*g)["beta"], key_path(path, "beta"));
    if (d_.gains.alpha < 0) fail(key_path(path, "alpha"), "must be >= 0");
    if (d_.gains.beta < 0) fail(key_path(path, "beta"), "must be >= 0");
  }
  canonical_["baumgarte"] = {{"alpha", d_.gains.alpha}, {"beta", d_.gains.beta}};
  read_actuation();
  compile();
  try {
    d_.canonical_json = canonical_.dump();
  } catch (const json::type_error&) {  // a document built in code may hold any bytes
    fail(path_, "text must be valid UTF-8");
  }
  d_.content_id = "sha256:" + sha256_hex(d_.canonical_json);
  return std::move(d_);
}

}  // namespace

UserModelDefinition parse_user_model(const json& definition, const std::string& path) {
  return DefinitionReader(definition, path).read();
}

UserModelDefinition parse_user_model(const json& definition, const std::string& path,
                                     const json& actuation, const std::string& actuation_path) {
  return DefinitionReader(definition, path, &actuation, actuation_path).read();
}

UserModelProgram kernel_program(const UserModelDefinition& d) {
  UserModelProgram program;
  program.code = d.program.view();
  program.shape = {d.n(), d.position_rows, d.velocity_rows, static_cast<int>(d.parameters.size())};
  program.nonideal = d.nonideal;
  program.instruction_count = static_cast<int>(d.program.code.size());
  program.constant_count = static_cast<int>(d.program.constants.size());
  return program;
}

UserModelDefinition parse_user_model_text(std::string_view text) {
  if (text.size() > kMaxDefinitionTextBytes)
    throw DefinitionError("$", 0,
                          "definition text of " + std::to_string(text.size()) +
                              " bytes exceeds the limit of " +
                              std::to_string(kMaxDefinitionTextBytes),
                          true);
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::out_of_range&) {
    throw DefinitionError("$", 0, "not JSON that a double can hold: a number is out of range");
  } catch (const json::parse_error& e) {
    throw DefinitionError("$", 0, "not JSON: syntax error at byte " + std::to_string(e.byte));
  }
  return parse_user_model(doc);
}

}  // namespace ukes
