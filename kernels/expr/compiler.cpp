#include "kernels/expr/compiler.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <functional>

namespace ukes::expr {

ProgramView Program::view() const {
  ProgramView v;
  v.code = code.data();
  v.constants = constants.data();
  std::copy(std::begin(begin), std::end(begin), v.begin);
  std::copy(std::begin(end), std::end(end), v.end);
  v.registers = registers;
  return v;
}

std::size_t ProgramBuilder::ValueHash::operator()(const Value& v) const {
  std::size_t h = static_cast<std::size_t>(v.op);
  for (int x : {v.a, v.b, v.c}) h = h * 1000003u ^ std::hash<int>()(x);
  return h;
}

namespace {

// Appends the index of every intermediate that `node` names to `out`.
void collect_intermediates(const Node& node, const std::map<std::string, Symbol>& symbols,
                           std::vector<int>& out) {
  if (node.kind == Node::Kind::kName) {
    const auto it = symbols.find(node.name);
    if (it != symbols.end() && it->second.kind == Symbol::Kind::kIntermediate)
      out.push_back(it->second.index);
  }
  for (const Node& arg : node.args) collect_intermediates(arg, symbols, out);
}

}  // namespace

ProgramBuilder::ProgramBuilder(const std::map<std::string, Symbol>& symbols,
                               const std::vector<const Node*>& intermediates)
    : symbols_(symbols), intermediates_(intermediates), intermediate_uses_(intermediates.size()) {
  for (std::size_t k = 0; k < intermediates.size(); ++k)
    collect_intermediates(*intermediates[k], symbols, intermediate_uses_[k]);
  for (const auto& [name, symbol] : symbols)
    if (symbol.kind == Symbol::Kind::kParameter)
      parameters_ = std::max(parameters_, symbol.index + 1);
}

void ProgramBuilder::begin_segment(Segment segment) {
  segment_ = segment;
  values_.clear();
  index_.clear();
  stores_.clear();
  intermediate_value_.assign(intermediates_.size(), -1);
}

int ProgramBuilder::emit(Value v) {
  if (const auto it = index_.find(v); it != index_.end()) return it->second;
  values_.push_back(v);
  const int id = static_cast<int>(values_.size()) - 1;
  index_.emplace(v, id);
  return id;
}

int ProgramBuilder::constant(double x) {
  const auto [it, added] =
      literal_index_.emplace(std::bit_cast<std::uint64_t>(x), static_cast<int>(literals_.size()));
  if (added) literals_.push_back(x);
  return emit({Op::kLoadConst, it->second});
}

// The program's slot for constant x; folding leaves many constants no instruction loads, and
// those never reach the program (whose constant indices must fit an instruction's 16 bits).
int ProgramBuilder::pool_slot(double x) {
  const auto [it, added] = pool_index_.emplace(std::bit_cast<std::uint64_t>(x),
                                               static_cast<int>(program_.constants.size()));
  if (added) {
    if (program_.constants.size() >= kMaxInstructions)
      throw ExpressionError(
          0, "the program needs more than " + std::to_string(kMaxInstructions) + " constants",
          true);
    program_.constants.push_back(x);
  }
  return it->second;
}

// Folds an operation whose operands are all constants (in double, as a compiler folds C++
// constant expressions); emits it otherwise.
int ProgramBuilder::fold_or_emit(Op op, int a, int b, int c) {
  const auto is_constant = [&](int v) { return v < 0 || values_[v].op == Op::kLoadConst; };
  if (is_constant(a) && is_constant(b) && is_constant(c)) {
    const auto at = [&](int v) { return v < 0 ? 0.0 : literals_[values_[v].a]; };
    const double x = op == Op::kIf ? (at(a) != 0 ? at(b) : at(c)) : detail::apply(op, at(a), at(b));
    return constant(x);
  }
  return emit({op, a, b, c});
}

// x * x, with a difference x = b - a squared as (a - b)^2 when a is the earlier value (see the
// header): the same bits, and one form for both orders.
int ProgramBuilder::square(int x) {
  const Value& v = values_[x];
  if (v.op == Op::kSub && v.b < v.a) x = fold_or_emit(Op::kSub, v.b, v.a, -1);
  return fold_or_emit(Op::kMul, x, x, -1);
}

int ProgramBuilder::value_of(const Node& node) {
  switch (node.kind) {
    case Node::Kind::kNumber:
      return constant(node.value);
    case Node::Kind::kConstraintForce:
      return emit({Op::kLoadQc, symbols_.at(node.name).index});
    case Node::Kind::kName: {
      const Symbol& s = symbols_.at(node.name);
      switch (s.kind) {
        case Symbol::Kind::kCoordinate:
          return emit({Op::kLoadQ, s.index});
        case Symbol::Kind::kRate:
          return emit({Op::kLoadQd, s.index});
        case Symbol::Kind::kTime:
          return emit({Op::kLoadT});
        case Symbol::Kind::kParameter:
          return emit({Op::kLoadParam, s.index});
        case Symbol::Kind::kConstant:
          return constant(s.value);
        case Symbol::Kind::kIntermediate:
          return intermediate(s.index);
      }
      return -1;
    }
    case Node::Kind::kCall:
    case Node::Kind::kOperator: {
      int args[3] = {-1, -1, -1};
      for (std::size_t k = 0; k < node.args.size(); ++k) args[k] = value_of(node.args[k]);
      if (node.args.size() == 1) args[1] = args[0];  // unary: the evaluator reads b too
      // x^2 is x * x: the same correctly rounded value as pow, at the cost of a multiply.
      if (node.op == Op::kPow && values_[args[1]].op == Op::kLoadConst &&
          literals_[values_[args[1]].a] == 2.0)
        return square(args[0]);
      if (node.op == Op::kMul && args[0] == args[1]) return square(args[0]);
      return fold_or_emit(node.op, args[0], args[1], args[2]);
    }
  }
  return -1;
}

// Intermediate k's value in this segment, lowered on first use. The intermediates it needs that
// are not lowered yet are lowered first, in definition order (each uses earlier ones only), so
// lowering never recurses from one intermediate into another: a chain of thousands of them costs
// no stack.
int ProgramBuilder::intermediate(int k) {
  const auto at = [](int j) { return static_cast<std::size_t>(j); };
  if (intermediate_value_[at(k)] >= 0) return intermediate_value_[at(k)];
  std::vector<bool> seen(intermediates_.size(), false);
  std::vector<int> needed, pending{k};
  while (!pending.empty()) {
    const int j = pending.back();
    pending.pop_back();
    if (seen[at(j)] || intermediate_value_[at(j)] >= 0) continue;
    seen[at(j)] = true;
    needed.push_back(j);
    for (int used : intermediate_uses_[at(j)]) pending.push_back(used);
  }
  std::sort(needed.begin(), needed.end());
  for (int j : needed) intermediate_value_[at(j)] = value_of(*intermediates_[at(j)]);
  return intermediate_value_[at(k)];
}

// Replaces each value of the current segment that depends on parameters and constants alone, and
// that a state-dependent value or a store uses, by a load of its slot in the Derived segment.
void ProgramBuilder::hoist_parameter_values() {
  const bool rows = segment_ == Segment::kPositionRows || segment_ == Segment::kVelocityRows;
  const auto is_load = [](const Value& v) { return v.op <= Op::kLoadQc; };
  const std::size_t count = values_.size();
  constexpr int kState = -1, kLeaf = -2;  // derived[i] else: a Derived segment value
  std::vector<int> derived(count, kState);
  std::vector<bool> needed(count, false);
  for (std::size_t i = 0; i < count; ++i) {
    const Value& v = values_[i];
    if (is_load(v)) {
      if (v.op == Op::kLoadParam || v.op == Op::kLoadConst) derived[i] = kLeaf;
      continue;
    }
    bool fixed = !(rows && v.op == Op::kDiv);
    for (int x : {v.a, v.b, v.c})
      if (x >= 0) fixed = fixed && derived[static_cast<std::size_t>(x)] != kState;
    if (!fixed) {
      for (int x : {v.a, v.b, v.c})
        if (x >= 0) needed[static_cast<std::size_t>(x)] = true;
      continue;
    }
    Value d = v;  // the same operation over the Derived segment's values
    for (int* x : {&d.a, &d.b, &d.c}) {
      if (*x < 0) continue;
      const auto at = static_cast<std::size_t>(*x);
      if (derived[at] == kLeaf) derived[at] = emit_derived(values_[at]);
      *x = derived[at];
    }
    derived[i] = emit_derived(d);
  }
  for (const auto& [output, v] : stores_) needed[static_cast<std::size_t>(v)] = true;
  for (std::size_t i = 0; i < count; ++i) {
    if (!needed[i] || derived[i] < 0 || is_load(values_[i])) continue;
    const int slot = parameters_ + static_cast<int>(derived_stores_.size());
    const auto [it, added] = derived_slot_.emplace(derived[i], slot);
    if (added && slot >= kParameterSlots) {  // no slot left: computed where it is
      derived_slot_.erase(it);
      continue;
    }
    if (added) derived_stores_.emplace_back(slot, derived[i]);
    values_[i] = {Op::kLoadParam, it->second};
  }
}

int ProgramBuilder::emit_derived(const Value& v) {
  const auto [it, added] = derived_index_.emplace(v, static_cast<int>(derived_values_.size()));
  if (added) derived_values_.push_back(v);
  return it->second;
}

void ProgramBuilder::store(const Node& root, std::initializer_list<int> outputs) {
  const int v = value_of(root);
  for (int output : outputs) stores_.emplace_back(output, v);
}

// Values in order, registers by liveness: a value's register is free again after its last use,
// and each store follows its value at once, so outputs do not pile up in registers. Values no
// store needs (operands of folded constants) are dropped.
void ProgramBuilder::allocate_registers() {
  const int count = static_cast<int>(values_.size());
  const auto n = static_cast<std::size_t>(count);
  std::vector<int> last_use(n, -1);
  std::vector<bool> live(n, false);
  std::vector<std::vector<int>> outputs_of(n);
  for (const auto& [output, v] : stores_) {
    live[v] = true;
    last_use[v] = v;
    outputs_of[v].push_back(output);
  }
  const auto is_load = [](const Value& v) { return v.op <= Op::kLoadQc; };
  for (int i = count - 1; i >= 0; --i) {
    if (!live[i] || is_load(values_[i])) continue;
    for (int operand : {values_[i].a, values_[i].b, values_[i].c}) {
      if (operand < 0) continue;
      live[operand] = true;
      last_use[operand] = std::max(last_use[operand], i);
    }
  }
  std::vector<int> reg(n, -1), free;
  const auto release = [&](int v) {
    if (reg[v] >= 0 && std::find(free.begin(), free.end(), reg[v]) == free.end())
      free.push_back(reg[v]);
  };
  int used = 0;
  for (int i = 0; i < count; ++i) {
    if (!live[i]) continue;
    const Value& v = values_[i];
    if (!is_load(v))
      for (int operand : {v.a, v.b, v.c})
        if (operand >= 0 && last_use[operand] == i) release(operand);
    if (free.empty()) {
      reg[i] = used++;
    } else {
      reg[i] = free.back();
      free.pop_back();
    }
    if (used > kMaxRegisters)
      throw ExpressionError(
          0, "needs more than " + std::to_string(kMaxRegisters) + " values alive at once", true);
    const auto u16 = [](int x) { return static_cast<std::uint16_t>(x < 0 ? 0 : x); };
    Instruction in{static_cast<std::uint16_t>(v.op), u16(reg[i]), 0, 0, 0};
    if (v.op == Op::kLoadConst) {
      in.a = u16(pool_slot(literals_[static_cast<std::size_t>(v.a)]));
    } else if (is_load(v)) {
      in.a = u16(v.a);
    } else {
      in.a = u16(v.a < 0 ? -1 : reg[v.a]);
      in.b = u16(v.b < 0 ? -1 : reg[v.b]);
      in.c = u16(v.c < 0 ? -1 : reg[v.c]);
    }
    program_.code.push_back(in);
    for (int output : outputs_of[i])
      program_.code.push_back(
          {static_cast<std::uint16_t>(Op::kStore), 0, u16(output), u16(reg[i]), 0});
    if (last_use[i] == i) release(i);
  }
  program_.registers = std::max(program_.registers, used);
}

void ProgramBuilder::end_segment() {
  const int s = static_cast<int>(segment_);
  // The model functions evaluated at every step; the initial state is computed once anyway, and
  // an event program has no Derived segment of its own (the parameter slots after the model's
  // hold the model's derived values).
  if (segment_ <= Segment::kNonIdealForce || segment_ == Segment::kActuation)
    hoist_parameter_values();
  program_.begin[s] = static_cast<std::int32_t>(program_.code.size());
  allocate_registers();
  program_.end[s] = static_cast<std::int32_t>(program_.code.size());
  if (program_.code.size() > kMaxInstructions)
    throw ExpressionError(
        0, "the program needs more than " + std::to_string(kMaxInstructions) + " instructions",
        true);
}

Program ProgramBuilder::finish() {
  begin_segment(Segment::kDerived);
  values_ = derived_values_;
  stores_ = derived_stores_;
  end_segment();
  return std::move(program_);
}

}  // namespace ukes::expr
