// Expressions of the model language (docs/MODEL_FORMAT.md), parsed on the host into trees whose
// nodes remember their column, so that every later error (an unknown name, a rate where only
// positions may appear) points into the text the user wrote.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/expr/operations.hpp"

namespace ukes::expr {

// Expression text longer than this, or nested deeper, is refused (a limit, not a mistake).
inline constexpr std::size_t kMaxExpressionLength = 4096;
inline constexpr int kMaxDepth = 64;

// A mistake in one expression: `column` (1-based, 0 = the whole expression) and why. `limit`
// marks what is too large rather than wrong.
class ExpressionError : public std::runtime_error {
 public:
  ExpressionError(int column, const std::string& reason, bool limit = false)
      : std::runtime_error(reason), column_(column), limit_(limit) {}
  int column() const { return column_; }
  bool limit() const { return limit_; }

 private:
  int column_;
  bool limit_;
};

struct Node {
  enum class Kind { kNumber, kName, kCall, kOperator, kConstraintForce };
  Kind kind = Kind::kNumber;
  Op op = Op::kCount;  // kCall, kOperator
  double value = 0;    // kNumber
  std::string name;    // kName; kConstraintForce: the coordinate
  int column = 0;
  std::vector<Node> args;
};

// Parses `text` (a JSON number is given as its decimal text). Throws ExpressionError.
Node parse_expression(std::string_view text);

// The function named `name` and its arity; false when there is none.
bool find_function(std::string_view name, Op& op, int& arity);

// User text for an error message: quoted, printable, at most 32 characters of it.
std::string quoted_text(std::string_view text);

// Whether two trees are the same expression (spelling of numbers aside).
bool same_tree(const Node& a, const Node& b);

}  // namespace ukes::expr
