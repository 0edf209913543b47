// From expression trees to a Program (kernels/expr/program.hpp), on the host.
//
// Each segment is compiled on its own: the trees of its outputs, and of the intermediates they
// use, become straight-line code in which a subexpression written twice is computed once
// (hash-consing), constant subtrees are folded, and x^2 becomes x * x (the same correctly rounded
// value, without pow). Arithmetic is never reordered, so a definition that mirrors a C++ model
// gives its numbers. Registers are then assigned by liveness, so a segment needs as many as it has
// values alive at once.
//
// Two rewrites give the same bits with less work per evaluation:
// - Values of the model functions that depend on parameters and constants alone (m2 * l1 * l2,
//   g * sin(alpha)) are hoisted into the Derived segment, computed once per system into the
//   parameter slots after the model's own (kParameterSlots in all; past that they stay where
//   they are). In constraint rows a division is not hoisted: rows are evaluated in Jets, whose
//   division multiplies by the reciprocal, and hoisted it would round differently.
// - The square of a difference has one form: (b - a)^2 is computed as (a - b)^2, for a fixed
//   order of a and b. Both are the same number (IEEE subtraction is exactly antisymmetric and the
//   product of two negations is exact), so the distance terms of pairs written both ways, as
//   |q_i - q_j| and |q_j - q_i|, are computed once.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "kernels/expr/expression.hpp"
#include "kernels/expr/program.hpp"

namespace ukes::expr {

// A compiled program, owning its code; view() is what the evaluator reads.
struct Program {
  std::vector<Instruction> code;
  std::vector<double> constants;
  std::int32_t begin[kSegmentCount] = {}, end[kSegmentCount] = {};
  std::int32_t registers = 0;
  ProgramView view() const;
};

// The largest program: instructions of all segments together.
inline constexpr std::size_t kMaxInstructions = 65536;

// What a name stands for (resolved and level-checked before compiling).
struct Symbol {
  enum class Kind { kCoordinate, kRate, kTime, kParameter, kIntermediate, kConstant };
  Kind kind = Kind::kConstant;
  int index = 0;     // coordinate, parameter or intermediate index
  double value = 0;  // kConstant
};

class ProgramBuilder {
 public:
  // `symbols` resolves every name the trees use; `intermediates[k]` is intermediate k's tree.
  ProgramBuilder(const std::map<std::string, Symbol>& symbols,
                 const std::vector<const Node*>& intermediates);

  void begin_segment(Segment segment);
  // Output `output` of the current segment is the value of `root` (to each of `outputs`).
  void store(const Node& root, std::initializer_list<int> outputs);
  // Ends the segment; ExpressionError (a limit) when it needs more than kMaxRegisters.
  void end_segment();
  Program finish();

 private:
  struct Value {
    Op op;
    int a = -1, b = -1, c = -1;  // operand values, or the input index of a load
    bool operator==(const Value&) const = default;
  };
  struct ValueHash {
    std::size_t operator()(const Value& v) const;
  };

  int value_of(const Node& node);
  int intermediate(int k);
  int emit(Value v);
  int constant(double x);
  int pool_slot(double x);
  int fold_or_emit(Op op, int a, int b, int c);
  int square(int x);
  void hoist_parameter_values();
  int emit_derived(const Value& v);
  void allocate_registers();

  const std::map<std::string, Symbol>& symbols_;
  const std::vector<const Node*>& intermediates_;
  Program program_;
  Segment segment_ = Segment::kMass;
  // The current segment, before registers: values (hash-consed) and stores (output, value).
  std::vector<Value> values_;
  std::unordered_map<Value, int, ValueHash> index_;
  std::vector<std::pair<int, int>> stores_;
  std::vector<int> intermediate_value_;  // per intermediate, -1 until used in this segment
  std::vector<std::vector<int>> intermediate_uses_;  // the intermediates each one names
  // Constants by their bits (-0 is not 0, and a folded NaN is a value like any other): those
  // values refer to (literals_), and those the program holds (only the ones it loads).
  std::vector<double> literals_;
  std::unordered_map<std::uint64_t, int> literal_index_, pool_index_;
  // The Derived segment, built across the others: hoisted values and what they need (operands
  // index this list; hash-consed, so a value hoisted from two segments is computed once), and
  // per hoisted value its parameter slot.
  int parameters_ = 0;  // the model's own; derived slots follow
  std::vector<Value> derived_values_;
  std::unordered_map<Value, int, ValueHash> derived_index_;
  std::unordered_map<int, int> derived_slot_;
  std::vector<std::pair<int, int>> derived_stores_;  // (slot, derived value)
};

}  // namespace ukes::expr
