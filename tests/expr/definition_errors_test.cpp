// Every class of mistake in a definition (docs/MODEL_FORMAT.md, "Errors") is refused before any
// work, with the JSON path of the field, the column in its expression and a reason; limits are
// marked as such.
#include <gtest/gtest.h>

#include <cctype>
#include <limits>
#include <string>
#include <vector>

#include "tests/expr/expr_support.hpp"

namespace ukes::testing {
namespace {

using json = nlohmann::json;

struct Refusal {
  std::string path;
  int column = 0;
  std::string reason;  // a part of it
  bool limit = false;
};

Refusal refusal_of(const json& definition) {
  try {
    parse_user_model(definition);
  } catch (const DefinitionError& e) {
    return {e.path, e.column, e.reason, e.limit};
  }
  ADD_FAILURE() << "accepted: " << definition.dump();
  return {};
}

// `edit` applied to the base definition is refused at `path`, `column`, with `reason` in it.
template <class Edit>
void expect_refused(const char* what, Edit edit, const std::string& path, int column,
                    const std::string& reason, bool limit = false) {
  SCOPED_TRACE(what);
  json d = base_definition();
  edit(d);
  const Refusal r = refusal_of(d);
  EXPECT_EQ(r.path, path);
  EXPECT_EQ(r.column, column);
  EXPECT_NE(r.reason.find(reason), std::string::npos) << r.reason;
  EXPECT_EQ(r.limit, limit);
}

TEST(DefinitionErrors, TheBaseDefinitionIsValid) {
  const UserModelDefinition d = parse_user_model(base_definition());
  EXPECT_EQ(d.n(), 2);
  EXPECT_EQ(d.position_rows, 1);
  EXPECT_EQ(d.velocity_rows, 0);
  EXPECT_FALSE(d.nonideal);
  EXPECT_EQ(d.q0, (std::vector<double>{1, 0}));
  EXPECT_EQ(d.qd0, (std::vector<double>{0, 3}));
}

TEST(DefinitionErrors, NamesInExpressions) {
  expect_refused(
      "unknown identifier", [](json& d) { d["force"][1] = "-k * z"; }, "$.force[1]", 6,
      "unknown identifier 'z'");
  expect_refused(
      "rate of an unknown coordinate", [](json& d) { d["force"][0] = "x + z_dot"; }, "$.force[0]",
      5, "unknown identifier 'z_dot'");
  expect_refused(
      "unknown function", [](json& d) { d["force"][0] = "2 * foo(x)"; }, "$.force[0]", 5,
      "unknown function 'foo'");
  expect_refused(
      "a name called", [](json& d) { d["force"][0] = "m(x)"; }, "$.force[0]", 1,
      "unknown function 'm'");
  expect_refused(
      "too few arguments", [](json& d) { d["force"][0] = "x + atan2(x)"; }, "$.force[0]", 5,
      "takes 2 arguments");
  expect_refused(
      "too many arguments", [](json& d) { d["force"][0] = "sin(x, y)"; }, "$.force[0]", 1,
      "takes 1 argument");
  expect_refused(
      "if with two", [](json& d) { d["force"][0] = "if(x > 0, 1)"; }, "$.force[0]", 1,
      "takes 3 arguments");
  expect_refused(
      "a later intermediate", [](json& d) { d["intermediates"][0]["expr"] = "v2 + x"; },
      "$.intermediates[0].expr", 1, "unknown identifier 'v2'");
  expect_refused(
      "an intermediate using itself", [](json& d) { d["intermediates"][0]["expr"] = "r2 + x"; },
      "$.intermediates[0].expr", 1, "unknown identifier 'r2'");
}

TEST(DefinitionErrors, Levels) {
  const std::string rate = "a position-level expression may not depend on velocities";
  expect_refused(
      "rate in a position row", [](json& d) { d["position_constraints"][0] = "x * x_dot"; },
      "$.position_constraints[0]", 5, "uses the rate x_dot");
  expect_refused(
      "rate in a position row through an intermediate",
      [](json& d) { d["position_constraints"][0] = "1 + v2"; }, "$.position_constraints[0]", 5,
      rate);
  expect_refused(
      "rate in the mass matrix", [](json& d) { d["mass"][1][1] = "m + y_dot"; }, "$.mass[1][1]", 5,
      "uses the rate y_dot");
  expect_refused(
      "rate in the mass matrix through an intermediate",
      [](json& d) { d["mass"][0][0] = "m * v2"; }, "$.mass[0][0]", 5, rate);
  expect_refused(
      "rate in the initial state", [](json& d) { d["initial_state"]["qd"][0] = "2 * x_dot"; },
      "$.initial_state.qd[0]", 5, "rate x_dot");
  expect_refused(
      "coordinate in the initial state", [](json& d) { d["initial_state"]["q"][1] = "k + x"; },
      "$.initial_state.q[1]", 5, "'x'");
  expect_refused(
      "time in the initial state", [](json& d) { d["initial_state"]["q"][0] = "t"; },
      "$.initial_state.q[0]", 1, "'t'");
  expect_refused(
      "coordinate in the initial state through an intermediate",
      [](json& d) { d["initial_state"]["q"][0] = "r2"; }, "$.initial_state.q[0]", 1, "'x'");
  expect_refused(
      "Qc in the force", [](json& d) { d["force"][0] = "x + Qc(x)"; }, "$.force[0]", 5, "Qc");
  expect_refused(
      "Qc in an intermediate", [](json& d) { d["intermediates"][1]["expr"] = "Qc(y)"; },
      "$.intermediates[1].expr", 1, "Qc");
  expect_refused(
      "Qc of a parameter",
      [](json& d) {
        d["nonideal_force"] = {"Qc(m)", 0};
      },
      "$.nonideal_force[0]", 1, "'m'");
  // Accepted: rates in the force and in velocity rows, Qc in the non-ideal force, parameters in
  // the initial state.
  json d = base_definition();
  d["force"][0] = "v2 * x_dot";
  d["velocity_constraints"] = {"x * x_dot + y * y_dot"};
  d["nonideal_force"] = {"-0.1 * Qc(x) * v2", "t * Qc(y)"};
  d["initial_state"]["q"][0] = "sqrt(k) * pi";
  const UserModelDefinition ok = parse_user_model(d);
  EXPECT_TRUE(ok.nonideal);
  EXPECT_EQ(ok.velocity_rows, 1);
  EXPECT_EQ(ok.q0[0], std::sqrt(3.0) * 3.14159265358979323846);
}

TEST(DefinitionErrors, Shapes) {
  expect_refused(
      "mass with too few rows", [](json& d) { d["mass"] = json::parse(R"([["m", 0]])"); }, "$.mass",
      0, "rows");
  expect_refused(
      "mass row too short", [](json& d) { d["mass"][1] = {0}; }, "$.mass[1]", 0, "entries");
  expect_refused(
      "upper triangle with wrong rows",
      [](json& d) { d["mass"] = json::parse(R"({"upper": [["m"], [0, "m"]]})"); },
      "$.mass.upper[0]", 0, "upper triangle");
  expect_refused(
      "diagonal too long",
      [](json& d) {
        d["mass"] = {{"diagonal", {"m", "m", 1}}};
      },
      "$.mass.diagonal", 0, "2 entries");
  expect_refused(
      "mass in two forms",
      [](json& d) {
        d["mass"] = json::parse(R"({"diagonal": ["m", "m"], "upper": [["m", 0], ["m"]]})");
      },
      "$.mass", 0, "one of");
  expect_refused(
      "force too short", [](json& d) { d["force"] = {"x"}; }, "$.force", 0, "2 entries");
  expect_refused(
      "non-ideal force too long",
      [](json& d) {
        d["nonideal_force"] = {0, 0, 0};
      },
      "$.nonideal_force", 0, "2 entries");
  expect_refused(
      "initial q too short", [](json& d) { d["initial_state"]["q"] = {1}; }, "$.initial_state.q", 0,
      "2 entries");
  expect_refused(
      "empty row",
      [](json& d) {
        d["mass"] = {json::array(), json::array()};
      },
      "$.mass[0]", 0, "entries");
  expect_refused(
      "not symmetric", [](json& d) { d["mass"] = json::parse(R"([["m", "x"], ["y", "m"]])"); },
      "$.mass[1][0]", 0, "mass matrix is not symmetric: (0,1) and (1,0) differ");
  // Entries written differently but equal are symmetric.
  json d = base_definition();
  d["mass"] = json::parse(R"([["m", "x * y"], ["y * x", "m"]])");
  EXPECT_NO_THROW(parse_user_model(d));
}

TEST(DefinitionErrors, JsonShapesAndTypes) {
  expect_refused(
      "missing force", [](json& d) { d.erase("force"); }, "$.force", 0, "required");
  expect_refused(
      "coordinates not an array", [](json& d) { d["coordinates"] = "x"; }, "$.coordinates", 0,
      "array");
  expect_refused(
      "no coordinates", [](json& d) { d["coordinates"] = json::array(); }, "$.coordinates", 0,
      "at least one");
  expect_refused(
      "parameter value a string", [](json& d) { d["parameters"][1]["value"] = "3"; },
      "$.parameters[1].value", 0, "number");
  expect_refused(
      "expression a boolean", [](json& d) { d["force"][0] = true; }, "$.force[0]", 0, "expression");
  expect_refused(
      "unknown field", [](json& d) { d["positon_constraints"] = json::array(); }, "$", 0,
      "unknown field 'positon_constraints'");
  expect_refused(
      "other format", [](json& d) { d["format"] = "ukes-model/2"; }, "$.format", 0, "ukes-model/1");
  expect_refused(
      "t_end zero", [](json& d) { d["t_end"] = 0; }, "$.t_end", 0, "> 0");
  expect_refused(
      "negative gain",
      [](json& d) {
        d["baumgarte"] = {{"alpha", -1}};
      },
      "$.baumgarte.alpha", 0, ">= 0");
  expect_refused(
      "model name", [](json& d) { d["name"] = "two words"; }, "$.name", 0, "not a name");
}

TEST(DefinitionErrors, NamesOfTheDefinition) {
  expect_refused(
      "parameter named like a coordinate", [](json& d) { d["parameters"][0]["name"] = "x"; },
      "$.parameters[0].name", 0, "duplicate name 'x'");
  expect_refused(
      "intermediate named like a parameter", [](json& d) { d["intermediates"][1]["name"] = "k"; },
      "$.intermediates[1].name", 0, "duplicate name 'k'");
  expect_refused(
      "two coordinates alike",
      [](json& d) {
        d["coordinates"] = {"x", "x"};
      },
      "$.coordinates[1]", 0, "duplicate name 'x'");
  expect_refused(
      "parameter named like a rate", [](json& d) { d["parameters"][0]["name"] = "y_dot"; },
      "$.parameters[0].name", 0, "'y_dot'");
  expect_refused(
      "coordinate named like a rate",
      [](json& d) {
        d["coordinates"] = {"x", "x_dot"};
      },
      "$.coordinates[0]", 0, "duplicate name 'x_dot'");
  for (const char* reserved : {"sin", "atan2", "if", "pi", "e", "t", "Qc"}) {
    expect_refused(
        reserved, [&](json& d) { d["parameters"][1]["name"] = reserved; }, "$.parameters[1].name",
        0, std::string("'") + reserved + "'");
  }
  expect_refused(
      "coordinate named e",
      [](json& d) {
        d["coordinates"] = {"e", "y"};
      },
      "$.coordinates[0]", 0, "'e'");
  expect_refused(
      "not an identifier", [](json& d) { d["parameters"][0]["name"] = "2m"; },
      "$.parameters[0].name", 0, "not a name");
}

TEST(DefinitionErrors, Syntax) {
  expect_refused(
      "empty string", [](json& d) { d["force"][0] = ""; }, "$.force[0]", 0, "empty");
  expect_refused(
      "blank string", [](json& d) { d["force"][0] = "   "; }, "$.force[0]", 0, "empty");
  expect_refused(
      "unclosed parenthesis", [](json& d) { d["force"][0] = "x * (y + 1"; }, "$.force[0]", 11,
      "')'");
  expect_refused(
      "two operators", [](json& d) { d["force"][0] = "x + * y"; }, "$.force[0]", 5, "'*'");
  expect_refused(
      "chained comparison", [](json& d) { d["force"][0] = "if(x < y < 1, 1, 0)"; }, "$.force[0]",
      10, "chain");
  expect_refused(
      "negative exponent without parentheses", [](json& d) { d["force"][0] = "x^-1"; },
      "$.force[0]", 3, "'-'");
  expect_refused(
      "stray character", [](json& d) { d["force"][0] = "x # y"; }, "$.force[0]", 3,
      "unexpected character");
  expect_refused(
      "dot without digits", [](json& d) { d["force"][0] = "1. + x"; }, "$.force[0]", 1, "digits");
  expect_refused(
      "number out of range", [](json& d) { d["force"][0] = "x * 1e999"; }, "$.force[0]", 5,
      "out of range");
  expect_refused(
      "Qc without a name",
      [](json& d) {
        d["nonideal_force"] = {"Qc(1)", 0};
      },
      "$.nonideal_force[0]", 4, "coordinate");
}

TEST(DefinitionErrors, Limits) {
  expect_refused(
      "nesting depth",
      [](json& d) { d["force"][0] = std::string(70, '(') + "x" + std::string(70, ')'); },
      "$.force[0]", 66, "nested deeper than 64", true);
  std::string long_text = "x";
  while (long_text.size() <= 4096) long_text += " + x";
  expect_refused(
      "expression length", [&](json& d) { d["force"][0] = long_text; }, "$.force[0]", 0, "4096",
      true);
  // 70 values alive at once: force[1] uses every term of force[0] again, in reverse.
  std::string forward, backward;
  for (int k = 0; k < 70; ++k) {
    const std::string term = numbered("sin(x + ", k) + ")";
    forward = forward.empty() ? term : forward + " + " + term;
    backward = backward.empty() ? term : term + " * " + backward;
  }
  expect_refused(
      "registers",
      [&](json& d) {
        d["force"] = {forward, backward};
      },
      "$.force", 0, "values alive at once", true);
  // Intermediates chained 80 deep, each a long sum: more instructions than a program may have
  // (and, lowered one after the other, no deep recursion on the way).
  const auto chain = [](json& d) {
    std::string ones;
    for (int k = 0; k < 2000; ++k) ones += "+1";
    d["intermediates"].push_back({{"name", "a0"}, {"expr", "x" + ones}});
    for (int k = 1; k < 80; ++k) {
      d["intermediates"].push_back(
          {{"name", numbered("a", k)}, {"expr", numbered("a", k - 1) + ones}});
    }
    d["force"][0] = "a79";
  };
  expect_refused("instructions", chain, "$.force", 0, "65536 instructions", true);
}

TEST(DefinitionErrors, DefinitionText) {
  auto refused_text = [](const std::string& text) {
    try {
      parse_user_model_text(text);
    } catch (const DefinitionError& e) {
      return Refusal{e.path, e.column, e.reason, e.limit};
    }
    ADD_FAILURE() << "accepted";
    return Refusal{};
  };
  const Refusal syntax = refused_text(R"({"name": "a", )");
  EXPECT_EQ(syntax.path, "$");
  EXPECT_FALSE(syntax.limit);
  json big = base_definition();
  big["description"] = std::string(std::size_t{1} << 20, 'x');
  const Refusal large = refused_text(big.dump());
  EXPECT_EQ(large.path, "$");
  EXPECT_TRUE(large.limit);
  const Refusal not_object = refused_text("[1, 2]");
  EXPECT_EQ(not_object.path, "$");
  // A document built in code may hold bytes that are not UTF-8: refused like any mistake.
  json bytes = base_definition();
  bytes["description"] = "caf\xe9";
  EXPECT_EQ(refusal_of(bytes).reason, "text must be valid UTF-8");
}

// Errors name fields under the caller's path, and quote user text bounded and printable.
TEST(DefinitionErrors, MessagesArePathedBoundedAndPrintable) {
  json d = base_definition();
  d["force"][1] = "-k * z";
  try {
    parse_user_model(d, "model");
    FAIL() << "accepted";
  } catch (const DefinitionError& e) {
    EXPECT_EQ(e.path, "model.force[1]");
    EXPECT_STREQ(e.what(), "model.force[1], column 6: unknown identifier 'z'");
  }
  d["force"][1] = "x + " + std::string(3000, 'w') + "\x01";
  try {
    parse_user_model(d);
    FAIL() << "accepted";
  } catch (const DefinitionError& e) {
    const std::string what = e.what();
    EXPECT_LT(what.size(), 200u) << what;
    for (char c : what) EXPECT_TRUE(c >= 0x20 && c <= 0x7e) << what;
  }
}

// ---------------------------------------------------------------- every class again, each field
// it can occur in, with its exact path and column; the limits at and just past their bounds; and
// the content id.

template <class Edit>
Refusal refusal_after(Edit edit) {
  json d = base_definition();
  edit(d);
  return refusal_of(d);
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A definition of n coordinates q0 ... q{n-1}: unit masses, no force.
json coordinates_definition(int n) {
  json d = {{"name", "wide"}};
  d["coordinates"] = json::array();
  d["mass"] = {{"diagonal", json::array()}};
  d["force"] = json::array();
  for (int k = 0; k < n; ++k) {
    d["coordinates"].push_back(numbered("q", k));
    d["mass"]["diagonal"].push_back(1);
    d["force"].push_back(0);
  }
  return d;
}

TEST(DefinitionErrorsByField, RatesDirectlyAndThroughIntermediates) {
  // Directly: the rate's own column, no intermediate named.
  const Refusal direct =
      refusal_after([](json& d) { d["position_constraints"][0] = "x * x_dot - 1"; });
  EXPECT_EQ(direct.path, "$.position_constraints[0]");
  EXPECT_EQ(direct.column, 5);
  EXPECT_TRUE(contains(direct.reason, "x_dot")) << direct.reason;
  EXPECT_FALSE(contains(direct.reason, "intermediate")) << direct.reason;
  // Through v2 = x_dot^2 + y_dot^2: the column of v2, and v2 named.
  const Refusal row = refusal_after([](json& d) { d["position_constraints"][0] = "y + v2"; });
  EXPECT_EQ(row.path, "$.position_constraints[0]");
  EXPECT_EQ(row.column, 5);
  EXPECT_TRUE(contains(row.reason, "x_dot")) << row.reason;
  EXPECT_TRUE(contains(row.reason, "intermediate 'v2'")) << row.reason;
  // Through w = 2 * v2: w is what the row names.
  const Refusal nested = refusal_after([](json& d) {
    d["intermediates"].push_back({{"name", "w"}, {"expr", "2 * v2"}});
    d["position_constraints"][0] = "sin(w)";
  });
  EXPECT_EQ(nested.path, "$.position_constraints[0]");
  EXPECT_EQ(nested.column, 5);
  EXPECT_TRUE(contains(nested.reason, "intermediate 'w'")) << nested.reason;
  // The mass matrix, in each of its forms.
  const Refusal full = refusal_after([](json& d) { d["mass"][0][0] = "m * v2"; });
  EXPECT_EQ(full.path, "$.mass[0][0]");
  EXPECT_EQ(full.column, 5);
  EXPECT_TRUE(contains(full.reason, "intermediate 'v2'")) << full.reason;
  const Refusal diagonal = refusal_after(
      [](json& d) { d["mass"] = json::parse(R"({"diagonal": ["m", "m + y_dot"]})"); });
  EXPECT_EQ(diagonal.path, "$.mass.diagonal[1]");
  EXPECT_EQ(diagonal.column, 5);
  EXPECT_TRUE(contains(diagonal.reason, "y_dot")) << diagonal.reason;
  const Refusal upper =
      refusal_after([](json& d) { d["mass"] = json::parse(R"({"upper": [["m", "v2"], ["m"]]})"); });
  EXPECT_EQ(upper.path, "$.mass.upper[0][1]");
  EXPECT_EQ(upper.column, 1);
  EXPECT_TRUE(contains(upper.reason, "'v2'")) << upper.reason;
  // The initial state, directly and through an intermediate.
  const Refusal q0 = refusal_after([](json& d) { d["initial_state"]["q"][1] = "k - y_dot"; });
  EXPECT_EQ(q0.path, "$.initial_state.q[1]");
  EXPECT_EQ(q0.column, 5);
  EXPECT_TRUE(contains(q0.reason, "y_dot")) << q0.reason;
  const Refusal qd0 = refusal_after([](json& d) { d["initial_state"]["qd"][1] = "k * v2"; });
  EXPECT_EQ(qd0.path, "$.initial_state.qd[1]");
  EXPECT_EQ(qd0.column, 5);
  EXPECT_TRUE(contains(qd0.reason, "'v2'")) << qd0.reason;
  // Rates through intermediates are fine where rates are.
  json ok = base_definition();
  ok["intermediates"].push_back({{"name", "w"}, {"expr", "2 * v2"}});
  ok["force"][1] = "-k * y - w * y_dot";
  ok["velocity_constraints"] = json::array({"x * x_dot + w - v2 * 2"});
  EXPECT_NO_THROW(parse_user_model(ok));
}

TEST(DefinitionErrorsByField, ConstraintForceOnlyInTheNonIdealForceOfACoordinate) {
  const struct {
    const char* field;
    void (*edit)(json&);
    const char* path;
    int column;
  } outside[] = {
      {"position row", [](json& d) { d["position_constraints"][0] = "r2 - Qc(x)"; },
       "$.position_constraints[0]", 6},
      {"velocity row", [](json& d) { d["velocity_constraints"] = json::array({"x_dot + Qc(y)"}); },
       "$.velocity_constraints[0]", 9},
      {"mass", [](json& d) { d["mass"][1][1] = "Qc(y)"; }, "$.mass[1][1]", 1},
      {"force", [](json& d) { d["force"][1] = "-k * y + 0 * Qc(y)"; }, "$.force[1]", 14},
      {"initial state", [](json& d) { d["initial_state"]["q"][0] = "Qc(x)"; },
       "$.initial_state.q[0]", 1},
  };
  for (const auto& c : outside) {
    SCOPED_TRACE(c.field);
    const Refusal r = refusal_after(c.edit);
    EXPECT_EQ(r.path, c.path);
    EXPECT_EQ(r.column, c.column);
    EXPECT_TRUE(contains(r.reason, "nonideal_force")) << r.reason;
  }
  for (const char* name : {"x_dot", "m", "r2", "t", "pi", "z"}) {
    SCOPED_TRACE(name);
    const Refusal r = refusal_after([&](json& d) {
      d["nonideal_force"] = json::array({0, std::string("1 + Qc(") + name + ")"});
    });
    EXPECT_EQ(r.path, "$.nonideal_force[1]");
    EXPECT_EQ(r.column, 5);
    EXPECT_TRUE(contains(r.reason, std::string("'") + name + "'")) << r.reason;
  }
}

TEST(DefinitionErrorsByField, UnknownNamesAndFunctionsAndArity) {
  const Refusal name = refusal_after([](json& d) { d["force"][1] = "-k * y - c * y_dot"; });
  EXPECT_EQ(name.path, "$.force[1]");
  EXPECT_EQ(name.column, 10);
  EXPECT_TRUE(contains(name.reason, "unknown identifier 'c'")) << name.reason;
  const Refusal in_mass = refusal_after([](json& d) { d["mass"][0][1] = "0 * theta"; });
  EXPECT_EQ(in_mass.path, "$.mass[0][1]");
  EXPECT_EQ(in_mass.column, 5);
  const Refusal function =
      refusal_after([](json& d) { d["position_constraints"][0] = "sq(x) - 1"; });
  EXPECT_EQ(function.path, "$.position_constraints[0]");
  EXPECT_EQ(function.column, 1);
  EXPECT_TRUE(contains(function.reason, "unknown function 'sq'")) << function.reason;
  const Refusal arity =
      refusal_after([](json& d) { d["intermediates"][0]["expr"] = "x * x + hypot(y)"; });
  EXPECT_EQ(arity.path, "$.intermediates[0].expr");
  EXPECT_EQ(arity.column, 9);
  EXPECT_TRUE(contains(arity.reason, "2 arguments")) << arity.reason;
  const Refusal too_many = refusal_after([](json& d) { d["force"][0] = "exp(x, 1)"; });
  EXPECT_EQ(too_many.column, 1);
  EXPECT_TRUE(contains(too_many.reason, "1 argument")) << too_many.reason;
}

TEST(DefinitionErrorsByField, Shapes) {
  const struct {
    const char* what;
    const char* mass;  // JSON
    const char* path;
    const char* reason;
  } masses[] = {
      {"three rows", R"([["m", 0], [0, "m"], [0, 0]])", "$.mass", "rows"},
      {"a long row", R"([["m", 0, 0], [0, "m"]])", "$.mass[0]", "2 entries"},
      {"a short second row", R"([["m", 0], ["m"]])", "$.mass[1]", "2 entries"},
      {"not a matrix", R"("m")", "$.mass", "array"},
      {"a row not an array", R"([["m", 0], "m"])", "$.mass[1]", "array"},
      {"upper, second row too long", R"({"upper": [["m", 0], ["m", 0]]})", "$.mass.upper[1]",
       "upper triangle"},
      {"upper, one row", R"({"upper": [["m", 0]]})", "$.mass.upper", "rows"},
      {"upper, three rows", R"({"upper": [["m", 0], ["m"], []]})", "$.mass.upper", "rows"},
      {"diagonal too short", R"({"diagonal": ["m"]})", "$.mass.diagonal", "2 entries"},
      {"diagonal not an array", R"({"diagonal": "m"})", "$.mass.diagonal", "array"},
      {"another form", R"({"lower": [["m"], [0, "m"]]})", "$.mass", "unknown field 'lower'"},
      {"no form", R"({})", "$.mass", "one of"},
  };
  for (const auto& c : masses) {
    SCOPED_TRACE(c.what);
    const Refusal r = refusal_after([&](json& d) { d["mass"] = json::parse(c.mass); });
    EXPECT_EQ(r.path, c.path);
    EXPECT_EQ(r.column, 0);
    EXPECT_TRUE(contains(r.reason, c.reason)) << r.reason;
    EXPECT_FALSE(r.limit);
  }
  const Refusal force_long = refusal_after([](json& d) {
    d["force"] = json::array({"x", "y", 0});
  });
  EXPECT_EQ(force_long.path, "$.force");
  EXPECT_TRUE(contains(force_long.reason, "2 entries")) << force_long.reason;
  const Refusal force_empty = refusal_after([](json& d) { d["force"] = json::array(); });
  EXPECT_EQ(force_empty.path, "$.force");
  const Refusal nonideal_short =
      refusal_after([](json& d) { d["nonideal_force"] = json::array({"Qc(x)"}); });
  EXPECT_EQ(nonideal_short.path, "$.nonideal_force");
  const Refusal qd_long = refusal_after([](json& d) {
    d["initial_state"]["qd"] = json::array({0, 0, 0});
  });
  EXPECT_EQ(qd_long.path, "$.initial_state.qd");
  const Refusal rows_not_array =
      refusal_after([](json& d) { d["position_constraints"] = "r2 - 1"; });
  EXPECT_EQ(rows_not_array.path, "$.position_constraints");
  const Refusal row_an_array = refusal_after(
      [](json& d) { d["velocity_constraints"] = json::array({json::array({"x_dot"})}); });
  EXPECT_EQ(row_an_array.path, "$.velocity_constraints[0]");
  EXPECT_TRUE(contains(row_an_array.reason, "expression")) << row_an_array.reason;
}

TEST(DefinitionErrorsByField, Symmetry) {
  const auto mass = [](const char* m) {
    return refusal_after([&](json& d) { d["mass"] = json::parse(m); });
  };
  // Equal at q = 0, t = 0 only: the check tries other states too.
  const Refusal sign = mass(R"([["m", "x"], ["-x", "m"]])");
  EXPECT_EQ(sign.path, "$.mass[1][0]");
  EXPECT_TRUE(contains(sign.reason, "(0,1) and (1,0) differ")) << sign.reason;
  const Refusal time = mass(R"([["m", "t"], ["0 * t", "m"]])");
  EXPECT_EQ(time.path, "$.mass[1][0]");
  // Relative 1e-12 (docs): 1e-10 apart is refused, 1e-14 apart accepted.
  EXPECT_EQ(mass(R"j([["m", "m * (1 + 1e-10)"], ["m", "m"]])j").path, "$.mass[1][0]");
  json close = base_definition();
  close["mass"] = json::parse(R"j([["m", "m * (1 + 1e-14)"], ["m", "m"]])j");
  EXPECT_NO_THROW(parse_user_model(close));
  // Written differently, equal up to rounding.
  json rounding = base_definition();
  rounding["mass"] = json::parse(R"j([["m", "exp(x) * exp(y)"], ["exp(x + y)", "m"]])j");
  EXPECT_NO_THROW(parse_user_model(rounding));
  json commuted = base_definition();
  commuted["mass"] = json::parse(R"j([["m", "k * x * y"], ["k * (y * x)", "m"]])j");
  EXPECT_NO_THROW(parse_user_model(commuted));
  // 3 x 3: the pair that differs is named, by the entry below the diagonal.
  json three = json::parse(R"({"name": "three", "coordinates": ["x", "y", "z"],
    "mass": [[1, "x", "y"], ["x", 1, "z"], ["y", "2 * z", 1]], "force": [0, 0, 0]})");
  const Refusal r = refusal_of(three);
  EXPECT_EQ(r.path, "$.mass[2][1]");
  EXPECT_TRUE(contains(r.reason, "(1,2) and (2,1) differ")) << r.reason;
}

TEST(DefinitionErrorsByField, NamesTakenOrReserved) {
  const struct {
    const char* what;
    void (*edit)(json&);
    const char* path;
    const char* name;
  } cases[] = {
      {"intermediate named like a coordinate", [](json& d) { d["intermediates"][0]["name"] = "y"; },
       "$.intermediates[0].name", "'y'"},
      {"two parameters alike", [](json& d) { d["parameters"][1]["name"] = "m"; },
       "$.parameters[1].name", "'m'"},
      {"two intermediates alike", [](json& d) { d["intermediates"][1]["name"] = "r2"; },
       "$.intermediates[1].name", "'r2'"},
      {"intermediate named like a rate", [](json& d) { d["intermediates"][1]["name"] = "x_dot"; },
       "$.intermediates[1].name", "'x_dot'"},
      {"coordinate named sin",
       [](json& d) {
         d["coordinates"] = json::array({"sin", "y"});
       },
       "$.coordinates[0]", "'sin'"},
      {"coordinate named t",
       [](json& d) {
         d["coordinates"] = json::array({"x", "t"});
       },
       "$.coordinates[1]", "'t'"},
      {"intermediate named pi", [](json& d) { d["intermediates"][0]["name"] = "pi"; },
       "$.intermediates[0].name", "'pi'"},
      {"intermediate named cos", [](json& d) { d["intermediates"][1]["name"] = "cos"; },
       "$.intermediates[1].name", "'cos'"},
      {"parameter named hypot", [](json& d) { d["parameters"][0]["name"] = "hypot"; },
       "$.parameters[0].name", "'hypot'"},
      {"intermediate named Qc", [](json& d) { d["intermediates"][0]["name"] = "Qc"; },
       "$.intermediates[0].name", "'Qc'"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    const Refusal r = refusal_after(c.edit);
    EXPECT_EQ(r.path, c.path);
    EXPECT_EQ(r.column, 0);
    EXPECT_TRUE(contains(r.reason, c.name)) << r.reason;
    EXPECT_FALSE(r.limit);
  }
}

TEST(DefinitionErrorsByField, EmptyAndMalformedExpressions) {
  const struct {
    void (*edit)(json&);
    const char* path;
    int column;
    const char* reason;
  } cases[] = {
      {[](json& d) { d["mass"][0][1] = ""; }, "$.mass[0][1]", 0, "empty"},
      {[](json& d) { d["position_constraints"][0] = ""; }, "$.position_constraints[0]", 0, "empty"},
      {[](json& d) { d["intermediates"][0]["expr"] = ""; }, "$.intermediates[0].expr", 0, "empty"},
      {[](json& d) { d["initial_state"]["q"][0] = "\t"; }, "$.initial_state.q[0]", 0, "empty"},
      {[](json& d) { d["intermediates"][1]["expr"] = "x_dot * * y_dot"; },
       "$.intermediates[1].expr", 9, "'*'"},
      {[](json& d) { d["mass"][1][1] = "m +"; }, "$.mass[1][1]", 4, "end"},
      {[](json& d) { d["velocity_constraints"] = json::array({"x_dot + (y_dot"}); },
       "$.velocity_constraints[0]", 15, "')'"},
      {[](json& d) { d["force"][0] = "-k * x 2"; }, "$.force[0]", 8, "'2'"},
      {[](json& d) { d["force"][1] = "y * 1e400"; }, "$.force[1]", 5, "range"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.path);
    const Refusal r = refusal_after(c.edit);
    EXPECT_EQ(r.path, c.path);
    EXPECT_EQ(r.column, c.column);
    EXPECT_TRUE(contains(r.reason, c.reason)) << r.reason;
    EXPECT_FALSE(r.limit);
  }
}

TEST(DefinitionErrorsByField, FieldsAndValues) {
  const struct {
    void (*edit)(json&);
    const char* path;
    const char* reason;
  } cases[] = {
      {[](json& d) { d["Mass"] = d["mass"]; }, "$", "unknown field 'Mass'"},
      {[](json& d) { d["parameters"][0]["unit"] = "kg"; }, "$.parameters[0]", "'unit'"},
      {[](json& d) { d["intermediates"][0]["note"] = ""; }, "$.intermediates[0]", "'note'"},
      {[](json& d) {
         d["baumgarte"] = {{"gamma", 1}};
       },
       "$.baumgarte", "'gamma'"},
      {[](json& d) { d["initial_state"]["v"] = json::array(); }, "$.initial_state", "'v'"},
      {[](json& d) { d["format"] = ""; }, "$.format", "ukes-model/1"},
      {[](json& d) { d["format"] = "ukes-model/1.0"; }, "$.format", "ukes-model/1"},
      {[](json& d) { d["format"] = 1; }, "$.format", "string"},
      {[](json& d) { d["t_end"] = -1; }, "$.t_end", "> 0"},
      {[](json& d) { d["t_end"] = -0.0; }, "$.t_end", "> 0"},
      {[](json& d) { d["t_end"] = "1"; }, "$.t_end", "number"},
      {[](json& d) {
         d["baumgarte"] = {{"alpha", 1}, {"beta", -0.5}};
       },
       "$.baumgarte.beta", ">= 0"},
      {[](json& d) {
         d["baumgarte"] = {{"alpha", "1"}};
       },
       "$.baumgarte.alpha", "number"},
      {[](json& d) { d["parameters"][0]["value"] = std::numeric_limits<double>::infinity(); },
       "$.parameters[0].value", "finite"},
      {[](json& d) { d["force"][0] = std::numeric_limits<double>::quiet_NaN(); }, "$.force[0]",
       "finite"},
      {[](json& d) { d["t_end"] = std::numeric_limits<double>::infinity(); }, "$.t_end", "finite"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.path);
    const Refusal r = refusal_after(c.edit);
    EXPECT_EQ(r.path, c.path);
    EXPECT_EQ(r.column, 0);
    EXPECT_TRUE(contains(r.reason, c.reason)) << r.reason;
    EXPECT_FALSE(r.limit);
  }
  json ok = base_definition();
  ok["format"] = "ukes-model/1";
  ok["t_end"] = 1e-9;
  ok["baumgarte"] = {{"alpha", 0}, {"beta", 0}};
  const UserModelDefinition d = parse_user_model(ok);
  EXPECT_EQ(d.t_end, 1e-9);
  EXPECT_EQ(d.gains.alpha, 0.0);
}

// A JSON number too large for a double cannot reach the document: the text is refused as a
// definition error like any other, not with the JSON library's exception.
TEST(DefinitionErrorsByField, HugeNumbersInTheText) {
  const std::string base = base_definition().dump();
  std::string in_force = base, in_parameter = base;
  in_force.replace(in_force.find("\"-k * x\""), 8, "1e999");
  in_parameter.replace(in_parameter.find("2.0"), 3, "-1e400");
  for (const std::string& text : {in_force, in_parameter}) {
    SCOPED_TRACE(text);
    try {
      parse_user_model_text(text);
      ADD_FAILURE() << "accepted";
    } catch (const DefinitionError& e) {
      EXPECT_EQ(e.path, "$");
      EXPECT_FALSE(e.limit);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not a DefinitionError: " << e.what();
    }
  }
}

Refusal refusal_of_text(const std::string& text) {
  try {
    parse_user_model_text(text);
  } catch (const DefinitionError& e) {
    return {e.path, e.column, e.reason, e.limit};
  }
  return {"accepted", -1, "", false};
}

TEST(DefinitionLimits, Coordinates) {
  EXPECT_NO_THROW(parse_user_model(coordinates_definition(32)));
  const Refusal r = refusal_of(coordinates_definition(33));
  EXPECT_EQ(r.path, "$.coordinates");
  EXPECT_TRUE(r.limit);
  EXPECT_TRUE(contains(r.reason, "32")) << r.reason;
}

TEST(DefinitionLimits, ConstraintRows) {
  const auto rows = [](int position, int velocity) {
    json d = base_definition();
    d["position_constraints"] = json::array();
    d["velocity_constraints"] = json::array();
    for (int k = 0; k < position; ++k) d["position_constraints"].push_back(numbered("x - ", k));
    for (int k = 0; k < velocity; ++k) d["velocity_constraints"].push_back(numbered("x_dot - ", k));
    return d;
  };
  EXPECT_EQ(parse_user_model(rows(32, 0)).position_rows, 32);
  const UserModelDefinition mixed = parse_user_model(rows(20, 12));
  EXPECT_EQ(mixed.position_rows + mixed.velocity_rows, 32);
  const Refusal position = refusal_of(rows(33, 0));
  EXPECT_EQ(position.path, "$.position_constraints");
  EXPECT_TRUE(position.limit);
  const Refusal both = refusal_of(rows(20, 13));
  EXPECT_EQ(both.path, "$.velocity_constraints");
  EXPECT_TRUE(both.limit);
  EXPECT_TRUE(contains(both.reason, "33")) << both.reason;
}

TEST(DefinitionLimits, Parameters) {
  const auto with = [](int count) {
    json d = base_definition();
    for (int k = 2; k < count; ++k)
      d["parameters"].push_back({{"name", numbered("p", k)}, {"value", k}});
    return d;
  };
  EXPECT_EQ(parse_user_model(with(128)).parameters.size(), 128u);
  const Refusal r = refusal_of(with(129));
  EXPECT_EQ(r.path, "$.parameters");
  EXPECT_TRUE(r.limit);
  EXPECT_TRUE(contains(r.reason, "128")) << r.reason;
}

TEST(DefinitionLimits, ExpressionLengthAndDepth) {
  std::string text = "x";
  while (text.size() + 4 <= 4096) text += " + x";
  while (text.size() < 4096) text += " ";
  ASSERT_EQ(text.size(), 4096u);
  json d = base_definition();
  d["force"][0] = text;
  EXPECT_NO_THROW(parse_user_model(d));
  d["force"][0] = text + " ";
  const Refusal longer = refusal_of(d);
  EXPECT_EQ(longer.path, "$.force[0]");
  EXPECT_EQ(longer.column, 0);
  EXPECT_TRUE(longer.limit);
  const auto nested = [](int levels) {
    std::string e = "y";
    for (int k = 0; k < levels; ++k) e = "(" + e + ")";
    return e;
  };
  d["force"][0] = "x";
  d["force"][1] = nested(64);
  EXPECT_NO_THROW(parse_user_model(d));
  d["force"][1] = "-k * " + nested(65);
  const Refusal deeper = refusal_of(d);
  EXPECT_EQ(deeper.path, "$.force[1]");
  EXPECT_EQ(deeper.column, 5 + 65 + 1);  // the y, inside the 65th parenthesis
  EXPECT_TRUE(deeper.limit);
  // sin(sin(...)) nests like parentheses.
  std::string calls = "y";
  for (int k = 0; k < 65; ++k) calls = "sin(" + calls + ")";
  d["force"][1] = calls;
  EXPECT_TRUE(refusal_of(d).limit);
}

TEST(DefinitionLimits, DefinitionText) {
  // Exactly 1 MiB (the definition, then spaces) is accepted; one byte more is a limit.
  std::string text = base_definition().dump();
  text.append((std::size_t{1} << 20) - text.size(), ' ');
  ASSERT_EQ(text.size(), std::size_t{1} << 20);
  EXPECT_EQ(refusal_of_text(text).path, "accepted");
  const Refusal r = refusal_of_text(text + " ");
  EXPECT_EQ(r.path, "$");
  EXPECT_TRUE(r.limit);
}

TEST(DefinitionLimits, Names) {
  json d = base_definition();
  d["name"] = std::string(64, 'n');
  EXPECT_NO_THROW(parse_user_model(d));
  d["name"] = std::string(65, 'n');
  const Refusal r = refusal_of(d);
  EXPECT_EQ(r.path, "$.name");
  EXPECT_TRUE(r.limit);
  const Refusal parameter =
      refusal_after([](json& p) { p["parameters"][0]["name"] = std::string(65, 'p'); });
  EXPECT_EQ(parameter.path, "$.parameters[0].name");
  EXPECT_TRUE(parameter.limit);
}

// A coordinate may be named with as many characters as any other name (64): its rate,
// `<name>_dot`, is the language's own name, not one the user wrote.
TEST(DefinitionLimits, LongCoordinateNames) {
  for (std::size_t length : {60u, 61u, 64u}) {
    SCOPED_TRACE(length);
    const std::string name(length, 'c');
    json d = {{"name", "long"}, {"mass", json::array({json::array({1})})}};
    d["coordinates"] = json::array({name});
    d["force"] = json::array({"-" + name + " - 0.1 * " + name + "_dot"});
    const Refusal r = refusal_of_text(d.dump());
    EXPECT_EQ(r.path, "accepted") << r.reason;
  }
  json d = {{"name", "long"}, {"mass", json::array({json::array({1})})}};
  d["force"] = json::array({0});
  d["coordinates"] = json::array({std::string(65, 'c')});
  const Refusal r = refusal_of(d);
  EXPECT_EQ(r.path, "$.coordinates[0]");
  EXPECT_TRUE(r.limit);
}

TEST(DefinitionContentId, KeyOrderAndWhitespaceDoNotMatter) {
  const UserModelDefinition a = parse_user_model(base_definition());
  const std::string spaced = R"(
  {
      "initial_state" : { "qd" : [ 0 , "k" ] , "q" : [ 1 , 0 ] } ,
      "position_constraints" : [ "r2 - 1" ] ,
      "mass" : [ [ "m" , 0 ] , [ 0 , "m" ] ] ,
      "force" : [ "-k * x" , "-k * y" ] ,
      "intermediates" : [ { "expr" : "x * x + y * y" , "name" : "r2" } ,
                          { "expr" : "x_dot * x_dot + y_dot * y_dot" , "name" : "v2" } ] ,
      "parameters" : [ { "value" : 2.0 , "name" : "m" } , { "value" : 3.0 , "name" : "k" } ] ,
      "coordinates" : [ "x" , "y" ] ,
      "name" : "base"
  }
  )";
  const UserModelDefinition b = parse_user_model_text(spaced);
  EXPECT_EQ(b.content_id, a.content_id);
  EXPECT_EQ(b.canonical_json, a.canonical_json);
  // The id is the SHA-256 of the canonical form: 64 lower-case hex digits.
  ASSERT_EQ(a.content_id.size(), 7u + 64u);
  EXPECT_EQ(a.content_id.substr(0, 7), "sha256:");
  for (char c : a.content_id.substr(7)) {
    const auto u = static_cast<unsigned char>(c);
    EXPECT_TRUE(std::isxdigit(u) && !std::isupper(u)) << c;
  }
  // The canonical form, parsed again, is the same model.
  const UserModelDefinition again = parse_user_model_text(a.canonical_json);
  EXPECT_EQ(again.content_id, a.content_id);
  EXPECT_EQ(parse_user_model(json::parse(a.canonical_json)).content_id, a.content_id);
}

TEST(DefinitionContentId, AnyChangeIsAnotherModel) {
  const std::string id = parse_user_model(base_definition()).content_id;
  const struct {
    const char* what;
    void (*edit)(json&);
  } changes[] = {
      {"a force", [](json& d) { d["force"][1] = "-k * y * 1"; }},
      {"a position row", [](json& d) { d["position_constraints"][0] = "r2 - 2"; }},
      {"an intermediate", [](json& d) { d["intermediates"][0]["expr"] = "y * y + x * x"; }},
      {"a mass entry", [](json& d) { d["mass"][1][1] = "2 * m"; }},
      {"a default parameter", [](json& d) { d["parameters"][1]["value"] = 3.5; }},
      {"a parameter's name",
       [](json& d) {
         d["parameters"][1]["name"] = "kk";
         d["force"] = json::array({"-kk * x", "-kk * y"});
         d["initial_state"]["qd"][1] = "kk";
       }},
      {"the initial state", [](json& d) { d["initial_state"]["q"][0] = 0.5; }},
      {"t_end", [](json& d) { d["t_end"] = 2.0; }},
      {"the gains",
       [](json& d) {
         d["baumgarte"] = {{"alpha", 1.0}};
       }},
      {"the model's name", [](json& d) { d["name"] = "base2"; }},
  };
  std::vector<std::string> ids{id};
  for (const auto& c : changes) {
    SCOPED_TRACE(c.what);
    json d = base_definition();
    c.edit(d);
    const std::string other = parse_user_model(d).content_id;
    for (const std::string& seen : ids) EXPECT_NE(other, seen);
    ids.push_back(other);
  }
}

}  // namespace
}  // namespace ukes::testing
