// `ukes models`: the catalogue as a table or as JSON.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "client/commands.hpp"
#include "kernels/models/derived_rows.hpp"
#include "kernels/models/user/compiled_model.hpp"

namespace ukes::cli {

namespace {

std::string number(double v) {
  std::ostringstream os;
  os.precision(10);
  os << v;
  return os.str();
}

std::string rows_text(const ModelInfo& m) {
  std::string s;
  if (m.position_rows > 0) s += std::to_string(m.position_rows) + " position";
  if (m.velocity_rows > 0)
    s += (s.empty() ? "" : " + ") + std::to_string(m.velocity_rows) + " velocity";
  if (s.empty()) s = "none";
  if (m.nonideal) s += ", non-ideal";
  return s;
}

nlohmann::json model_json(const ModelInfo& m) {
  nlohmann::json params = nlohmann::json::array();
  for (const auto& p : m.params)
    params.push_back({{"name", p.name}, {"default", p.value}, {"structural", p.structural}});
  return {{"name", m.name},
          {"n", m.n},
          {"rows", m.rows()},
          {"position_rows", m.position_rows},
          {"velocity_rows", m.velocity_rows},
          {"nonideal", m.nonideal},
          {"coordinates", m.coordinates},
          {"params", params},
          {"t_end", m.t_end},
          {"gains", {{"alpha", m.gains.alpha}, {"beta", m.gains.beta}}},
          {"q0", m.q0},
          {"qd0", m.qd0},
          {"source", m.source}};
}

void print_vector(const char* label, const std::vector<double>& v) {
  std::printf("  %-6s [", label);
  for (std::size_t k = 0; k < v.size(); ++k)
    std::printf("%s%s", k ? ", " : "", number(v[k]).c_str());
  std::printf("]\n");
}

void print_matrix(const char* label, const std::vector<double>& a, int rows, int cols) {
  for (int r = 0; r < rows; ++r) {
    std::printf("  %-6s [", r == 0 ? label : "");
    for (int c = 0; c < cols; ++c)
      std::printf("%s%12s", c ? " " : "",
                  number(a[static_cast<std::size_t>(r) * cols + c]).c_str());
    std::printf("]\n");
  }
}

nlohmann::json derived_json(const DerivedRows& d) {
  return {{"A", d.A}, {"b", d.b}, {"value", d.value}, {"mass", d.mass}, {"force", d.force}};
}

}  // namespace

int read_definition_file(const std::string& path, std::string& text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "ukes: cannot read model file '%s'\n", path.c_str());
    return kExitUsage;
  }
  text.assign(kMaxDefinitionTextBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > kMaxDefinitionTextBytes) {
    std::fprintf(stderr, "ukes: model file '%s' is larger than %zu bytes\n", path.c_str(),
                 kMaxDefinitionTextBytes);
    return kExitUsage;
  }
  return kExitOk;
}

int validate_command(const std::string& path, bool json) {
  std::string text;
  if (const int rc = read_definition_file(path, text); rc != kExitOk) return rc;
  std::shared_ptr<const ModelInfo> model;
  try {
    model = make_user_model_info(parse_user_model_text(text));
  } catch (const DefinitionError& e) {
    std::fprintf(stderr, "ukes: %s: %s\n", path.c_str(), e.what());
    return kExitUsage;
  }
  const ModelInfo& m = *model;
  const DerivedRows d = derived_rows(m, m.q0, m.qd0, 0.0, m.default_params());
  if (json) {
    nlohmann::json j = model_json(m);
    j["id"] = m.user->definition.content_id;
    j["bucket"] = m.user->bucket;
    j["at_default_state"] = derived_json(d);
    std::cout << j.dump(2) << "\n";
    return kExitOk;
  }
  std::printf("%s: valid model '%s' (%s)\n", path.c_str(), m.name.c_str(),
              m.user->definition.content_id.c_str());
  std::printf("  n = %d:", m.n);
  for (const auto& c : m.coordinates) std::printf(" %s", c.c_str());
  std::printf("\n  rows: %s; runs in the %d-coordinate bucket\n", rows_text(m).c_str(),
              m.user->bucket);
  std::printf("  parameters:");
  for (const auto& p : m.params) std::printf(" %s=%s", p.name, number(p.value).c_str());
  std::printf("\n  t_end = %s, Baumgarte alpha = %s, beta = %s\n", number(m.t_end).c_str(),
              number(m.gains.alpha).c_str(), number(m.gains.beta).c_str());
  std::printf("At the default state (t = 0):\n");
  print_vector("q0", m.q0);
  print_vector("qd0", m.qd0);
  print_matrix("M", d.mass, d.n, d.n);
  print_vector("Q", d.force);
  if (d.rows > 0) {
    print_vector("rows", d.value);
    print_matrix("A", d.A, d.rows, d.n);
    print_vector("b", d.b);
  }
  return kExitOk;
}

int models_command(bool json) {
  const auto& models = catalogue_info();
  if (json) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& m : models) a.push_back(model_json(m));
    std::cout << a.dump(2) << "\n";
    return kExitOk;
  }
  constexpr int kWidth = 100;
  constexpr int kParamColumn = 62;  // where the PARAMETERS column starts
  std::printf("%-24s %3s  %-22s %7s  %s\n", "NAME", "N", "ROWS (LEVEL)", "T_END",
              "PARAMETERS (DEFAULTS)");
  bool any_structural = false;
  for (const auto& m : models) {
    std::printf("%-24s %3d  %-22s %7s  ", m.name.c_str(), m.n, rows_text(m).c_str(),
                number(m.t_end).c_str());
    int column = kParamColumn;
    bool first = true;
    for (const auto& p : m.params) {
      std::string item = std::string(p.name) + "=" + number(p.value) + (p.structural ? "*" : "");
      any_structural = any_structural || p.structural;
      const int len = static_cast<int>(item.size()) + (first ? 0 : 1);
      if (!first && column + len > kWidth) {
        std::printf("\n%*s", kParamColumn, "");
        column = kParamColumn;
        first = true;
      }
      std::printf("%s%s", first ? "" : " ", item.c_str());
      column += static_cast<int>(item.size()) + (first ? 0 : 1);
      first = false;
    }
    std::printf("\n");
  }
  if (any_structural)
    std::printf("\n* structural: fixes the model's dimensions (not overridable)\n");
  std::printf(
      "\n%zu models. `ukes models --json` gives coordinates, gains and initial conditions.\n",
      models.size());
  return kExitOk;
}

}  // namespace ukes::cli
