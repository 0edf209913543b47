// What the compiler does to a definition: each subexpression computed once per segment, constant
// subtrees folded without losing a bit (-0, NaN), intermediates only where used, and definitions
// built to be costly (long chains of intermediates, many constants) compiled in bounded time and
// stack; values of parameters alone computed once per system, and squares of differences in one
// form, both without changing a bit. And the canonical form and content id of a definition.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "tests/expr/expr_support.hpp"

namespace ukes::testing {
namespace {

using json = nlohmann::json;

int count_op(const UserModelDefinition& d, expr::Segment segment, expr::Op op) {
  const int s = static_cast<int>(segment);
  int count = 0;
  for (int pc = d.program.begin[s]; pc < d.program.end[s]; ++pc)
    count += d.program.code[static_cast<std::size_t>(pc)].op == static_cast<std::uint16_t>(op);
  return count;
}

TEST(Compiler, SubexpressionsAreComputedOncePerSegment) {
  const UserModelDefinition d = force_model("sin(x) * sin(x) + sin(x) + cos(x_dot) / cos(x_dot)");
  EXPECT_EQ(count_op(d, expr::Segment::kForce, expr::Op::kSin), 1);
  EXPECT_EQ(count_op(d, expr::Segment::kForce, expr::Op::kCos), 1);
  EXPECT_EQ(count_op(d, expr::Segment::kForce, expr::Op::kLoadQ), 1);
  EXPECT_EQ(value_at<double>("sin(x) * sin(x) + sin(x)", 0.3),
            std::sin(0.3) * std::sin(0.3) + std::sin(0.3));
}

TEST(Compiler, IntermediatesAreEmittedWhereUsedOnly) {
  json d = base_definition();
  d["intermediates"].push_back({{"name", "heavy"}, {"expr", "exp(x) + exp(y)"}});
  d["force"][0] = "heavy * heavy - heavy";
  const UserModelDefinition def = parse_user_model(d);
  EXPECT_EQ(count_op(def, expr::Segment::kForce, expr::Op::kExp), 2);  // once, not three times
  EXPECT_EQ(count_op(def, expr::Segment::kMass, expr::Op::kExp), 0);
  EXPECT_EQ(count_op(def, expr::Segment::kPositionRows, expr::Op::kExp), 0);
  EXPECT_EQ(count_op(def, expr::Segment::kVelocityRows, expr::Op::kAdd), 0);
}

TEST(Compiler, ConstantSubtreesAreFolded) {
  const UserModelDefinition d = force_model("2 * 3 + x + sqrt(16) * pi");
  EXPECT_EQ(count_op(d, expr::Segment::kForce, expr::Op::kMul), 0);
  EXPECT_EQ(count_op(d, expr::Segment::kForce, expr::Op::kSqrt), 0);
  EXPECT_EQ(value_at<double>("2 * 3 + x + sqrt(16) * pi", 1.0),
            2.0 * 3.0 + 1.0 + 4.0 * 3.14159265358979323846);
  // Only constants an instruction loads reach the program.
  EXPECT_LE(d.program.constants.size(), 3u);  // with the mass matrix's 1
}

// Folded constants keep their bits: -0 is not 0, and NaN is a value like any other.
TEST(Compiler, FoldingKeepsSignedZerosAndNaN) {
  EXPECT_EQ(value_at<double>("0 * x + 1 / (-0)", 1.0), -INFINITY);
  EXPECT_EQ(value_at<double>("x * 0 + 1 / 0", 1.0), INFINITY);
  EXPECT_TRUE(
      std::isnan(value_at<double>("2 + x * 0 + if(x > 100, log(-1), 0) + 0 * log(-1)", 1.0)));
  EXPECT_EQ(value_at<double>("if(0 * log(-1) == 0, 1, 2) + x", 0.0), 2.0);  // NaN == 0 is false
}

TEST(Compiler, SegmentsAndRegistersAreInRange) {
  const UserModelDefinition d = parse_user_model(base_definition());
  const expr::ProgramView v = d.program.view();
  EXPECT_EQ(v.code, d.program.code.data());
  EXPECT_GT(v.registers, 0);
  EXPECT_LE(v.registers, expr::kMaxRegisters);
  for (int s = 0; s < expr::kSegmentCount; ++s) {
    EXPECT_LE(v.begin[s], v.end[s]);
    EXPECT_LE(v.end[s], static_cast<int>(d.program.code.size()));
    for (int pc = v.begin[s]; pc < v.end[s]; ++pc) {
      const expr::Instruction& in = v.code[pc];
      EXPECT_LT(in.op, static_cast<std::uint16_t>(expr::Op::kCount));
      EXPECT_LT(in.dst, v.registers);
    }
  }
}

// 500 intermediates, each using the one before: compiled (and checked for symmetry) in order,
// without recursing from one into the next.
TEST(Compiler, LongChainsOfIntermediates) {
  json d = base_definition();
  d["intermediates"].push_back({{"name", "a0"}, {"expr", "x"}});
  for (int k = 1; k < 500; ++k) {
    d["intermediates"].push_back(
        {{"name", numbered("a", k)}, {"expr", numbered("a", k - 1) + " + 1"}});
  }
  d["force"][0] = "a499";
  // Written differently: evaluated.
  d["mass"] = json::parse(R"([["m", "a499 - x"], ["a499 - 1 - x + 1", "m"]])");
  const UserModelDefinition def = parse_user_model(d);
  const double q[] = {0.25, 0.0}, qd[] = {0, 0}, p[] = {2, 3};
  const expr::Inputs<double, double> in{q, qd, 0.0, p, nullptr};
  EXPECT_EQ(run(def, expr::Segment::kForce, in, 2)[0], 0.25 + 499);
}

// Intermediates that double a NaN 60 times: the symmetry check evaluates each once.
TEST(Compiler, SymmetryCheckEvaluatesEachIntermediateOnce) {
  json d = base_definition();
  d["intermediates"].push_back({{"name", "b0"}, {"expr", "log(-1 - x * x)"}});
  for (int k = 1; k < 60; ++k) {
    const std::string prev = numbered("b", k - 1);
    d["intermediates"].push_back({{"name", numbered("b", k)}, {"expr", prev + " + " + prev}});
  }
  d["mass"] = json::parse(R"([[1, "b59"], ["b59 + 0", 1]])");
  const auto start = std::chrono::steady_clock::now();
  EXPECT_NO_THROW(parse_user_model(d));
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
}

// Folding many distinct sums leaves many constants behind; the program keeps those it loads.
TEST(Compiler, ManyFoldedConstants) {
  json d = base_definition();
  std::string total;
  for (int e = 0; e < 200; ++e) {
    std::string sum;
    for (int i = 0; i < 300; ++i) {
      const std::string c = std::to_string(1 + (e * 300 + i) * 1e-6);
      sum = sum.empty() ? c : sum + "+" + c;
    }
    const std::string name = numbered("c", e);
    d["intermediates"].push_back({{"name", name}, {"expr", sum}});
    total = total.empty() ? name : total + " + " + name;
  }
  d["force"][0] = total + " + x";
  const UserModelDefinition def = parse_user_model(d);
  EXPECT_LE(def.program.constants.size(), 4u);
}

// Parsing is linear in the length of a chain (operands are moved, not copied, into the tree).
TEST(Compiler, LongSumsParseQuickly) {
  json d = base_definition();
  std::string ones;
  for (int k = 0; k < 2000; ++k) ones += "+1";
  for (int k = 0; k < 200; ++k)
    d["intermediates"].push_back({{"name", numbered("s", k)}, {"expr", "x" + ones}});
  const auto start = std::chrono::steady_clock::now();
  EXPECT_NO_THROW(parse_user_model(d));
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
}

// -a * b: parameters only, so computed in the Derived segment into the slot after a and b, which
// the force loads; the numbers are those of the expression as written.
TEST(Compiler, ParameterOnlyValuesAreComputedOncePerSystem) {
  const UserModelDefinition d = force_model("-a * b * sin(x) + a * b");
  EXPECT_EQ(count_op(d, expr::Segment::kForce, expr::Op::kNeg), 0);
  EXPECT_EQ(count_op(d, expr::Segment::kForce, expr::Op::kMul), 1);  // (-a * b) * sin(x)
  EXPECT_EQ(count_op(d, expr::Segment::kDerived, expr::Op::kNeg), 1);
  EXPECT_EQ(count_op(d, expr::Segment::kDerived, expr::Op::kMul), 2);  // -a * b and a * b
  const int s = static_cast<int>(expr::Segment::kDerived);
  std::vector<int> slots;
  for (int pc = d.program.begin[s]; pc < d.program.end[s]; ++pc)
    if (d.program.code[static_cast<std::size_t>(pc)].op == static_cast<int>(expr::Op::kStore))
      slots.push_back(d.program.code[static_cast<std::size_t>(pc)].a);
  EXPECT_EQ(slots, (std::vector<int>{2, 3}));
  const double x = unfolded(0.7), a = unfolded(1.5), b = unfolded(-0.5);
  EXPECT_EQ(value_at<double>("-a * b * sin(x) + a * b", x), -a * b * std::sin(x) + a * b);
  EXPECT_EQ(value_at<float>("-a * b * sin(x) + a * b", float(x)),
            -float(a) * float(b) * std::sin(float(x)) + float(a) * float(b));
}

// In constraint rows (evaluated in Jets, whose division multiplies by the reciprocal) a division
// of parameters stays in the row: hoisted, it would be correctly rounded, other bits.
TEST(Compiler, RowsKeepTheirDivisionsOfParameters) {
  json doc = base_definition();
  doc["position_constraints"][0] = "x * (m / k) + y * (m * k) - 1";
  const UserModelDefinition d = parse_user_model(doc);
  EXPECT_EQ(count_op(d, expr::Segment::kPositionRows, expr::Op::kDiv), 1);
  EXPECT_EQ(count_op(d, expr::Segment::kDerived, expr::Op::kMul), 1);  // m * k
  using J = Jet<double, 2>;
  const J x = J::variable(unfolded(0.3), 0, 0.2), y = J::variable(unfolded(-0.4), 1, 0.1);
  const double p[] = {2.0, 3.0};
  const J q[] = {x, y};
  const J row =
      run<J, double>(d, expr::Segment::kPositionRows, {q, nullptr, J(0.0), p, nullptr}, 1)[0];
  const J want = x * (J(p[0]) / J(p[1])) + y * J(p[0] * p[1]) - J(1.0);
  EXPECT_EQ(row.c0, want.c0);
  EXPECT_EQ(row.c1, want.c1);
  EXPECT_EQ(row.c2, want.c2);
  EXPECT_EQ(row.gradient(0), want.gradient(0));
  EXPECT_EQ(row.gradient(1), want.gradient(1));
}

// Past the parameter slots, parameter-only values stay where they are, and still give the
// expression's numbers.
TEST(Compiler, ParameterOnlyValuesBeyondTheSlotsStayInPlace) {
  std::string force = "x";
  double want = unfolded(0.5);
  for (int k = 1; k <= 200; ++k) {
    force += " + a * " + std::to_string(k);
    want += unfolded(1.5) * k;
  }
  const UserModelDefinition d = force_model(force);
  EXPECT_EQ(count_op(d, expr::Segment::kDerived, expr::Op::kStore), expr::kParameterSlots - 2);
  EXPECT_EQ(count_op(d, expr::Segment::kForce, expr::Op::kMul), 200 - (expr::kParameterSlots - 2));
  EXPECT_EQ(value_at<double>(force, 0.5), want);
}

// (x - y)^2 and (y - x)^2 are one value: the distance of a pair written both ways is computed
// once, with the bits of either form.
TEST(Compiler, SquaresOfDifferencesHaveOneForm) {
  json doc = base_definition();
  doc["force"][0] = "sqrt((x - y)^2 + k) + sqrt((y - x) * (y - x) + k) + (y - x)";
  const UserModelDefinition d = parse_user_model(doc);
  EXPECT_EQ(count_op(d, expr::Segment::kForce, expr::Op::kSqrt), 1);
  EXPECT_EQ(count_op(d, expr::Segment::kForce, expr::Op::kSub), 2);  // x - y; y - x as written
  const double x = unfolded(0.3), y = unfolded(0.7), k = 3.0;
  const double q[] = {x, y}, p[] = {2.0, k};
  const double got = run<double, double>(d, expr::Segment::kForce, {q, q, 0.0, p, nullptr}, 2)[0];
  EXPECT_EQ(got, std::sqrt((x - y) * (x - y) + k) + std::sqrt((y - x) * (y - x) + k) + (y - x));
}

TEST(Canonical, TheSameDefinitionHasTheSameId) {
  const UserModelDefinition a = parse_user_model(base_definition());
  EXPECT_EQ(a.content_id.rfind("sha256:", 0), 0u);
  EXPECT_EQ(a.content_id.size(), 7u + 64u);
  // Mass forms are normalized to the upper triangle, and key order does not matter.
  json diagonal = base_definition();
  diagonal["mass"] = {{"diagonal", {"m", "m"}}};
  EXPECT_EQ(parse_user_model(diagonal).content_id, a.content_id);
  json upper = base_definition();
  upper["mass"] = json::parse(R"({"upper": [["m", 0], ["m"]]})");
  EXPECT_EQ(parse_user_model(upper).content_id, a.content_id);
  const std::string reordered = R"({"force": ["-k * x", "-k * y"], "name": "base",
    "initial_state": {"qd": [0, "k"], "q": [1, 0]}, "coordinates": ["x", "y"],
    "mass": [["m", 0], [0, "m"]], "position_constraints": ["r2 - 1"],
    "intermediates": [{"expr": "x * x + y * y", "name": "r2"},
                      {"name": "v2", "expr": "x_dot * x_dot + y_dot * y_dot"}],
    "parameters": [{"value": 2.0, "name": "m"}, {"name": "k", "value": 3.0}]})";
  EXPECT_EQ(parse_user_model_text(reordered).canonical_json, a.canonical_json);
  // A different expression is a different model.
  json other = base_definition();
  other["force"][0] = "-k * x + 0";
  EXPECT_NE(parse_user_model(other).content_id, a.content_id);
  // The canonical form is itself a definition, of the same model.
  EXPECT_EQ(parse_user_model_text(a.canonical_json).canonical_json, a.canonical_json);
  EXPECT_EQ(json::parse(a.canonical_json)["mass"], json::parse(R"({"upper": [["m", 0], ["m"]]})"));
}

}  // namespace
}  // namespace ukes::testing
