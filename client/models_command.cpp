// `ukes models`: the catalogue as a table or as JSON.
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "client/commands.hpp"
#include "kernels/models/model_info.hpp"

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

}  // namespace

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
