#include "service/runspec/model_source.hpp"

#include <algorithm>

#include "kernels/models/user/compiled_model.hpp"
#include "service/runspec/run_spec.hpp"

namespace ukes {

namespace {

// A definition's errors as the run spec's: SpecError, or LimitError for one over a limit.
template <class Parse>
std::shared_ptr<const ModelInfo> compile_for_spec(Parse&& parse) {
  try {
    return make_user_model_info(parse());
  } catch (const DefinitionError& e) {
    const std::string reason =
        e.column > 0 ? "column " + std::to_string(e.column) + ": " + e.reason : e.reason;
    if (e.limit) throw LimitError(e.path, reason);
    throw SpecError(e.path, reason);
  }
}

}  // namespace

std::shared_ptr<const ModelInfo> user_model_from_json(const nlohmann::json& definition,
                                                      const std::string& path) {
  auto model = compile_for_spec([&] { return parse_user_model(definition, path); });
  if (find_model(model->name)) {
    throw SpecError(path + ".name", "'" + model->name +
                                        "' is a catalogue model: a user model needs a name "
                                        "of its own");
  }
  return model;
}

std::shared_ptr<const ModelInfo> with_actuation_matrix(const ModelInfo& user,
                                                       const nlohmann::json& matrix,
                                                       const std::string& path) {
  const nlohmann::json definition = nlohmann::json::parse(user.user->definition.canonical_json);
  return compile_for_spec([&] { return parse_user_model(definition, "model", matrix, path); });
}

bool is_model_id(const std::string& model) { return model.rfind("sha256:", 0) == 0; }

std::shared_ptr<const ModelInfo> ModelRegistry::shared_copy(const std::string& id) const {
  for (const auto& [owner, space] : owners_)
    if (const auto it = space.by_id.find(id); it != space.by_id.end()) return it->second.model;
  return nullptr;
}

std::shared_ptr<const ModelInfo> ModelRegistry::add(const std::string& owner,
                                                    std::shared_ptr<const ModelInfo> model,
                                                    const std::function<void()>& persist) {
  const std::string id = model_id(*model);  // a copy: `model` may be replaced below
  const auto bytes = static_cast<std::int64_t>(model->user->definition.canonical_json.size());
  const std::lock_guard lock(mutex_);
  Namespace& space = owners_[owner];
  if (const auto it = space.by_id.find(id); it != space.by_id.end()) return it->second.model;
  if (static_cast<int>(space.by_id.size()) >= limits_.max_models)
    throw LimitError("definition", "you have registered " + std::to_string(space.by_id.size()) +
                                       " models, your quota (DeleteModel frees one)");
  if (space.bytes + bytes > limits_.max_bytes)
    throw LimitError("definition", "your registered definitions would exceed your quota of " +
                                       std::to_string(limits_.max_bytes) + " bytes");
  if (persist) persist();
  if (auto same = shared_copy(id)) model = std::move(same);
  space.bytes += bytes;
  space.by_id.emplace(id, Entry{next_order_++, model});
  return model;
}

bool ModelRegistry::remove(const std::string& owner, const std::string& id,
                           const std::function<void()>& persist) {
  const std::lock_guard lock(mutex_);
  const auto space = owners_.find(owner);
  if (space == owners_.end()) return false;
  const auto it = space->second.by_id.find(id);
  if (it == space->second.by_id.end()) return false;
  if (persist) persist();
  space->second.bytes -=
      static_cast<std::int64_t>(it->second.model->user->definition.canonical_json.size());
  space->second.by_id.erase(it);
  if (space->second.by_id.empty()) owners_.erase(space);
  return true;
}

std::shared_ptr<const ModelInfo> ModelRegistry::find(const std::string& owner,
                                                     const std::string& id) const {
  const std::lock_guard lock(mutex_);
  const auto space = owners_.find(owner);
  if (space == owners_.end()) return nullptr;
  const auto it = space->second.by_id.find(id);
  return it == space->second.by_id.end() ? nullptr : it->second.model;
}

std::vector<ModelRegistry::Entry> ModelRegistry::list(const std::string& owner, std::int64_t after,
                                                      std::size_t limit) const {
  std::vector<Entry> out;
  {
    const std::lock_guard lock(mutex_);
    const auto space = owners_.find(owner);
    if (space == owners_.end()) return out;
    for (const auto& [id, entry] : space->second.by_id)
      if (entry.order > after) out.push_back(entry);
  }
  std::sort(out.begin(), out.end(),
            [](const Entry& a, const Entry& b) { return a.order < b.order; });
  if (out.size() > limit) out.resize(limit);
  return out;
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
