#include "kernels/models/user/compiled_model.hpp"

#include <string>

#include "kernels/models/user/buckets.hpp"

namespace ukes {

namespace {

[[noreturn]] void too_large(const std::string& path, const std::string& what, int size, int limit) {
  throw DefinitionError(
      path, 0, what + " " + std::to_string(size) + " exceeds the limit of " + std::to_string(limit),
      true);
}

}  // namespace

CompiledUserModel::CompiledUserModel(UserModelDefinition def) : definition(std::move(def)) {
  const UserModelDefinition& d = definition;
  const int rows = d.position_rows + d.velocity_rows;
  if (d.n() > kUserModelCapacity)
    too_large("$.coordinates", "coordinates", d.n(), kUserModelCapacity);
  if (rows > kUserModelCapacity) {
    too_large("$.position_constraints", "constraint rows", rows, kUserModelCapacity);
  }
  const int params = static_cast<int>(d.parameters.size());
  if (params > kUserParamCapacity)
    too_large("$.parameters", "parameters", params, kUserParamCapacity);
  bucket = user_bucket_for(d.n(), rows);
  program = kernel_program(d);
}

std::shared_ptr<const ModelInfo> make_user_model_info(UserModelDefinition definition) {
  auto compiled = std::make_shared<const CompiledUserModel>(std::move(definition));
  const UserModelDefinition& d = compiled->definition;
  auto info = std::make_shared<ModelInfo>();
  info->name = d.name;
  info->source = d.description.empty() ? "user model " + d.content_id : d.description;
  info->n = d.n();
  info->position_rows = d.position_rows;
  info->velocity_rows = d.velocity_rows;
  info->nonideal = d.nonideal;
  info->coordinates = d.coordinates;
  for (const auto& p : d.parameters) info->params.push_back(ParamSpec{p.name.c_str(), p.value});
  info->t_end = d.t_end;
  info->gains = d.gains;
  info->q0 = d.q0;
  info->qd0 = d.qd0;
  info->user = std::move(compiled);
  return info;
}

}  // namespace ukes
