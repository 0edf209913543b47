// User models through the service: registered once and named by their content id, or sent inline;
// listed and described beside the catalogue; results that carry the definition; definitions with
// mistakes refused with the field and column, limits as RESOURCE_EXHAUSTED. ListModels in pages
// under 1 MiB however many large models are registered (once, one reply of 70 MB); a quota of
// registered models per principal, and DeleteModel to free it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "service/protocol/metadata.hpp"
#include "tests/service/service_support.hpp"
#include "tests/support/example_models.hpp"

namespace ukes::testing {
namespace {

class UserModelsTest : public SharedServerTest<UserModelsTest> {
 public:
  static std::vector<std::string> server_args() { return {"--threads", "1"}; }
};

grpc::Status register_model(Stub& stub, const std::string& definition,
                            v1::RegisterModelResponse* response, std::string* field = nullptr) {
  grpc::ClientContext context;
  set_deadline(context);
  v1::RegisterModelRequest request;
  request.set_definition_json(definition);
  const grpc::Status status = stub.RegisterModel(&context, request, response);
  if (field) {
    const auto& trailers = context.GetServerTrailingMetadata();
    const auto it = trailers.find(kFieldMetadataKey);
    *field = it == trailers.end() ? "" : std::string(it->second.data(), it->second.size());
  }
  return status;
}

std::string sweep_spec(const std::string& model_json) {
  return R"({"model": )" + model_json + R"(,
             "sweep": {"count": 40, "seed": 5, "vary": {"params.theta1": {"uniform": [0.5, 2.0]}}},
             "integrator": {"method": "rk4", "t_end": 1.0, "dt": 1e-3},
             "output": {"samples": 11, "trajectories": "first:3"}})";
}

TEST_F(UserModelsTest, RegisteredModelRunsByIdAndResultsCarryItsDefinition) {
  v1::RegisterModelResponse first, again;
  ASSERT_TRUE(
      register_model(*stub_, example_definition_text("double_pendulum_cartesian"), &first).ok());
  const std::string id = first.model_id();
  EXPECT_EQ(id.rfind("sha256:", 0), 0u) << id;
  EXPECT_EQ(first.model().name(), "double_pendulum_cartesian");
  EXPECT_EQ(first.model().n(), 4);
  EXPECT_EQ(first.model().position_rows(), 2);
  // The same definition, reformatted, is the same model.
  const auto reformatted =
      nlohmann::json::parse(example_definition_text("double_pendulum_cartesian")).dump(4);
  ASSERT_TRUE(register_model(*stub_, reformatted, &again).ok());
  EXPECT_EQ(again.model_id(), id);

  const StreamResult by_id = simulate(*stub_, json_request(sweep_spec("\"" + id + "\"")));
  // The run by id is the in-process run of the spec with the definition inline.
  const std::string inline_spec = sweep_spec(example_definition_text("double_pendulum_cartesian"));
  expect_matches_in_process(by_id, inline_spec);
  const auto header_spec = nlohmann::json::parse(by_id.chunks.front().header().spec_json());
  ASSERT_TRUE(header_spec["model"].is_object()) << "the header records the definition, not the id";
  EXPECT_EQ(header_spec["model"]["name"], "double_pendulum_cartesian");
  EXPECT_EQ(by_id.chunks.front().header().model().id(), id);
}

TEST_F(UserModelsTest, InlineDefinitionRunsInTypedAndJsonSpecs) {
  const std::string spec = sweep_spec(example_definition_text("double_pendulum_cartesian"));
  expect_matches_in_process(simulate(*stub_, json_request(spec)), spec);
  v1::RunSpec typed;
  typed.set_model_definition_json(example_definition_text("double_pendulum_cartesian"));
  typed.mutable_integrator()->set_method("rk4");
  typed.mutable_integrator()->set_t_end(0.5);
  const StreamResult stream = simulate(*stub_, typed_request(typed));
  ASSERT_TRUE(stream.status.ok()) << stream.status.error_message();
  EXPECT_EQ(stream.end_state(), v1::JOB_STATE_SUCCEEDED);
}

TEST_F(UserModelsTest, ListAndDescribeCoverRegisteredModels) {
  v1::RegisterModelResponse registered;
  ASSERT_TRUE(register_model(*stub_, example_definition_text("friction_ring"), &registered).ok());
  grpc::ClientContext list_context;
  set_deadline(list_context);
  v1::ListModelsResponse list;
  ASSERT_TRUE(stub_->ListModels(&list_context, v1::ListModelsRequest(), &list).ok());
  bool listed = false;
  for (const auto& m : list.models()) listed = listed || m.id() == registered.model_id();
  EXPECT_TRUE(listed);
  grpc::ClientContext describe_context;
  set_deadline(describe_context);
  v1::DescribeModelRequest request;
  request.set_name(registered.model_id());
  v1::DescribeModelResponse described;
  ASSERT_TRUE(stub_->DescribeModel(&describe_context, request, &described).ok());
  EXPECT_EQ(described.model().name(), "friction_ring_def");
  EXPECT_TRUE(described.model().nonideal());
  EXPECT_FALSE(described.model().definition_json().empty());
}

TEST_F(UserModelsTest, MistakesNameTheFieldAndColumn) {
  auto doc = nlohmann::json::parse(example_definition_text("double_pendulum_cartesian"));
  doc["force"][1] = "-m1 * gravity";
  v1::RegisterModelResponse response;
  std::string field;
  const grpc::Status status = register_model(*stub_, doc.dump(), &response, &field);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("gravity"), std::string::npos) << status.error_message();
  EXPECT_NE(status.error_message().find("column 7"), std::string::npos) << status.error_message();
  EXPECT_EQ(field, "definition.force[1]");

  // Unknown ids and bad inline definitions are refused before any work.
  const StreamResult unknown =
      simulate(*stub_, json_request(sweep_spec("\"sha256:" + std::string(64, '0') + "\"")));
  EXPECT_EQ(unknown.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(unknown.chunks.empty());
  doc["mass"] = {{"m1", 0}, {0, "m1"}};  // 2 x 2 for 4 coordinates
  const StreamResult bad = simulate(*stub_, json_request(sweep_spec(doc.dump())));
  EXPECT_EQ(bad.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(bad.status.error_message().find("model.mass"), std::string::npos)
      << bad.status.error_message();
}

TEST_F(UserModelsTest, OversizedDefinitionsAreResourceExhausted) {
  auto doc = nlohmann::json::parse(example_definition_text("double_pendulum_cartesian"));
  doc["description"] = std::string(std::size_t{2} << 20, 'x');
  v1::RegisterModelResponse response;
  std::string field;
  const grpc::Status status = register_model(*stub_, doc.dump(), &response, &field);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
  EXPECT_EQ(field, "definition_json");
}

class RegistryQuotaTest : public SharedServerTest<RegistryQuotaTest> {
 public:
  static std::vector<std::string> server_args() {
    return {"--threads", "1", "--max-models-per-principal", "24"};
  }
};

// A distinct definition of about 20 KB: the double pendulum under another name, with a long
// description and long (zero-valued) terms in its forces.
std::string large_definition(int k) {
  auto doc = nlohmann::json::parse(example_definition_text("double_pendulum_cartesian"));
  doc["name"] = "large_" + std::to_string(k);
  doc["description"] = std::string(4000, 'd');
  std::string zero = "0 * (m1";
  while (zero.size() < 3900) zero += " + m1";
  zero += ")";
  doc["force"][0] = zero;
  doc["force"][2] = zero;
  return doc.dump();
}

grpc::Status list_page(Stub& stub, const std::string& token, int page_size,
                       v1::ListModelsResponse* page) {
  grpc::ClientContext context;
  set_deadline(context);
  v1::ListModelsRequest request;
  request.set_page_token(token);
  request.set_page_size(page_size);
  return stub.ListModels(&context, request, page);
}

// Every model of every page, in order; each reply under 1 MiB.
std::vector<v1::Model> list_all(Stub& stub, int page_size) {
  std::vector<v1::Model> out;
  std::string token;
  do {
    v1::ListModelsResponse page;
    const grpc::Status status = list_page(stub, token, page_size, &page);
    EXPECT_TRUE(status.ok()) << status.error_message();
    if (!status.ok()) break;
    EXPECT_LT(page.ByteSizeLong(), std::size_t{1} << 20);
    EXPECT_LE(page.models_size(), page_size > 0 ? page_size : 100);
    for (const auto& m : page.models()) {
      EXPECT_TRUE(m.definition_json().empty()) << "DescribeModel carries definitions";
      out.push_back(m);
    }
    token = page.next_page_token();
  } while (!token.empty());
  return out;
}

TEST_F(RegistryQuotaTest, ListingPagesThroughEveryModelUnderOneMiBAndQuotasHoldUntilADelete) {
  std::vector<std::string> ids;
  for (int k = 0; k < 24; ++k) {
    v1::RegisterModelResponse registered;
    ASSERT_TRUE(register_model(*stub_, large_definition(k), &registered).ok()) << k;
    ids.push_back(registered.model_id());
  }
  const std::size_t catalogue = catalogue_info().size();
  for (const int page_size : {0, 7, 1}) {
    const auto listed = list_all(*stub_, page_size);
    ASSERT_EQ(listed.size(), catalogue + ids.size()) << "page size " << page_size;
    for (std::size_t k = 0; k < ids.size(); ++k)
      EXPECT_EQ(listed[catalogue + k].id(), ids[k]) << "registration order";
  }
  v1::ListModelsResponse page;
  EXPECT_EQ(list_page(*stub_, "not a token", 0, &page).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(list_page(*stub_, "", -1, &page).error_code(), grpc::StatusCode::INVALID_ARGUMENT);

  // The quota is full: the 25th is refused, naming it, until one is deleted.
  v1::RegisterModelResponse refused;
  const grpc::Status full = register_model(*stub_, large_definition(24), &refused);
  EXPECT_EQ(full.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(full.error_message().find("quota"), std::string::npos) << full.error_message();
  grpc::ClientContext context;
  set_deadline(context);
  v1::DeleteModelRequest remove;
  remove.set_model_id(ids[3]);
  v1::DeleteModelResponse removed;
  ASSERT_TRUE(stub_->DeleteModel(&context, remove, &removed).ok());
  grpc::ClientContext again;
  set_deadline(again);
  EXPECT_EQ(stub_->DeleteModel(&again, remove, &removed).error_code(), grpc::StatusCode::NOT_FOUND);
  const StreamResult by_deleted_id =
      simulate(*stub_, json_request(sweep_spec("\"" + ids[3] + "\"")));
  EXPECT_EQ(by_deleted_id.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(register_model(*stub_, large_definition(24), &refused).ok());
  EXPECT_EQ(list_all(*stub_, 0).size(), catalogue + ids.size());
}

}  // namespace
}  // namespace ukes::testing
