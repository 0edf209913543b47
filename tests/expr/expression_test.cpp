// The expression language (docs/MODEL_FORMAT.md, "Expressions") from the user's side: the
// grammar's precedence and associativity, numbers and constants, every function of
// UKES_EXPR_FUNCTIONS compiled and run against the standard library (double and float), the
// derivatives at kinks through constraint rows, and what the register allocator accepts and
// refuses.
#include "kernels/expr/expression.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <iterator>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/autodiff/jet.hpp"
#include "kernels/expr/operations.hpp"
#include "tests/expr/expr_support.hpp"

namespace ukes::testing {
namespace {

using json = nlohmann::json;
using expr::Node;
using expr::Op;

// The value of `e` over x (= 3 unless given), x_dot, t and parameters a = 1.5, b = -0.5.
double at(const std::string& e, double x = 3.0, double x_dot = 0.0, double t = 0.0) {
  return value_at<double>(e, x, x_dot, t);
}

// The column of the ExpressionError `text` raises (-1: none raised), and its reason.
struct Raised {
  int column = -1;
  std::string reason;
  bool limit = false;
};
Raised parse_error(const std::string& text) {
  try {
    expr::parse_expression(text);
  } catch (const expr::ExpressionError& e) {
    return {e.column(), e.what(), e.limit()};
  }
  return {};
}

// ---------------------------------------------------------------- precedence and associativity

TEST(Expression, UnaryMinusIsLooserThanPower) {
  const Node n = expr::parse_expression("-x^2");
  ASSERT_EQ(n.kind, Node::Kind::kOperator);
  EXPECT_EQ(n.op, Op::kNeg);
  ASSERT_EQ(n.args.size(), 1u);
  EXPECT_EQ(n.args[0].op, Op::kPow);
  EXPECT_EQ(n.args[0].args.at(0).name, "x");
  EXPECT_EQ(n.args[0].args.at(1).value, 2.0);
  EXPECT_EQ(at("-x^2", 3.0), -9.0);
  EXPECT_EQ(at("(-x)^2", 3.0), 9.0);
  EXPECT_EQ(at("-2^2"), -4.0);     // folded: the same grouping
  EXPECT_EQ(at("1 - x^2"), -8.0);  // binary minus, then the power
  EXPECT_EQ(at("2 * -x^2"), -18.0);
  EXPECT_EQ(at("-x^a", 4.0), -8.0);  // 4^1.5 = 8
}

TEST(Expression, PowerIsRightAssociative) {
  EXPECT_EQ(at("2^3^2"), 512.0);
  EXPECT_EQ(at("(2^3)^2"), 64.0);
  EXPECT_EQ(at("x^x_dot^t", 2.0, 3.0, 2.0), 512.0);  // not folded: the same grouping at run time
  EXPECT_EQ(at("2^x^2", 3.0), 512.0);
  const Node n = expr::parse_expression("a^b^c");
  EXPECT_EQ(n.op, Op::kPow);
  EXPECT_EQ(n.args.at(0).name, "a");
  EXPECT_EQ(n.args.at(1).op, Op::kPow);
  EXPECT_EQ(n.args.at(1).args.at(0).name, "b");
  EXPECT_EQ(n.args.at(1).args.at(1).name, "c");
  EXPECT_EQ(n.column, 2);  // the operator's column
  EXPECT_EQ(n.args.at(1).column, 4);
}

TEST(Expression, SumsAndProductsAreLeftAssociative) {
  EXPECT_EQ(at("10 - x - 2", 3.0), 5.0);  // (10 - 3) - 2, not 10 - (3 - 2) = 9
  EXPECT_EQ(at("x - x_dot - t", 10.0, 3.0, 2.0), 5.0);
  EXPECT_EQ(at("x / x_dot * t", 12.0, 3.0, 2.0), 8.0);  // (12 / 3) * 2, not 12 / 6 = 2
  EXPECT_EQ(at("x / x_dot / t", 12.0, 3.0, 2.0), 2.0);  // (12 / 3) / 2, not 12 / 1.5 = 8
  EXPECT_EQ(at("x - x_dot + t", 10.0, 3.0, 2.0), 9.0);  // (10 - 3) + 2, not 10 - 5 = 5
  EXPECT_EQ(at("1 + x * 2"), 7.0);
  EXPECT_EQ(at("1 + 2 * 3 ^ 2"), 19.0);
  // Rounding shows the grouping too: (x + y) + z differs from x + (y + z) here.
  const double x = 0.1, y = 0.2, z = 0.3;
  EXPECT_EQ(at("x + x_dot + t", x, y, z), (x + y) + z);
  EXPECT_NE((x + y) + z, x + (y + z));
  const Node d = expr::parse_expression("a - b - c");
  EXPECT_EQ(d.op, Op::kSub);
  EXPECT_EQ(d.args.at(0).op, Op::kSub);
  EXPECT_EQ(d.args.at(1).name, "c");
  const Node q = expr::parse_expression("a / b * c");
  EXPECT_EQ(q.op, Op::kMul);
  EXPECT_EQ(q.args.at(0).op, Op::kDiv);
  EXPECT_EQ(q.args.at(1).name, "c");
}

TEST(Expression, ComparisonsDoNotChain) {
  struct Case {
    const char* text;
    int column;  // of the second comparison
  };
  for (const Case c :
       {Case{"a < b < c", 7}, Case{"a <= b < c", 8}, Case{"a == b == c", 8}, Case{"a > b != c", 7},
        Case{"a >= b >= c", 8}, Case{"a<b<c", 4}, Case{"1 + a < b - 1 > c", 15}}) {
    SCOPED_TRACE(c.text);
    const Raised r = parse_error(c.text);
    EXPECT_EQ(r.column, c.column);
    EXPECT_NE(r.reason.find("chain"), std::string::npos) << r.reason;
    EXPECT_FALSE(r.limit);
  }
  // Parentheses or && make them legal.
  EXPECT_EQ(at("(x < 4) < 1", 3.0), 0.0);  // (1) < 1
  EXPECT_EQ(at("(x > 4) < 1", 3.0), 1.0);  // (0) < 1
  EXPECT_EQ(at("x > 2 && x < 4", 3.0), 1.0);
  // Comparisons bind looser than sums: x + 1 > 3 is (x + 1) > 3.
  EXPECT_EQ(at("x + 1 > 3", 2.5), 1.0);
  EXPECT_EQ(at("x > 3 - 1", 2.5), 1.0);
  const Node n = expr::parse_expression("a + 1 >= b * 2");
  EXPECT_EQ(n.op, Op::kGe);
  EXPECT_EQ(n.args.at(0).op, Op::kAdd);
  EXPECT_EQ(n.args.at(1).op, Op::kMul);
}

TEST(Expression, LogicalOperatorsGiveOneOrZero) {
  // Every operand pair, including NaN-free non-0/1 values: truth is != 0.
  const double values[] = {0.0, 1.0, -0.5, 2.0};
  for (double x : values) {
    for (double y : values) {
      SCOPED_TRACE(std::to_string(x) + ", " + std::to_string(y));
      EXPECT_EQ(at("x && x_dot", x, y), (x != 0 && y != 0) ? 1.0 : 0.0);
      EXPECT_EQ(at("x || x_dot", x, y), (x != 0 || y != 0) ? 1.0 : 0.0);
      EXPECT_EQ(at("!x", x, y), x == 0 ? 1.0 : 0.0);
      EXPECT_EQ(at("x < x_dot", x, y), x < y ? 1.0 : 0.0);
      EXPECT_EQ(at("x <= x_dot", x, y), x <= y ? 1.0 : 0.0);
      EXPECT_EQ(at("x > x_dot", x, y), x > y ? 1.0 : 0.0);
      EXPECT_EQ(at("x >= x_dot", x, y), x >= y ? 1.0 : 0.0);
      EXPECT_EQ(at("x == x_dot", x, y), x == y ? 1.0 : 0.0);
      EXPECT_EQ(at("x != x_dot", x, y), x != y ? 1.0 : 0.0);
    }
  }
  // Constants fold to the same values.
  EXPECT_EQ(at("2 && 3"), 1.0);
  EXPECT_EQ(at("0 && 1"), 0.0);
  EXPECT_EQ(at("0 || -0.5"), 1.0);
  EXPECT_EQ(at("0 || 0"), 0.0);
  EXPECT_EQ(at("!2"), 0.0);
  EXPECT_EQ(at("!0"), 1.0);
  EXPECT_EQ(at("!!-3"), 1.0);
  // && binds tighter than ||, and both looser than comparisons; ! is a prefix like unary minus.
  EXPECT_EQ(at("1 || 0 && 0"), 1.0);  // 1 || (0 && 0); (1 || 0) && 0 would be 0
  EXPECT_EQ(at("0 && 0 || 1"), 1.0);  // (0 && 0) || 1
  EXPECT_EQ(at("!x + 1", 3.0), 1.0);  // (!x) + 1; !(x + 1) would be 0
  const Node n = expr::parse_expression("a || b && c");
  EXPECT_EQ(n.op, Op::kOr);
  EXPECT_EQ(n.args.at(1).op, Op::kAnd);
  const Node m = expr::parse_expression("!a == b");
  EXPECT_EQ(m.op, Op::kEq);
  EXPECT_EQ(m.args.at(0).op, Op::kNot);
  const Node o = expr::parse_expression("a < b && b < c || !c");
  EXPECT_EQ(o.op, Op::kOr);
  EXPECT_EQ(o.args.at(0).op, Op::kAnd);
  EXPECT_EQ(o.args.at(0).args.at(0).op, Op::kLt);
  EXPECT_EQ(o.args.at(1).op, Op::kNot);
}

TEST(Expression, IfChoosesByTheCondition) {
  for (double x : {-2.0, 0.0, 0.5, 3.0}) {
    SCOPED_TRACE(x);
    EXPECT_EQ(at("if(x, x_dot, t)", x, 7.0, 11.0), x != 0 ? 7.0 : 11.0);
    EXPECT_EQ(at("if(x > 0, 2 * x, -x)", x), x > 0 ? 2 * x : -x);
    EXPECT_EQ(at("1 + if(x >= 0.5 && x < 3, 10, 20) * 2", x),
              1 + (x >= 0.5 && x < 3 ? 10.0 : 20.0) * 2);
    EXPECT_EQ(at("if(x < 0, if(x < -1, 1, 2), if(x == 0, 3, 4))", x),
              x < 0 ? (x < -1 ? 1.0 : 2.0) : (x == 0 ? 3.0 : 4.0));
  }
  // The branch not taken may be NaN (both are evaluated).
  EXPECT_EQ(at("if(x >= 0, sqrt(x), sqrt(-x))", -4.0), 2.0);
  EXPECT_EQ(at("if(x > 0, log(x), 0)", -1.0), 0.0);
  EXPECT_EQ(at("if(1, x, log(-1))", 5.0), 5.0);  // folded condition
}

TEST(Expression, UnaryOperatorsStack) {
  EXPECT_EQ(at("--x", 3.0), 3.0);
  EXPECT_EQ(at("-+-x", 3.0), 3.0);
  EXPECT_EQ(at("+x", 3.0), 3.0);
  EXPECT_EQ(at("1 - -x", 3.0), 4.0);
  EXPECT_EQ(at("2 * -x", 3.0), -6.0);
  EXPECT_EQ(at("-x * 2", 3.0), -6.0);
  EXPECT_EQ(at("x^(-1)", 4.0), 0.25);
  // A sign directly after ^ is not in the grammar (power = primary [^ power]).
  const Raised r = parse_error("x^-1");
  EXPECT_EQ(r.column, 3);
}

// ---------------------------------------------------------------- numbers and constants

TEST(Expression, Numbers) {
  EXPECT_EQ(at(".5"), 0.5);
  EXPECT_EQ(at("0.5"), 0.5);
  EXPECT_EQ(at("1e-3"), 1e-3);
  EXPECT_EQ(at("1e+3"), 1e3);
  EXPECT_EQ(at("2e3"), 2000.0);
  EXPECT_EQ(at("2.5e-1"), 0.25);
  EXPECT_EQ(at(".25e2"), 25.0);
  EXPECT_EQ(at("007"), 7.0);
  EXPECT_EQ(at("0.1 * x", 3.0), 0.1 * 3.0);  // the literal correctly rounded, as in C++
  EXPECT_EQ(at("x * 1e-300 * 1e-300", 1.0), 1e-300 * 1e-300);  // underflows to 0: finite
  const Node n = expr::parse_expression("  1.25e1");
  EXPECT_EQ(n.kind, Node::Kind::kNumber);
  EXPECT_EQ(n.value, 12.5);
  EXPECT_EQ(n.column, 3);
}

// docs: "`2e3` is a number, and `2 * e` uses the constant `e`". The grammar has no implicit
// product, so `2e` (the number 2, then the name e) is refused where the e stands.
TEST(Expression, TheLetterEAfterANumber) {
  EXPECT_EQ(at("2 * e"), 2 * kE);
  EXPECT_EQ(at("2*e"), 2 * kE);
  EXPECT_EQ(at("e * 2e0"), kE * 2);
  for (const char* text : {"2e", "2e+", "2e-x"}) {
    SCOPED_TRACE(text);
    const Raised r = parse_error(text);
    EXPECT_EQ(r.column, 2);
    EXPECT_NE(r.reason.find("'e"), std::string::npos) << r.reason;
  }
  EXPECT_EQ(parse_error("2x").column, 2);  // no implicit product with any name
}

TEST(Expression, MalformedNumbers) {
  EXPECT_EQ(parse_error("1.").column, 1);
  EXPECT_EQ(parse_error("x + 1. * 2").column, 5);
  EXPECT_EQ(parse_error(".").column, 1);
  EXPECT_EQ(parse_error("1.5.2").column, 4);  // 1.5, then .2 after the expression
  const Raised huge = parse_error("x * 1e999");
  EXPECT_EQ(huge.column, 5);
  EXPECT_NE(huge.reason.find("range"), std::string::npos) << huge.reason;
  EXPECT_FALSE(huge.limit);
  std::string digits = "1";
  digits.append(400, '0');  // 1e400 without an exponent
  EXPECT_EQ(parse_error("2 + " + digits).column, 5);
}

TEST(Expression, Constants) {
  EXPECT_EQ(at("pi"), kPi);
  EXPECT_EQ(at("e"), kE);
  EXPECT_EQ(at("pi"), std::acos(-1.0));
  EXPECT_EQ(at("e"), std::exp(1.0));
  EXPECT_EQ(at("x * pi", 2.0), 2.0 * kPi);
  EXPECT_EQ(at("sin(pi / 2) + cos(pi)"), 0.0);
  EXPECT_EQ(value_at<float>("pi + x", 0.0f), float(kPi));
  EXPECT_EQ(value_at<float>("e + x", 0.0f), float(kE));
}

TEST(Expression, SyntaxErrorsPointAtTheirToken) {
  struct Case {
    const char* text;
    int column;
  };
  const Case cases[] = {{"x +", 4},       {"(x", 3},       {"x)", 2},         {"x + * y", 5},
                        {"sin(x", 6},     {"sin x", 5},    {"x # 2", 3},      {"x = 1", 3},
                        {"x & y", 3},     {"x | y", 3},    {"f(x)", 1},       {"sin()", 1},
                        {"atan2(x)", 1},  {"if(1, 2)", 1}, {"min(1,2,3)", 1}, {"Qc(1)", 4},
                        {"Qc(x + 1)", 6}, {"x,y", 2},      {"()", 2}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    const Raised r = parse_error(c.text);
    EXPECT_EQ(r.column, c.column) << r.reason;
    EXPECT_FALSE(r.limit);
  }
  EXPECT_EQ(parse_error("").column, 0);
  EXPECT_EQ(parse_error(" \t ").column, 0);
}

TEST(Expression, ParserLimits) {
  // 64 levels of parentheses are the most; the 65th is refused where it opens.
  const auto nested = [](int levels) {
    return std::string(static_cast<std::size_t>(levels), '(') + "x" +
           std::string(static_cast<std::size_t>(levels), ')');
  };
  EXPECT_EQ(parse_error(nested(64)).column, -1);
  const Raised deep = parse_error(nested(65));
  EXPECT_TRUE(deep.limit);
  EXPECT_EQ(deep.column, 66);
  EXPECT_EQ(at(nested(64), 1.25), 1.25);
  // 4096 characters are the most.
  std::string text = "x";
  while (text.size() + 2 <= 4096) text += "+x";
  text += " ";
  ASSERT_EQ(text.size(), 4096u);
  EXPECT_EQ(parse_error(text).column, -1);
  text += " ";  // 4097: the same expression, one more space
  const Raised longer = parse_error(text);
  EXPECT_TRUE(longer.limit);
  EXPECT_EQ(longer.column, 0);
  // A long flat chain is no nesting.
  std::string chain = "x";
  for (int k = 0; k < 1000; ++k) chain += "+1";
  EXPECT_EQ(at(chain, 0.5), 1000.5);
}

// ---------------------------------------------------------------- every function, compiled

// The standard library's value of each function of the language (docs' function table).
template <class T>
std::map<std::string, std::function<T(T, T, T)>> references() {
  return {
      {"sin", [](T a, T, T) { return std::sin(a); }},
      {"cos", [](T a, T, T) { return std::cos(a); }},
      {"tan", [](T a, T, T) { return std::tan(a); }},
      {"asin", [](T a, T, T) { return std::asin(a); }},
      {"acos", [](T a, T, T) { return std::acos(a); }},
      {"atan", [](T a, T, T) { return std::atan(a); }},
      {"sinh", [](T a, T, T) { return std::sinh(a); }},
      {"cosh", [](T a, T, T) { return std::cosh(a); }},
      {"tanh", [](T a, T, T) { return std::tanh(a); }},
      {"exp", [](T a, T, T) { return std::exp(a); }},
      {"log", [](T a, T, T) { return std::log(a); }},
      {"sqrt", [](T a, T, T) { return std::sqrt(a); }},
      {"abs", [](T a, T, T) { return std::abs(a); }},
      {"sign", [](T a, T, T) { return a > 0   ? T(1)
                                      : a < 0 ? T(-1)
                                              : T(0); }},
      {"atan2", [](T a, T b, T) { return std::atan2(a, b); }},
      {"pow", [](T a, T b, T) { return std::pow(a, b); }},
      {"min", [](T a, T b, T) { return a <= b ? a : b; }},
      {"max", [](T a, T b, T) { return a >= b ? a : b; }},
      {"hypot", [](T a, T b, T) { return std::hypot(a, b); }},
      {"if", [](T c, T a, T b) { return c != 0 ? a : b; }},
  };
}

template <class T>
void every_function_matches_the_standard_library() {
  struct Function {
    const char* spelling;
    int arity;
  };
  const Function functions[] = {
#define UKES_TEST_FUNCTION(Name, spelling, arity) {spelling, arity},
      UKES_EXPR_FUNCTIONS(UKES_TEST_FUNCTION)
#undef UKES_TEST_FUNCTION
  };
  const auto reference = references<T>();
  EXPECT_EQ(reference.size(), std::size(functions));
  // Points in and out of the domains: outside, both sides give NaN (or the same infinity).
  const T points[][3] = {{T(0.35), T(1.7), T(-0.8)}, {T(-0.6), T(0.25), T(2.0)},
                         {T(0.0), T(-1.25), T(0.5)}, {T(2.5), T(-3.0), T(0.0)},
                         {T(-1.5), T(0.0), T(1.0)},  {T(0.75), T(0.75), T(-2.0)}};
  const char* args[] = {"x", "x_dot", "t"};
  for (const Function& f : functions) {
    const auto it = reference.find(f.spelling);
    if (it == reference.end()) {
      ADD_FAILURE() << "no reference for " << f.spelling;
      continue;
    }
    std::string text = std::string(f.spelling) + "(";
    for (int k = 0; k < f.arity; ++k) text += std::string(k > 0 ? ", " : "") + args[k];
    text += ")";
    for (const auto& p : points) {
      SCOPED_TRACE(text + " at " + std::to_string(double(p[0])) + ", " +
                   std::to_string(double(p[1])) + ", " + std::to_string(double(p[2])));
      const T x = unfolded(p[0]), x_dot = unfolded(p[1]), t = unfolded(p[2]);
      const T got = value_at<T>(text, x, x_dot, t);
      const T want = it->second(x, x_dot, t);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << got;
      } else {
        EXPECT_EQ(got, want);
      }
    }
  }
  // `^` is pow.
  EXPECT_EQ(value_at<T>("x ^ x_dot", T(1.3), T(0.7)), std::pow(unfolded(T(1.3)), unfolded(T(0.7))));
  EXPECT_EQ(value_at<T>("x ^ 2", T(1.3)), T(1.3) * T(1.3));
}

TEST(Expression, EveryFunctionMatchesTheStandardLibraryDouble) {
  every_function_matches_the_standard_library<double>();
}
TEST(Expression, EveryFunctionMatchesTheStandardLibraryFloat) {
  every_function_matches_the_standard_library<float>();
}

// The parser's table is the X-macro's: every function is found with its arity, and nothing else.
TEST(Expression, FunctionTable) {
  int count = 0;
#define UKES_TEST_FIND(Name, spelling, n)                              \
  {                                                                    \
    Op op = Op::kCount;                                                \
    int arity = -1;                                                    \
    EXPECT_TRUE(expr::find_function(spelling, op, arity)) << spelling; \
    EXPECT_EQ(op, Op::k##Name);                                        \
    EXPECT_EQ(arity, n);                                               \
    ++count;                                                           \
  }
  UKES_EXPR_FUNCTIONS(UKES_TEST_FIND)
#undef UKES_TEST_FIND
  EXPECT_EQ(count, 20);  // the docs' function table
  Op op = Op::kCount;
  int arity = 0;
  for (const char* name : {"Qc", "e", "pi", "t", "ln", "Sin", "SIN", "abs_", "", "square"})
    EXPECT_FALSE(expr::find_function(name, op, arity)) << name;
}

// ---------------------------------------------------------------- derivatives at kinks

// Position rows over coordinates x, y evaluated as jets seeded on both: gradient (d/dx, d/dy) and
// Taylor coefficients along x(s) = x0 + vx s + wx s^2, y(s) = y0 + vy s + wy s^2, t(s) = t0 + s.
using J = Jet<double, 2>;

struct Point {
  double x, vx, wx, y, vy, wy;
};

J row(const std::string& expression, const Point& p, double t0 = 0.5) {
  json d = json::parse(R"({"name": "rows", "coordinates": ["x", "y"],
    "parameters": [{"name": "a", "value": 1.5}], "mass": {"diagonal": [1, 1]}, "force": [0, 0]})");
  d["position_constraints"] = json::array({expression});
  const UserModelDefinition def = parse_user_model(d);
  const J q[] = {J::variable(p.x, 0, p.vx, p.wx), J::variable(p.y, 1, p.vy, p.wy)};
  const double params[] = {1.5};
  return run<J, double>(def, expr::Segment::kPositionRows,
                        {q, nullptr, J(t0, 1.0, 0.0), params, nullptr}, 1)[0];
}

void expect_jet(const J& r, double c0, double gx, double gy, double c1, double c2) {
  EXPECT_DOUBLE_EQ(r.c0, c0);
  EXPECT_DOUBLE_EQ(r.gradient(0), gx);
  EXPECT_DOUBLE_EQ(r.gradient(1), gy);
  EXPECT_DOUBLE_EQ(r.c1, c1);
  EXPECT_DOUBLE_EQ(r.c2, c2);
}

TEST(ExpressionKinks, AbsAndSign) {
  const Point zero{0.0, 2.0, 0.5, 0.7, -1.0, 0.25};
  {
    SCOPED_TRACE("abs at 0: no derivative");
    expect_jet(row("abs(x)", zero), 0.0, 0.0, 0.0, 0.0, 0.0);
  }
  {
    SCOPED_TRACE("abs(x - y) at x = y");
    const Point tie{0.7, 2.0, 0.5, 0.7, -1.0, 0.25};
    expect_jet(row("abs(x - y)", tie), 0.0, 0.0, 0.0, 0.0, 0.0);
  }
  {
    SCOPED_TRACE("abs below 0 is -x");
    const Point p{-2.0, 2.0, 0.5, 0.7, -1.0, 0.25};
    expect_jet(row("abs(x)", p), 2.0, -1.0, 0.0, -2.0, -0.5);
  }
  {
    SCOPED_TRACE("abs above 0 is x");
    const Point p{1.5, 2.0, 0.5, 0.7, -1.0, 0.25};
    expect_jet(row("abs(x) * y", p), 1.5 * 0.7, 0.7, 1.5, 2.0 * 0.7 + 1.5 * -1.0,
               0.5 * 0.7 + 2.0 * -1.0 + 1.5 * 0.25);
  }
  for (double x0 : {-1.0, 0.0, 2.0}) {
    SCOPED_TRACE(x0);
    const Point p{x0, 2.0, 0.5, 0.7, -1.0, 0.25};
    expect_jet(row("sign(x)", p), x0 < 0 ? -1.0 : x0 > 0 ? 1.0 : 0.0, 0.0, 0.0, 0.0, 0.0);
    // sign(x) * y: sign is a constant factor.
    const double s = x0 < 0 ? -1.0 : x0 > 0 ? 1.0 : 0.0;
    expect_jet(row("sign(x) * y", p), s * 0.7, 0.0, s, s * -1.0, s * 0.25);
  }
}

TEST(ExpressionKinks, MinAndMaxTakeTheChosenOperandsDerivatives) {
  // x below y: min is x, max is y.
  const Point below{0.2, 2.0, 0.5, 0.7, -1.0, 0.25};
  expect_jet(row("min(x, y)", below), 0.2, 1.0, 0.0, 2.0, 0.5);
  expect_jet(row("min(y, x)", below), 0.2, 1.0, 0.0, 2.0, 0.5);
  expect_jet(row("max(x, y)", below), 0.7, 0.0, 1.0, -1.0, 0.25);
  expect_jet(row("max(y, x)", below), 0.7, 0.0, 1.0, -1.0, 0.25);
  // A tie takes the first operand (a <= b for min, a >= b for max).
  const Point tie{0.7, 2.0, 0.5, 0.7, -1.0, 0.25};
  expect_jet(row("min(x, y)", tie), 0.7, 1.0, 0.0, 2.0, 0.5);
  expect_jet(row("min(y, x)", tie), 0.7, 0.0, 1.0, -1.0, 0.25);
  expect_jet(row("max(x, y)", tie), 0.7, 1.0, 0.0, 2.0, 0.5);
  expect_jet(row("max(y, x)", tie), 0.7, 0.0, 1.0, -1.0, 0.25);
  // Composite operands: min(x * y, sin(y)) at x = 0.2, y = 0.7: x y = 0.14 < sin(0.7).
  const double y = 0.7;
  expect_jet(row("min(x * y, sin(y))", below), 0.2 * y, y, 0.2, 2.0 * y + 0.2 * -1.0,
             0.5 * y + 2.0 * -1.0 + 0.2 * 0.25);
  expect_jet(row("max(x * y, sin(y))", below), std::sin(y), 0.0, std::cos(y), std::cos(y) * -1.0,
             std::cos(y) * 0.25 - 0.5 * std::sin(y) * 1.0);
}

TEST(ExpressionKinks, IfTakesTheBranchDerivatives) {
  const Point p{0.4, 2.0, 0.5, 0.9, -1.0, 0.25};
  // x < y: the product; its Taylor coefficients by the product rule.
  const double xy_c1 = 2.0 * 0.9 + 0.4 * -1.0, xy_c2 = 0.5 * 0.9 + 2.0 * -1.0 + 0.4 * 0.25;
  expect_jet(row("if(x < y, x * y, sin(y))", p), 0.4 * 0.9, 0.9, 0.4, xy_c1, xy_c2);
  const double s = std::sin(0.9), c = std::cos(0.9);
  expect_jet(row("if(x > y, x * y, sin(y))", p), s, 0.0, c, c * -1.0, c * 0.25 - 0.5 * s);
  // The condition's own derivative plays no part; a comparison has none.
  expect_jet(row("x < y", p), 1.0, 0.0, 0.0, 0.0, 0.0);
  expect_jet(row("(x < y) * x", p), 0.4, 1.0, 0.0, 2.0, 0.5);
  expect_jet(row("if(x * y, x, y)", p), 0.4, 1.0, 0.0, 2.0, 0.5);
  // NaN in the branch not taken leaves no trace in the derivatives.
  const Point neg{-4.0, 2.0, 0.5, 0.9, -1.0, 0.25};
  const J r = row("if(x >= 0, sqrt(x), sqrt(-x))", neg);
  // sqrt(-x): d/dx = -1 / (2 sqrt(-x)) = -0.25; c1 = -0.25 * 2; c2 = -0.25 * 0.5 + f''/2 vx^2
  // with f'' = -1 / (4 (-x)^1.5) = -1/32.
  expect_jet(r, 2.0, -0.25, 0.0, -0.5, -0.25 * 0.5 + 0.5 * (-1.0 / 32.0) * 4.0);
  // Time moves (t' = 1) but is not seeded: if(t > 0, x * t, y).
  expect_jet(row("if(t > 0, x * t, y)", p, 0.5), 0.4 * 0.5, 0.5, 0.0, 2.0 * 0.5 + 0.4,
             0.5 * 0.5 + 2.0);
}

// ---------------------------------------------------------------- common subexpressions and
// registers

int count_op(const UserModelDefinition& d, expr::Segment segment, Op op) {
  const int s = static_cast<int>(segment);
  int count = 0;
  for (int pc = d.program.begin[s]; pc < d.program.end[s]; ++pc)
    count += d.program.code[static_cast<std::size_t>(pc)].op == static_cast<std::uint16_t>(op);
  return count;
}

TEST(ExpressionRegisters, RepeatedSubexpressionsAreComputedOnce) {
  // 150 copies of sin(x) * cos(x_dot), summed left to right (3300 characters).
  std::string text = "sin(x) * cos(x_dot)";
  for (int k = 1; k < 150; ++k) text += " + sin(x) * cos(x_dot)";
  const UserModelDefinition d = force_model(text);
  EXPECT_EQ(count_op(d, expr::Segment::kForce, Op::kSin), 1);
  EXPECT_EQ(count_op(d, expr::Segment::kForce, Op::kCos), 1);
  EXPECT_EQ(count_op(d, expr::Segment::kForce, Op::kMul), 1);
  EXPECT_EQ(count_op(d, expr::Segment::kForce, Op::kAdd), 149);
  // At most x, x_dot, sin, cos, the product and the running sum are alive at once.
  EXPECT_LE(d.program.registers, 6);
  const double x = unfolded(0.3), v = unfolded(-1.1), term = std::sin(x) * std::cos(v);
  double sum = term;
  for (int k = 1; k < 150; ++k) sum = sum + term;
  const double p[] = {1.5, -0.5};
  const expr::Inputs<double, double> in{&x, &v, 0.0, p, nullptr};
  EXPECT_EQ((run<double, double>(d, expr::Segment::kForce, in, 1)[0]), sum);
}

TEST(ExpressionRegisters, DeepExpressionsNeedFewRegisters) {
  // sin(sin(...sin(x)...)), 63 deep (the argument of the innermost is at depth 63).
  std::string text = "x";
  for (int k = 0; k < 63; ++k) text = "sin(" + text + ")";
  const UserModelDefinition d = force_model(text);
  EXPECT_LE(d.program.registers, 2);
  double want = unfolded(0.9);
  for (int k = 0; k < 63; ++k) want = std::sin(want);
  EXPECT_EQ(value_at<double>(text, 0.9), want);
  // x + (x_dot * (x + (x_dot * (...)))): right-nested, but over two loaded values.
  std::string nested = "t";
  for (int k = 0; k < 60; ++k) nested = std::string(k % 2 ? "x_dot * (" : "x + (") + nested + ")";
  const UserModelDefinition n = force_model(nested);
  EXPECT_LE(n.program.registers, 4);
  const double x = 0.5, v = 0.9, t = 0.25;
  double r = t;
  for (int k = 0; k < 60; ++k) r = k % 2 ? v * r : x + r;
  EXPECT_EQ(value_at<double>(nested, x, v, t), r);
}

// s0 + (s1 + (s2 + ...)), s_k = sin(x + k): evaluated in order, every s_k is computed before the
// first sum, so all are alive at once. The registers must hold them apart.
TEST(ExpressionRegisters, RightNestedSumsHoldEveryTerm) {
  const int terms = 50;
  std::string text = numbered("sin(x + ", terms - 1) + ")";
  for (int k = terms - 2; k >= 0; --k) text = numbered("sin(x + ", k) + ") + (" + text + ")";
  const UserModelDefinition d = force_model(text);
  EXPECT_GE(d.program.registers, terms);
  EXPECT_LE(d.program.registers, expr::kMaxRegisters);
  const double x = unfolded(0.37);
  double want = std::sin(x + (terms - 1));
  for (int k = terms - 2; k >= 0; --k) want = std::sin(x + k) + want;
  EXPECT_EQ(value_at<double>(text, x), want);
}

// Two rows over the same terms in opposite orders: row 0 computes t_0 ... t_{N-1} (each once, by
// common subexpressions) and row 1 needs them again from the last, so after row 0 all N are
// alive. N = 50 fits the 64 registers; N = 70 is refused as a limit.
json two_rows(int terms) {
  std::string forward, backward;
  for (int k = 0; k < terms; ++k) {
    const std::string term = numbered("cos(x * ", k + 1) + ")";
    forward = forward.empty() ? term : forward + " + " + term;
    backward = backward.empty() ? term : term + " + " + backward;  // t_{N-1} + ... + t_0
  }
  json d = json::parse(R"({"name": "rows", "coordinates": ["x", "y"],
    "mass": {"diagonal": [1, 1]}})");
  d["force"] = json::array({forward, backward});
  return d;
}

TEST(ExpressionRegisters, ValuesSharedAcrossRowsStayAlive) {
  const UserModelDefinition d = parse_user_model(two_rows(50));
  EXPECT_EQ(count_op(d, expr::Segment::kForce, Op::kCos), 50);
  EXPECT_GE(d.program.registers, 50);
  EXPECT_LE(d.program.registers, expr::kMaxRegisters);
  const double q[] = {unfolded(0.61), 0.0}, qd[] = {0.0, 0.0};
  const auto out = run<double, double>(d, expr::Segment::kForce, {q, qd, 0.0, nullptr, nullptr}, 2);
  double forward = std::cos(q[0] * 1);
  for (int k = 1; k < 50; ++k) forward = forward + std::cos(q[0] * (k + 1));
  double backward = std::cos(q[0] * 50);
  for (int k = 48; k >= 0; --k) backward = backward + std::cos(q[0] * (k + 1));
  EXPECT_EQ(out[0], forward);
  EXPECT_EQ(out[1], backward);
}

TEST(ExpressionRegisters, MoreThan64LiveValuesAreALimit) {
  try {
    parse_user_model(two_rows(70));
    FAIL() << "accepted";
  } catch (const DefinitionError& e) {
    EXPECT_EQ(e.path, "$.force");
    EXPECT_EQ(e.column, 0);
    EXPECT_TRUE(e.limit);
    EXPECT_NE(e.reason.find("64"), std::string::npos) << e.reason;
  }
}

// ---------------------------------------------------------------- operands of no seeded input

// Generated code (kernels/backend/cuda/jit/codegen.cpp) gives constants, parameters, time and the
// unseeded coordinates the type Jet<T, 0>, and every operation mixes it with a jet: each must
// give what it gives the same operand held as a jet that does not vary, bit for bit, with the
// jet's type; of two such operands, a jet of no seeded input again.
template <int N>
void expect_same_jet(const Jet<double, N>& got, const J& want) {
  auto bits = [](double v) { return std::bit_cast<std::uint64_t>(v); };
  EXPECT_EQ(bits(got.c0), bits(want.c0));
  EXPECT_EQ(bits(got.c1), bits(want.c1));
  EXPECT_EQ(bits(got.c2), bits(want.c2));
  EXPECT_EQ(got.varies, want.varies);
  for (int k = 0; k < 2; ++k) EXPECT_EQ(bits(got.gradient(k)), bits(want.gradient(k)));
}

template <Op kOp, int kArity>
void expect_mixed_operands_as_jets(const char* spelling) {
  using U = Jet<double, 0>;
  SCOPED_TRACE(spelling);
  const J x = J::variable(0.7, 0, 0.3, -0.2);
  const U u(0.4, 1.5, -0.25), truth(1.0);
  const J u_held(0.4, 1.5, -0.25), truth_held(1.0);
  if constexpr (kArity == 1) {
    const auto r = expr::detail::apply<kOp>(u, u);
    static_assert(std::is_same_v<decltype(r), const U>);
    expect_same_jet(r, expr::detail::apply<kOp>(u_held, u_held));
  } else if constexpr (kArity == 2) {
    const auto xu = expr::detail::apply<kOp>(x, u), ux = expr::detail::apply<kOp>(u, x);
    const auto uu = expr::detail::apply<kOp>(u, u);
    static_assert(std::is_same_v<decltype(xu), const J> && std::is_same_v<decltype(ux), const J>);
    static_assert(std::is_same_v<decltype(uu), const U>);
    expect_same_jet(xu, expr::detail::apply<kOp>(x, u_held));
    expect_same_jet(ux, expr::detail::apply<kOp>(u_held, x));
    expect_same_jet(uu, expr::detail::apply<kOp>(u_held, u_held));
  } else {  // `if`: the condition is of no seeded input, either branch may be
    expect_same_jet(expr::detail::choose(truth, x, u), expr::detail::choose(truth_held, x, u_held));
    expect_same_jet(expr::detail::choose(truth, u, x), expr::detail::choose(truth_held, u_held, x));
    expect_same_jet(expr::detail::choose(u - u, x, u),
                    expr::detail::choose(u_held - u_held, x, u_held));
  }
}

TEST(Expression, OperandsOfNoSeededInputMixWithJetsBitForBit) {
#define UKES_TEST_MIXED(Name, spelling, arity) \
  expect_mixed_operands_as_jets<Op::k##Name, arity>(spelling);
  UKES_EXPR_OPERATORS(UKES_TEST_MIXED)
  UKES_EXPR_FUNCTIONS(UKES_TEST_MIXED)
#undef UKES_TEST_MIXED
}

}  // namespace
}  // namespace ukes::testing
