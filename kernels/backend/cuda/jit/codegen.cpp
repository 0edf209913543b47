#include "kernels/backend/cuda/jit/codegen.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iterator>
#include <sstream>
#include <vector>

namespace ukes::expr {
namespace {

constexpr const char* kSegmentNames[] = {
#define UKES_CODEGEN_SEGMENT_NAME(Name) #Name,
    UKES_EXPR_SEGMENTS(UKES_CODEGEN_SEGMENT_NAME)
#undef UKES_CODEGEN_SEGMENT_NAME
};

// The segments a model's program has: those before the event program's (program.hpp).
constexpr int kModelSegments = static_cast<int>(Segment::kEventConditions);

constexpr const char* kOpNames[] = {
#define UKES_CODEGEN_OP_NAME(Name, ...) #Name,
    UKES_EXPR_MOVES(UKES_CODEGEN_OP_NAME) UKES_EXPR_OPERATORS(UKES_CODEGEN_OP_NAME)
        UKES_EXPR_FUNCTIONS(UKES_CODEGEN_OP_NAME)
#undef UKES_CODEGEN_OP_NAME
};
static_assert(std::size(kOpNames) == static_cast<std::size_t>(Op::kCount));

// A constant as a literal of the working precision T: hexadecimal, so that it is the program's
// double exactly (std::to_chars: no locale's decimal point); infinities and NaN (a folded
// constant may be one) by their macros.
std::string literal(double x) {
  if (std::isnan(x)) return "T(NAN)";
  if (std::isinf(x)) return x > 0 ? "T(INFINITY)" : "-T(INFINITY)";
  char digits[40];
  const auto end =
      std::to_chars(digits, digits + sizeof digits, std::fabs(x), std::chars_format::hex).ptr;
  return std::string(std::signbit(x) ? "-T(0x" : "T(0x") + std::string(digits, end) + ")";
}

// One segment's statements. Registers are reused by the program; here each write is a new
// variable (v<instruction>), and `current` names the variable each register holds.
class SegmentWriter {
 public:
  SegmentWriter(const UserModelProgram& program, std::ostringstream& out)
      : program_(program), out_(out), current_(static_cast<std::size_t>(program.code.registers)) {}

  void write(Segment segment) {
    const int s = static_cast<int>(segment);
    out_ << "  template <class S, class T, class Q, class Time, class Store>\n"
         << "  UKES_HD UKES_INLINE static void " << kSegmentNames[s]
         << "(const expr::Inputs<S, T, Q, Time>& in, const Store& store) {\n"
         << "    (void)in;\n    (void)store;\n"
         << "    using C [[maybe_unused]] = expr::InactiveOf<S>;\n";
    for (int pc = program_.code.begin[s]; pc < program_.code.end[s]; ++pc)
      statement(pc, program_.code.code[pc]);
    out_ << "  }\n";
  }

 private:
  const std::string& reg(int r) const { return current_.at(static_cast<std::size_t>(r)); }

  // `v<pc>` is the value written by instruction pc: a reference where the interpreter copies a
  // value it only reads (inputs, the operand `if` chooses), a new value otherwise. Its type is
  // the operation's: C (no seeded derivative) for parameters and constants, the input's for an
  // input, and what the operands mix to (kernels/expr/program.hpp) for the rest, so that a value
  // of constants, parameters, time and unseeded coordinates alone is C, never a whole jet.
  void statement(int pc, const Instruction& i) {
    std::string v = std::to_string(pc);
    v.insert(0, 1, 'v');  // not "v" + ...: GCC 12 at -O3 reports a false -Wrestrict there
    const auto op = static_cast<Op>(i.op);
    switch (op) {
      case Op::kLoadQ:
      case Op::kLoadQd:
      case Op::kLoadQc: {
        const char* array = op == Op::kLoadQ ? "q" : op == Op::kLoadQd ? "qd" : "qc";
        out_ << "    const auto& " << v << " = in." << array << "[" << i.a << "];\n";
        break;
      }
      case Op::kLoadT:
        out_ << "    const auto& " << v << " = in.t;\n";
        break;
      case Op::kLoadParam:
        out_ << "    const C " << v << "(in.p[" << i.a << "]);\n";
        break;
      case Op::kLoadConst:
        out_ << "    const C " << v << "(" << literal(program_.code.constants[i.a]) << ");\n";
        break;
      case Op::kStore:
        out_ << "    store(" << i.a << ", " << reg(i.b) << ");\n";
        return;  // writes no register
      case Op::kIf:
        out_ << "    const auto& " << v << " = expr::detail::choose(" << reg(i.a) << ", "
             << reg(i.b) << ", " << reg(i.c) << ");\n";
        break;
      default: {
        // A unary operation reads x alone; the interpreter passes it a stale register as y.
        const std::string& y = unary(op) ? reg(i.a) : reg(i.b);
        out_ << "    const auto " << v << " = expr::detail::apply<expr::Op::k" << kOpNames[i.op]
             << ">(" << reg(i.a) << ", " << y << ");\n";
        break;
      }
    }
    current_.at(i.dst) = v;
  }

  static bool unary(Op op) {
    switch (op) {
#define UKES_CODEGEN_UNARY(Name, spelling, arity) \
  case Op::k##Name:                               \
    return (arity) == 1;
      UKES_EXPR_OPERATORS(UKES_CODEGEN_UNARY)
      UKES_EXPR_FUNCTIONS(UKES_CODEGEN_UNARY)
#undef UKES_CODEGEN_UNARY
      default:
        return false;
    }
  }

  const UserModelProgram& program_;
  std::ostringstream& out_;
  std::vector<std::string> current_;
};

// Parameter slots the program uses: its model's parameters and the derived ones it stores and
// loads (kernels/expr/compiler.hpp), at least one.
int parameter_slots(const UserModelProgram& program) {
  int slots = std::max(program.shape.params, 1);
  const int derived = static_cast<int>(Segment::kDerived);
  for (int pc = 0; pc < program.instruction_count; ++pc) {
    const Instruction& i = program.code.code[pc];
    const bool derived_store = static_cast<Op>(i.op) == Op::kStore &&
                               pc >= program.code.begin[derived] && pc < program.code.end[derived];
    if (static_cast<Op>(i.op) == Op::kLoadParam || derived_store) slots = std::max(slots, i.a + 1);
  }
  return slots;
}

}  // namespace

std::string generated_segments(const UserModelProgram& program, const std::string& name) {
  const ModelShape& shape = program.shape;
  std::ostringstream out;
  out << "// Generated by kernels/backend/cuda/jit/codegen.cpp from a user model's program.\n"
      << "struct " << name << " {\n"
      << "  static constexpr ModelShape kShape{" << shape.n << ", " << shape.position_rows << ", "
      << shape.velocity_rows << ", " << shape.params << "};\n"
      << "  static constexpr int kParamSlots = " << parameter_slots(program) << ";\n"
      << "  static constexpr bool kNonIdeal = " << (program.nonideal ? "true" : "false") << ";\n\n"
      << "  template <class S, class T, class Q, class Time, class Store>\n"
      << "  UKES_HD UKES_INLINE static void run(const UserModelProgram&, expr::Segment segment,\n"
      << "                                      const expr::Inputs<S, T, Q, Time>& in,\n"
      << "                                      const Store& store) {\n"
      << "    switch (segment) {\n";
  for (int s = 0; s < kModelSegments; ++s)
    out << "      case expr::Segment::k" << kSegmentNames[s] << ":\n        " << kSegmentNames[s]
        << "(in, store);\n        return;\n";
  out << "      default:  // an event program's segments\n        return;\n    }\n  }\n\n";
  SegmentWriter writer(program, out);
  for (int s = 0; s < kModelSegments; ++s) writer.write(static_cast<Segment>(s));
  out << "};\n";
  return out.str();
}

}  // namespace ukes::expr
