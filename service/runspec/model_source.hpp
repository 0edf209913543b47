// Where a run spec's `model` comes from (docs/RUNSPEC.md, docs/MODEL_FORMAT.md): a catalogue
// name, an inline definition, or the content id of a definition registered with a server.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kernels/models/model_info.hpp"

namespace ukes {

// The largest definition text a client may send (docs/MODEL_FORMAT.md).
inline constexpr std::size_t kMaxDefinitionBytes = std::size_t{1} << 20;

// A user model from its JSON definition, errors reported as the run spec's (SpecError, or
// LimitError for a definition over a limit) with fields under `path` ("model.mass[1][0]").
std::shared_ptr<const ModelInfo> user_model_from_json(const nlohmann::json& definition,
                                                      const std::string& path);

// Whether `model` names a registered definition by its content id ("sha256:<64 hex>").
bool is_model_id(const std::string& model);

// The user models a server has been given, by content id: a sweep of 10^6 systems names its
// model by id instead of resending it, and identical definitions share one entry. Thread-safe.
class ModelRegistry {
 public:
  struct Limits {
    int max_models = 1024;
    std::int64_t max_bytes = 64 << 20;  // canonical definition text held in all
  };
  ModelRegistry() : ModelRegistry(Limits{}) {}
  explicit ModelRegistry(Limits limits) : limits_(limits) {}

  // The registered model with `model`'s content id, registering `model` if there is none;
  // LimitError (field "definition") when the registry is full.
  std::shared_ptr<const ModelInfo> add(std::shared_ptr<const ModelInfo> model);
  // Null when no model has this id.
  std::shared_ptr<const ModelInfo> find(const std::string& id) const;
  // In registration order.
  std::vector<std::shared_ptr<const ModelInfo>> list() const;

 private:
  Limits limits_;
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const ModelInfo>> by_id_;
  std::vector<std::shared_ptr<const ModelInfo>> order_;
  std::int64_t bytes_ = 0;
};

// The content id of a user model, empty for a built-in.
const std::string& model_id(const ModelInfo& model);

// The model's definition as a JSON object (a user model's canonical definition); null for a
// built-in.
nlohmann::json model_definition_json(const ModelInfo& model);

}  // namespace ukes
