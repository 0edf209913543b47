// The registry of user models (service/runspec/model_source.hpp): each owner sees only what it
// registered, the same definition has the same content id in each owner's namespace, each owner
// has a quota of models and bytes, a registration or removal whose persistence fails changes
// nothing, and listing pages by registration order. Once, every principal saw, listed and ran
// every registered model, and one could fill the server-wide cap for all.
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "service/runspec/model_source.hpp"
#include "service/runspec/run_spec.hpp"
#include "support/example_models.hpp"

namespace ukes {
namespace {

// The double pendulum of the examples under another name: a distinct definition.
std::shared_ptr<const ModelInfo> model(const std::string& name) {
  auto doc = nlohmann::json::parse(example_definition_text("double_pendulum_cartesian"));
  doc["name"] = name;
  return user_model_from_json(doc, "definition");
}

TEST(ModelRegistry, EachOwnerSeesOnlyItsOwnModelsUnderContentIds) {
  ModelRegistry registry;
  const auto a = registry.add("alice", model("shared"));
  const auto only_alice = registry.add("alice", model("alice_only"));
  EXPECT_EQ(registry.find("alice", model_id(*a)), a);
  EXPECT_EQ(registry.find("bob", model_id(*a)), nullptr);
  EXPECT_EQ(registry.find("bob", model_id(*only_alice)), nullptr);
  EXPECT_TRUE(registry.list("bob", 0, 100).empty());
  // Bob registers the same definition: the same id, in his namespace, held once.
  const auto b = registry.add("bob", model("shared"));
  EXPECT_EQ(model_id(*b), model_id(*a));
  EXPECT_EQ(b, a);
  EXPECT_EQ(registry.list("bob", 0, 100).size(), 1u);
  // Removing it from one namespace leaves the other's.
  EXPECT_TRUE(registry.remove("alice", model_id(*a)));
  EXPECT_FALSE(registry.remove("alice", model_id(*a)));
  EXPECT_EQ(registry.find("alice", model_id(*a)), nullptr);
  EXPECT_EQ(registry.find("bob", model_id(*a)), b);
}

TEST(ModelRegistry, AnIdRunsOnlyForItsOwner) {
  ModelRegistry registry;
  const auto m = registry.add("alice", model("owned"));
  const nlohmann::json spec = {{"model", model_id(*m)}};
  ParseOptions options;
  options.models = &registry;
  options.model_owner = "alice";
  EXPECT_EQ(parse_run_spec(spec, options).model, m.get());
  options.model_owner = "bob";
  EXPECT_THROW(parse_run_spec(spec, options), SpecError);
}

TEST(ModelRegistry, QuotasArePerOwnerInModelsAndBytes) {
  ModelRegistry registry({/*max_models=*/2, /*max_bytes=*/std::int64_t{1} << 20});
  registry.add("alice", model("one"));
  registry.add("alice", model("two"));
  registry.add("alice", model("two"));  // already there: no quota used
  try {
    registry.add("alice", model("three"));
    ADD_FAILURE() << "over the quota";
  } catch (const LimitError& e) {
    EXPECT_EQ(e.field(), "definition");
    EXPECT_NE(std::string(e.what()).find("quota"), std::string::npos) << e.what();
  }
  EXPECT_NE(registry.add("bob", model("three")), nullptr) << "alice's quota is not bob's";
  const auto one = registry.list("alice", 0, 1).front().model;
  registry.remove("alice", model_id(*one));
  EXPECT_NE(registry.add("alice", model("three")), nullptr) << "a removal frees the quota";

  const auto bytes = static_cast<std::int64_t>(model("x")->user->definition.canonical_json.size());
  ModelRegistry small({/*max_models=*/100, /*max_bytes=*/bytes + bytes / 2});
  small.add("alice", model("y"));
  EXPECT_THROW(small.add("alice", model("z")), LimitError);
}

TEST(ModelRegistry, AFailedPersistenceChangesNothing) {
  ModelRegistry registry;
  const auto m = model("kept_out");
  EXPECT_THROW(registry.add("alice", m, [] { throw std::runtime_error("disk full"); }),
               std::runtime_error);
  EXPECT_EQ(registry.find("alice", model_id(*m)), nullptr);
  registry.add("alice", m);
  EXPECT_THROW(registry.remove("alice", model_id(*m), [] { throw std::runtime_error("no"); }),
               std::runtime_error);
  EXPECT_EQ(registry.find("alice", model_id(*m)), m);
}

TEST(ModelRegistry, ListingPagesInRegistrationOrder) {
  ModelRegistry registry;
  for (const char* name : {"m_c", "m_a", "m_b"}) registry.add("alice", model(name));
  registry.add("bob", model("m_z"));
  const auto first = registry.list("alice", 0, 2);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].model->name, "m_c");
  EXPECT_EQ(first[1].model->name, "m_a");
  const auto rest = registry.list("alice", first.back().order, 2);
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0].model->name, "m_b");
}

}  // namespace
}  // namespace ukes
