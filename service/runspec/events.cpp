#include "service/runspec/events.hpp"

#include <map>
#include <memory>

#include "kernels/expr/compiler.hpp"
#include "kernels/expr/expression.hpp"
#include "service/runspec/run_spec.hpp"

namespace ukes {
namespace {

using expr::Node;
using expr::Symbol;

// The names an event's expressions may use: the model's coordinates, their rates, its
// parameters, t and the language's constants.
std::map<std::string, Symbol> event_symbols(const ModelInfo& m) {
  std::map<std::string, Symbol> symbols;
  symbols["t"] = {Symbol::Kind::kTime};
  symbols["pi"] = {Symbol::Kind::kConstant, 0, 3.14159265358979323846};
  symbols["e"] = {Symbol::Kind::kConstant, 0, 2.71828182845904523536};
  for (std::size_t k = 0; k < m.params.size(); ++k)
    symbols[m.params[k].name] = {Symbol::Kind::kParameter, static_cast<int>(k)};
  for (std::size_t j = 0; j < m.coordinates.size(); ++j) {
    symbols[m.coordinates[j]] = {Symbol::Kind::kCoordinate, static_cast<int>(j)};
    symbols[m.coordinates[j] + "_dot"] = {Symbol::Kind::kRate, static_cast<int>(j)};
  }
  return symbols;
}

// Every name of `node` resolves; constraint forces are a model's non-ideal force's alone.
void check_names(const Node& node, const std::map<std::string, Symbol>& symbols,
                 const std::string& path) {
  if (node.kind == Node::Kind::kConstraintForce)
    throw SpecError(path, "column " + std::to_string(node.column) +
                              ": constraint forces have no value in an event's expressions");
  if (node.kind == Node::Kind::kName && symbols.count(node.name) == 0)
    throw SpecError(path, "column " + std::to_string(node.column) + ": unknown name " +
                              expr::quoted_text(node.name) +
                              " (coordinates, <coordinate>_dot, parameters, t)");
  for (const Node& arg : node.args) check_names(arg, symbols, path);
}

class EventCompiler {
 public:
  explicit EventCompiler(const ModelInfo& m) : symbols_(event_symbols(m)) {}

  // Parses the expression at `path`; the tree is kept until the program is built.
  const Node& parse(const std::string& text, const std::string& path) {
    try {
      trees_.push_back(std::make_unique<Node>(expr::parse_expression(text)));
    } catch (const expr::ExpressionError& e) {
      throw SpecError(
          path, (e.column() > 0 ? "column " + std::to_string(e.column()) + ": " : "") + e.what());
    }
    check_names(*trees_.back(), symbols_, path);
    return *trees_.back();
  }

  // The segment's outputs (output, tree), compiled; `path` names the field for a limit.
  void segment(expr::Segment segment, const std::vector<std::pair<int, const Node*>>& outputs,
               const std::string& path) {
    builder_.begin_segment(segment);
    for (const auto& [output, tree] : outputs) builder_.store(*tree, {output});
    try {
      builder_.end_segment();
    } catch (const expr::ExpressionError& e) {
      throw LimitError(path, e.what());
    }
  }

  expr::Program finish() { return builder_.finish(); }

 private:
  std::map<std::string, Symbol> symbols_;
  std::vector<const Node*> intermediates_;  // an event program has none
  expr::ProgramBuilder builder_{symbols_, intermediates_};
  std::vector<std::unique_ptr<Node>> trees_;
};

std::string event_path(std::size_t e, const std::string& field) {
  return "events[" + std::to_string(e) + "]." + field;
}

// Event e's reset expressions for `part` ("q" or "qd") into `outputs`, as output e kMassStride + j.
void parse_reset(EventCompiler& compiler, const std::vector<std::string>& texts, std::size_t e,
                 const char* part, std::vector<std::pair<int, const Node*>>& outputs) {
  for (std::size_t j = 0; j < texts.size(); ++j) {
    const std::string path =
        event_path(e, std::string("reset.") + part + "[" + std::to_string(j) + "]");
    outputs.emplace_back(static_cast<int>(e) * expr::kMassStride + static_cast<int>(j),
                         &compiler.parse(texts[j], path));
  }
}

}  // namespace

void compile_events(const std::vector<EventSpec>& events, const ModelInfo& m, EnsembleSettings& s) {
  s.events = {};
  s.event_program.reset();
  s.event_names.clear();
  if (events.empty()) return;
  EventCompiler compiler(m);
  std::vector<std::pair<int, const Node*>> conditions, reset_q, reset_qd;
  EventTable& table = s.events;
  for (std::size_t e = 0; e < events.size(); ++e) {
    const EventSpec& event = events[e];
    conditions.emplace_back(static_cast<int>(e),
                            &compiler.parse(event.condition, event_path(e, "condition")));
    parse_reset(compiler, event.reset_q, e, "q", reset_q);
    parse_reset(compiler, event.reset_qd, e, "qd", reset_qd);
    table.direction[e] = event.direction;
    table.action[e] = event.action;
    table.max_records[e] = event.max;
    table.records = std::max(table.records, event.max);
    if (!event.reset_q.empty()) table.resets_q |= 1u << e;
    if (!event.reset_qd.empty()) table.resets_qd |= 1u << e;
    s.event_names.push_back(event.name);
  }
  compiler.segment(expr::Segment::kEventConditions, conditions, "events");
  compiler.segment(expr::Segment::kEventResetQ, reset_q, "events");
  compiler.segment(expr::Segment::kEventResetQd, reset_qd, "events");
  auto program = std::make_shared<expr::Program>(compiler.finish());
  table.count = static_cast<int>(events.size());
  table.program = program->view();
  table.instruction_count = static_cast<int>(program->code.size());
  table.constant_count = static_cast<int>(program->constants.size());
  s.event_program = std::move(program);
}

}  // namespace ukes
