// The instructions of a compiled model program (kernels/expr/program.hpp) and the functions of the
// expression language (docs/MODEL_FORMAT.md): one list that the parser, the compiler, the
// evaluator and the docs' function table all follow.
#pragma once

#include <cstdint>

// X(Name, spelling, arity): functions, callable by name in expressions.
// clang-format off
#define UKES_EXPR_FUNCTIONS(X) \
  X(Sin, "sin", 1) X(Cos, "cos", 1) X(Tan, "tan", 1) \
  X(Asin, "asin", 1) X(Acos, "acos", 1) X(Atan, "atan", 1) \
  X(Sinh, "sinh", 1) X(Cosh, "cosh", 1) X(Tanh, "tanh", 1) \
  X(Exp, "exp", 1) X(Log, "log", 1) X(Sqrt, "sqrt", 1) \
  X(Abs, "abs", 1) X(Sign, "sign", 1) \
  X(Atan2, "atan2", 2) X(Pow, "pow", 2) X(Min, "min", 2) X(Max, "max", 2) X(Hypot, "hypot", 2) \
  X(If, "if", 3)

// X(Name, spelling, arity): operators (spelling as written; Neg and Not are prefix).
#define UKES_EXPR_OPERATORS(X) \
  X(Add, "+", 2) X(Sub, "-", 2) X(Mul, "*", 2) X(Div, "/", 2) X(Neg, "-", 1) \
  X(Lt, "<", 2) X(Le, "<=", 2) X(Gt, ">", 2) X(Ge, ">=", 2) X(Eq, "==", 2) X(Ne, "!=", 2) \
  X(And, "&&", 2) X(Or, "||", 2) X(Not, "!", 1)

// X(Name): data movement. Loads write register dst from input `a` (coordinate, parameter or
// constant index); Store hands register b to the segment's output a.
#define UKES_EXPR_MOVES(X) \
  X(LoadQ) X(LoadQd) X(LoadT) X(LoadParam) X(LoadConst) X(LoadQc) X(Store)
// clang-format on

namespace ukes::expr {

enum class Op : std::uint16_t {
#define UKES_EXPR_ENUM(Name, ...) k##Name,
  UKES_EXPR_MOVES(UKES_EXPR_ENUM) UKES_EXPR_OPERATORS(UKES_EXPR_ENUM)
      UKES_EXPR_FUNCTIONS(UKES_EXPR_ENUM)
#undef UKES_EXPR_ENUM
          kCount
};

}  // namespace ukes::expr
