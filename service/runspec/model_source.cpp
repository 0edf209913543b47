#include "service/runspec/model_source.hpp"

#include "kernels/models/user/compiled_model.hpp"
#include "service/runspec/run_spec.hpp"

namespace ukes {

std::shared_ptr<const ModelInfo> user_model_from_json(const nlohmann::json& definition,
                                                      const std::string& path) {
  try {
    auto model = make_user_model_info(parse_user_model(definition, path));
    if (find_model(model->name)) {
      throw SpecError(path + ".name", "'" + model->name +
                                          "' is a catalogue model: a user model needs a name "
                                          "of its own");
    }
    return model;
  } catch (const DefinitionError& e) {
    const std::string reason =
        e.column > 0 ? "column " + std::to_string(e.column) + ": " + e.reason : e.reason;
    if (e.limit) throw LimitError(e.path, reason);
    throw SpecError(e.path, reason);
  }
}

bool is_model_id(const std::string& model) { return model.rfind("sha256:", 0) == 0; }

std::shared_ptr<const ModelInfo> ModelRegistry::add(std::shared_ptr<const ModelInfo> model) {
  const std::string& id = model_id(*model);
  const auto bytes = static_cast<std::int64_t>(model->user->definition.canonical_json.size());
  std::lock_guard lock(mutex_);
  if (auto it = by_id_.find(id); it != by_id_.end()) return it->second;
  if (static_cast<int>(order_.size()) >= limits_.max_models) {
    throw LimitError("definition", "the server holds " + std::to_string(order_.size()) +
                                       " registered models, its limit");
  }
  if (bytes_ + bytes > limits_.max_bytes) {
    throw LimitError("definition", "registered definitions would exceed " +
                                       std::to_string(limits_.max_bytes) + " bytes");
  }
  bytes_ += bytes;
  by_id_.emplace(id, model);
  order_.push_back(model);
  return model;
}

std::shared_ptr<const ModelInfo> ModelRegistry::find(const std::string& id) const {
  std::lock_guard lock(mutex_);
  const auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<const ModelInfo>> ModelRegistry::list() const {
  std::lock_guard lock(mutex_);
  return order_;
}

const std::string& model_id(const ModelInfo& model) {
  static const std::string kNone;
  return model.user ? model.user->definition.content_id : kNone;
}

nlohmann::json model_definition_json(const ModelInfo& model) {
  if (!model.user) return nullptr;
  return nlohmann::json::parse(model.user->definition.canonical_json);
}

}  // namespace ukes
