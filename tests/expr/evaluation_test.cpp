// Compiled expressions against the same arithmetic written in C++, in double and float: the
// language's precedence and associativity, constants, conditionals, and derivatives at kinks.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "kernels/autodiff/jet.hpp"
#include "kernels/expr/expression.hpp"
#include "tests/expr/expr_support.hpp"

namespace ukes::testing {
namespace {

// Same operations in the same order as C++ evaluates them: the same numbers, to the bit.
template <class T>
void expect_same_as_cpp() {
  const T x = unfolded(T(0.7)), v = unfolded(T(-1.3)), t = unfolded(T(0.25)), a = unfolded(T(1.5)),
          b = unfolded(T(-0.5));
  const auto at = [&](const char* e) { return value_at<T>(e, x, v, t); };
  EXPECT_EQ(at("sin(x) * cos(x_dot) + exp(-x) / (a + x_dot * x_dot)"),
            sin(x) * cos(v) + exp(-x) / (a + v * v));
  EXPECT_EQ(at("-a * x - b * x_dot + t"), -a * x - b * v + t);
  EXPECT_EQ(at("sqrt(a * a + x * x) - atan2(x_dot, x) * tanh(t)"),
            sqrt(a * a + x * x) - atan2(v, x) * tanh(t));
  EXPECT_EQ(at("log(a + x) + asin(x) - acos(b) + atan(x_dot)"),
            log(a + x) + asin(x) - acos(b) + atan(v));
  EXPECT_EQ(at("sinh(x) / cosh(x_dot) + tan(t) * abs(x_dot) * sign(x_dot)"),
            sinh(x) / cosh(v) + tan(t) * abs(v) * T(-1));
  EXPECT_EQ(at("pow(a, x) + x ^ 3 + hypot(x, x_dot)"), pow(a, x) + pow(x, T(3)) + hypot(x, v));
  EXPECT_EQ(at("min(x, x_dot) * max(a, b)"), v * a);
  EXPECT_EQ(at("2.5 * x + 0.1 * x_dot"), T(2.5) * x + T(0.1) * v);
  EXPECT_EQ(at("x / 3"), x / T(3));
}

TEST(Evaluation, SameNumbersAsCppDouble) { expect_same_as_cpp<double>(); }
TEST(Evaluation, SameNumbersAsCppFloat) { expect_same_as_cpp<float>(); }

TEST(Evaluation, PrecedenceAndAssociativity) {
  const auto at = [](const char* e, double x = 3.0) { return value_at<double>(e, x); };
  EXPECT_EQ(at("-x^2"), -9.0);
  EXPECT_EQ(at("(-x)^2"), 9.0);
  EXPECT_EQ(at("2^3^2"), 512.0);
  EXPECT_EQ(at("(2^3)^2"), 64.0);
  EXPECT_EQ(at("10 - x - 2"), 5.0);
  EXPECT_EQ(at("12 / x / 2"), 2.0);
  EXPECT_EQ(at("12 / x * 2"), 8.0);
  EXPECT_EQ(at("1 + x * 2"), 7.0);
  EXPECT_EQ(at("-x * 2"), -6.0);
  EXPECT_EQ(at("x^(-1)", 2.0), 0.5);  // a negative exponent needs its parentheses
  EXPECT_EQ(at("2 * -x"), -6.0);
  EXPECT_EQ(at("--x"), 3.0);
  EXPECT_EQ(at("+x"), 3.0);
  EXPECT_EQ(at("!x + 1"), 1.0);
  EXPECT_EQ(at("!!x"), 1.0);
  EXPECT_EQ(at("1 || 0 && 0"), 1.0);  // && binds tighter than ||
  EXPECT_EQ(at("(1 || 0) && 0"), 0.0);
  EXPECT_EQ(at("x + 1 > 3"), 1.0);  // comparisons bind looser than sums
  EXPECT_EQ(at("x > 2 && x < 4"), 1.0);
  EXPECT_EQ(at("1 + 2 * 3 ^ 2"), 19.0);
  EXPECT_EQ(at("2e3 + .5 + 1.25e-1"), 2000.625);
  EXPECT_EQ(at("2*e"), 2 * kE);
  EXPECT_EQ(at("pi"), kPi);
  EXPECT_EQ(at("e"), kE);
  EXPECT_EQ(at("  x\t*  2 "), 6.0);
}

// The trees, where values could hide a wrong grouping.
TEST(Evaluation, TreesFollowTheGrammar) {
  using expr::Node;
  using expr::Op;
  const Node neg = expr::parse_expression("-x^2");
  EXPECT_EQ(neg.op, Op::kNeg);
  EXPECT_EQ(neg.args.at(0).op, Op::kPow);
  const Node power = expr::parse_expression("a^b^c");
  EXPECT_EQ(power.op, Op::kPow);
  EXPECT_EQ(power.args.at(0).name, "a");
  EXPECT_EQ(power.args.at(1).op, Op::kPow);
  const Node difference = expr::parse_expression("a - b - c");
  EXPECT_EQ(difference.op, Op::kSub);
  EXPECT_EQ(difference.args.at(0).op, Op::kSub);
  EXPECT_EQ(difference.args.at(1).name, "c");
  EXPECT_EQ(difference.column, 7);  // the operator's column
  const Node call = expr::parse_expression("  atan2(y, x)");
  EXPECT_EQ(call.op, Op::kAtan2);
  EXPECT_EQ(call.column, 3);
  EXPECT_EQ(call.args.at(1).column, 12);
  EXPECT_TRUE(expr::same_tree(expr::parse_expression("(x*y)"), expr::parse_expression("x * y")));
  EXPECT_FALSE(expr::same_tree(expr::parse_expression("x*y"), expr::parse_expression("y*x")));
}

TEST(Evaluation, ComparisonsAndConditionals) {
  const auto at = [](const char* e, double x) { return value_at<double>(e, x); };
  for (double x : {-1.0, 0.0, 2.0}) {
    SCOPED_TRACE(x);
    EXPECT_EQ(at("x < 0", x), x < 0 ? 1.0 : 0.0);
    EXPECT_EQ(at("x <= 0", x), x <= 0 ? 1.0 : 0.0);
    EXPECT_EQ(at("x > 0", x), x > 0 ? 1.0 : 0.0);
    EXPECT_EQ(at("x >= 0", x), x >= 0 ? 1.0 : 0.0);
    EXPECT_EQ(at("x == 0", x), x == 0 ? 1.0 : 0.0);
    EXPECT_EQ(at("x != 0", x), x != 0 ? 1.0 : 0.0);
    EXPECT_EQ(at("if(x > 0, 10, 20)", x), x > 0 ? 10.0 : 20.0);
    EXPECT_EQ(at("if(x, 10, 20)", x), x != 0 ? 10.0 : 20.0);
    EXPECT_EQ(at("if(x >= 0 && x < 1, 1, 0)", x), x == 0 ? 1.0 : 0.0);
    EXPECT_EQ(at("if(x < 0 || x > 1, 1, 0)", x), x != 0 ? 1.0 : 0.0);
  }
  // Both branches are evaluated: a NaN in the one not taken is harmless.
  EXPECT_EQ(at("if(x >= 0, sqrt(x), sqrt(-x))", -4.0), 2.0);
  EXPECT_EQ(at("if(x >= 0, sqrt(x), sqrt(-x))", 9.0), 3.0);
  EXPECT_TRUE(std::isnan(at("if(x, log(x - 5), 0)", 1.0)));
  EXPECT_EQ(at("min(x, 1) + max(x, 1)", 3.0), 4.0);
}

// Position rows as jets: comparisons carry no derivative, `if` takes the chosen branch's.
using J = Jet<double, 1>;

J row_at(const std::string& row, J x, J t = J(0.3)) {
  nlohmann::json d = nlohmann::json::parse(R"({"name": "row", "coordinates": ["x"],
    "parameters": [{"name": "a", "value": 1.5}], "mass": [[1]], "force": [0]})");
  d["position_constraints"] = {row};
  const UserModelDefinition def = parse_user_model(d);
  const double p[] = {1.5};
  return run<J, double>(def, expr::Segment::kPositionRows, {&x, nullptr, t, p, nullptr}, 1)[0];
}

TEST(Evaluation, DerivativesThroughConditionals) {
  const J x = J::variable(0.5, 0, 2.0, 0.0);
  const J cmp = row_at("x > 0", x);
  EXPECT_EQ(cmp.c0, 1.0);
  EXPECT_EQ(cmp.c1, 0.0);
  EXPECT_EQ(cmp.gradient(0), 0.0);
  const J logic = row_at("!(x < 0) || x == 1", x);
  EXPECT_EQ(logic.c0, 1.0);
  EXPECT_EQ(logic.gradient(0), 0.0);
  const J taken = row_at("if(x > 0, a * x * x, sin(x))", x);
  EXPECT_EQ(taken.c0, 1.5 * 0.25);
  EXPECT_EQ(taken.gradient(0), 1.5);
  EXPECT_EQ(taken.c1, 3.0);
  const J other = row_at("if(x > 1, a * x * x, sin(x))", x);
  EXPECT_EQ(other.gradient(0), std::cos(0.5));
}

// Kinks: abs'(0) = 0, sign' = 0, min and max take the first operand on a tie, x^2 at 0.
TEST(Evaluation, DerivativesAtKinks) {
  const J zero = J::variable(0.0, 0, 1.5, 0.0);
  for (const char* row : {"abs(x)", "sign(x)", "x^2", "pow(x, 2)", "hypot(x, 0)"}) {
    SCOPED_TRACE(row);
    const J r = row_at(row, zero);
    EXPECT_EQ(r.c0, 0.0);
    EXPECT_EQ(r.c1, 0.0);
    EXPECT_EQ(r.gradient(0), 0.0);
  }
  EXPECT_EQ(row_at("x^2", zero).c2, 1.5 * 1.5);
  EXPECT_EQ(row_at("sign(x)", J::variable(-2.0, 0, 1.0, 0.0)).gradient(0), 0.0);
  EXPECT_EQ(row_at("abs(x)", J::variable(-2.0, 0, 1.0, 0.0)).gradient(0), -1.0);
  // Tie at x = 1: min(x, 2x - 1) picks x (gradient 1), min(2x - 1, x) picks 2x - 1 (gradient 2).
  const J one = J::variable(1.0, 0);
  EXPECT_EQ(row_at("min(x, 2 * x - 1)", one).gradient(0), 1.0);
  EXPECT_EQ(row_at("min(2 * x - 1, x)", one).gradient(0), 2.0);
  EXPECT_EQ(row_at("max(x, 2 * x - 1)", one).gradient(0), 1.0);
  EXPECT_EQ(row_at("max(2 * x - 1, x)", one).gradient(0), 2.0);
  // An exponent that moves takes the general power rule: d/ds 2^(t + s) = 2^t log 2.
  const J general = row_at("2 ^ t", J(0.0), J(0.0, 1.0, 0.0));
  EXPECT_EQ(general.c0, 1.0);
  EXPECT_DOUBLE_EQ(general.c1, std::log(2.0));
  EXPECT_DOUBLE_EQ(general.c2, 0.5 * std::log(2.0) * std::log(2.0));
}

// What a segment stores: every mass entry (both triangles, zeros included), each force entry.
TEST(Evaluation, SegmentsStoreEveryOutput) {
  nlohmann::json d = base_definition();
  d["mass"] = nlohmann::json::parse(R"({"upper": [["m", "0.5 * x"], ["m + y"]]})");
  const UserModelDefinition def = parse_user_model(d);
  const double q[] = {0.4, -0.2}, qd[] = {1.0, 2.0}, p[] = {2.0, 3.0};
  // Entry (i, j) is output i kMassStride + j.
  const auto entries = [&](const UserModelDefinition& model) {
    const auto M = run<double, double>(model, expr::Segment::kMass, {q, nullptr, 0.0, p, nullptr},
                                       2 * expr::kMassStride);
    return std::vector<double>{M[0], M[1], M[expr::kMassStride], M[expr::kMassStride + 1]};
  };
  EXPECT_EQ(entries(def), (std::vector<double>{2.0, 0.5 * 0.4, 0.5 * 0.4, 2.0 + -0.2}));
  nlohmann::json diagonal = base_definition();
  diagonal["mass"] = {{"diagonal", {"m", "2 * m"}}};
  EXPECT_EQ(entries(parse_user_model(diagonal)), (std::vector<double>{2.0, 0.0, 0.0, 4.0}));
  const auto Q = run<double, double>(def, expr::Segment::kForce, {q, qd, 0.0, p, nullptr}, 2);
  EXPECT_EQ(Q, (std::vector<double>{-3.0 * 0.4, -3.0 * -0.2}));
  const auto phi =
      run<double, double>(def, expr::Segment::kPositionRows, {q, nullptr, 0.0, p, nullptr}, 1);
  EXPECT_EQ(phi[0], 0.4 * 0.4 + -0.2 * -0.2 - 1);
  // A segment the definition does not have stores nothing.
  const auto none =
      run<double, double>(def, expr::Segment::kVelocityRows, {q, qd, 0.0, p, nullptr}, 1);
  EXPECT_EQ(none[0], -12345.0);
}

}  // namespace
}  // namespace ukes::testing
