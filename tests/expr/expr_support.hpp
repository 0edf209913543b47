// What the expression tests share: a small valid definition to vary, and the evaluation of one
// expression or one segment of a compiled definition.
#pragma once

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kernels/expr/program.hpp"
#include "kernels/models/user/definition.hpp"

namespace ukes::testing {

inline constexpr double kPi = 3.14159265358979323846;
inline constexpr double kE = 2.71828182845904523536;

// A value the C++ compiler cannot see, so that references call the library at run time as the
// programs do (folded at compile time, sin(0.7) is correctly rounded; the library's need not be).
template <class T>
T unfolded(T value) {
  volatile T hidden = value;
  return hidden;
}

// prefix followed by the number k ("a" and 3: "a3"), built without `"literal" + std::string`,
// on which GCC 12 reports a false -Wrestrict.
template <class Integer>
std::string numbered(const char* prefix, Integer k) {
  std::string s(prefix);
  s += std::to_string(k);
  return s;
}

// Two coordinates x, y; parameters m, k; intermediates r2 (positions only) and v2 (rates).
inline nlohmann::json base_definition() {
  return nlohmann::json::parse(R"({
    "name": "base", "coordinates": ["x", "y"],
    "parameters": [{"name": "m", "value": 2.0}, {"name": "k", "value": 3.0}],
    "intermediates": [{"name": "r2", "expr": "x * x + y * y"},
                      {"name": "v2", "expr": "x_dot * x_dot + y_dot * y_dot"}],
    "mass": [["m", 0], [0, "m"]],
    "force": ["-k * x", "-k * y"],
    "position_constraints": ["r2 - 1"],
    "initial_state": {"q": [1, 0], "qd": [0, "k"]}})");
}

// Runs `segment` of `d` on plain numbers or jets S, with in.p the model's parameters (the
// parameter-only values the segment loads are derived from them first, as a system's kernel
// does); returns its outputs (`count` slots).
template <class S, class T>
std::vector<S> run(const UserModelDefinition& d, expr::Segment segment, expr::Inputs<S, T> in,
                   int count) {
  std::vector<T> p(expr::kParameterSlots, T(0));
  if (in.p != nullptr) std::copy(in.p, in.p + d.parameters.size(), p.begin());
  expr::run_segment<expr::kMaxRegisters>(
      d.program.view(), expr::Segment::kDerived,
      expr::Inputs<T, T>{nullptr, nullptr, T(0), p.data()},
      [&](int k, const T& v) { p.at(static_cast<std::size_t>(k)) = v; });
  in.p = p.data();
  std::vector<S> out(static_cast<std::size_t>(count), S(T(-12345)));
  expr::run_segment<expr::kMaxRegisters>(d.program.view(), segment, in, [&](int k, const S& v) {
    out.at(static_cast<std::size_t>(k)) = v;
  });
  return out;
}

// A one-coordinate model whose force is `expression` over x, x_dot, t and parameters a, b.
inline UserModelDefinition force_model(const std::string& expression) {
  nlohmann::json d = nlohmann::json::parse(R"({"name": "one", "coordinates": ["x"],
    "parameters": [{"name": "a", "value": 1.5}, {"name": "b", "value": -0.5}],
    "mass": [[1]]})");
  d["force"] = {expression};
  return parse_user_model(d);
}

// The value of `expression` (see force_model) at x, x_dot, t.
template <class T>
T value_at(const std::string& expression, T x, T x_dot = T(0), T t = T(0)) {
  const UserModelDefinition d = force_model(expression);
  const T p[] = {T(1.5), T(-0.5)};
  return run<T, T>(d, expr::Segment::kForce, {&x, &x_dot, t, p, nullptr}, 1)[0];
}

}  // namespace ukes::testing
