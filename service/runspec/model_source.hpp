// Where a run spec's `model` comes from (docs/RUNSPEC.md, docs/MODEL_FORMAT.md): a catalogue
// name, an inline definition, or the content id of a definition registered with a server.
#pragma once

#include <cstdint>
#include <functional>
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

// User model `user` (ModelInfo::user set) with a controlled run's actuation matrix compiled into
// its program (docs/CONTROL.md); errors name fields under `path` ("control.actuation[1][0]").
std::shared_ptr<const ModelInfo> with_actuation_matrix(const ModelInfo& user,
                                                       const nlohmann::json& matrix,
                                                       const std::string& path);

// Whether `model` names a registered definition by its content id ("sha256:<64 hex>").
bool is_model_id(const std::string& model);

// The user models a server has been given, by owner and content id: a sweep of 10^6 systems
// names its model by id instead of resending it. Each principal (service/server/auth.hpp) sees
// only what it registered, under a quota of its own; the same definition registered by two
// principals has the same id in each one's namespace (and is held once). Thread-safe.
class ModelRegistry {
 public:
  struct Limits {  // per owner
    int max_models = 64;
    std::int64_t max_bytes = std::int64_t{16} << 20;  // canonical definition text
  };
  // A registered model and its place in registration order (which ListModels pages through).
  struct Entry {
    std::int64_t order = 0;
    std::shared_ptr<const ModelInfo> model;
  };

  ModelRegistry() : ModelRegistry(Limits{}) {}
  explicit ModelRegistry(Limits limits) : limits_(limits) {}

  // The owner's model with `model`'s content id, registering `model` if the owner has none:
  // then `persist` (if given) runs first, under the registry's lock, and what it throws leaves
  // the registry as it was. LimitError (field "definition") when the owner's quota is full.
  std::shared_ptr<const ModelInfo> add(const std::string& owner,
                                       std::shared_ptr<const ModelInfo> model,
                                       const std::function<void()>& persist = {});
  // Removes the owner's model `id` (after `persist`, as in add); false when it has none.
  bool remove(const std::string& owner, const std::string& id,
              const std::function<void()>& persist = {});
  // Null when the owner has no model with this id.
  std::shared_ptr<const ModelInfo> find(const std::string& owner, const std::string& id) const;
  // The owner's models registered after `after` (an Entry::order), in registration order, at
  // most `limit`.
  std::vector<Entry> list(const std::string& owner, std::int64_t after, std::size_t limit) const;
  const Limits& limits() const { return limits_; }

 private:
  struct Namespace {
    std::map<std::string, Entry> by_id;
    std::int64_t bytes = 0;
  };
  // Another owner's copy of the same definition, shared (null: none).
  std::shared_ptr<const ModelInfo> shared_copy(const std::string& id) const;

  Limits limits_;
  mutable std::mutex mutex_;
  std::map<std::string, Namespace> owners_;
  std::int64_t next_order_ = 1;
};

// The content id of a user model, empty for a built-in.
const std::string& model_id(const ModelInfo& model);

// The model's definition as a JSON object (a user model's canonical definition); null for a
// built-in.
nlohmann::json model_definition_json(const ModelInfo& model);

}  // namespace ukes
