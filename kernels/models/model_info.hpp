// Host-side description of a model, built from its static metadata: what `ukes models`, the
// run-spec validator and the service report.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kernels/models/model_concept.hpp"

namespace ukes {

enum class RowLevel { kPosition, kVelocity };

struct CompiledUserModel;  // kernels/models/user/compiled_model.hpp

struct ModelInfo {
  std::string name;
  std::string source;
  int n = 0;
  int position_rows = 0;
  int velocity_rows = 0;
  bool nonideal = false;
  std::vector<std::string> coordinates;
  std::vector<ParamSpec> params;
  double t_end = 0.0;
  Gains gains;
  std::vector<double> q0, qd0;  // default initial condition at default parameters
  // A user model's definition and program (parameter names point into it); null for built-ins.
  std::shared_ptr<const CompiledUserModel> user;

  int rows() const { return position_rows + velocity_rows; }
  int residual_slots() const { return 2 * position_rows + velocity_rows; }
  std::vector<double> default_params() const {
    std::vector<double> v;
    for (const auto& p : params) v.push_back(p.value);
    return v;
  }
  int param_index(const std::string& pname) const {
    for (std::size_t k = 0; k < params.size(); ++k)
      if (pname == params[k].name) return static_cast<int>(k);
    return -1;
  }
};

template <class Model>
ModelInfo model_info() {
  ModelInfo info;
  info.name = Model::kName;
  info.source = Model::kSource;
  info.n = Model::kN;
  info.position_rows = Model::kPositionRows;
  info.velocity_rows = Model::kVelocityRows;
  info.nonideal = Model::kNonIdeal;
  for (const char* c : Model::kCoordinates) info.coordinates.emplace_back(c);
  for (const ParamSpec& p : Model::kParams) info.params.push_back(p);
  info.t_end = Model::kTEnd;
  info.gains = Model::kGains;
  std::vector<double> p = info.default_params();
  Vec<double, Model::kN> q, qd;
  Model::initial_state(p.data(), q, qd);
  for (int j = 0; j < Model::kN; ++j) {
    info.q0.push_back(q[j]);
    info.qd0.push_back(qd[j]);
  }
  return info;
}

// Every catalogue model, in catalogue order (defined in model_info.cpp).
const std::vector<ModelInfo>& catalogue_info();
const ModelInfo* find_model(const std::string& name);

}  // namespace ukes
