// What the compiler does to a definition: each subexpression computed once per segment, constant
// subtrees folded without losing a bit (-0, NaN), intermediates only where used, and definitions
// built to be costly (long chains of intermediates, many constants) compiled in bounded time and
// stack. And the canonical form and content id of a definition.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>

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
