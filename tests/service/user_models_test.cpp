// User models through the service: registered once and named by their content id, or sent inline;
// listed and described beside the catalogue; results that carry the definition; definitions with
// mistakes refused with the field and column, limits as RESOURCE_EXHAUSTED.
#include <gtest/gtest.h>

#include <string>

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

}  // namespace
}  // namespace ukes::testing
