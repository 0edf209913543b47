// Every class of mistake in a definition (docs/MODEL_FORMAT.md, "Errors") is refused before any
// work, with the JSON path of the field, the column in its expression and a reason; limits are
// marked as such.
#include <gtest/gtest.h>

#include <string>

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
      "mass with too few rows",
      [](json& d) {
        d["mass"] = {{"m", 0}};
      },
      "$.mass", 0, "rows");
  expect_refused(
      "mass row too short", [](json& d) { d["mass"][1] = {0}; }, "$.mass[1]", 0, "entries");
  expect_refused(
      "upper triangle with wrong rows",
      [](json& d) {
        d["mass"] = {{"upper", {{"m"}, {0, "m"}}}};
      },
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
        d["mass"] = {{"diagonal", {"m", "m"}}, {"upper", {{"m", 0}, {"m"}}}};
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
      "not symmetric",
      [](json& d) {
        d["mass"] = {{"m", "x"}, {"y", "m"}};
      },
      "$.mass[1][0]", 0, "mass matrix is not symmetric: (0,1) and (1,0) differ");
  // Entries written differently but equal are symmetric.
  json d = base_definition();
  d["mass"] = {{"m", "x * y"}, {"y * x", "m"}};
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
    d["intermediates"] = {{{"name", "a0"}, {"expr", "x" + ones}}};
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

}  // namespace
}  // namespace ukes::testing
