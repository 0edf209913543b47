// What a client can learn before running anything: health, reflection, the model catalogue and
// the server's limits.
#include <google/protobuf/descriptor.pb.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "grpc/health/v1/health.grpc.pb.h"
#include "grpc/reflection/v1alpha/reflection.grpc.pb.h"
#include "kernels/models/model_info.hpp"
#include "service/engine/version.hpp"
#include "tests/service/service_support.hpp"

namespace ukes::testing {
namespace {

namespace health = grpc::health::v1;
namespace reflection = grpc::reflection::v1alpha;

class DiscoveryTest : public SharedServerTest<DiscoveryTest> {
 public:
  static std::vector<std::string> server_args() {
    return {"--max-concurrent-jobs", "3", "--max-queued-jobs", "7", "--threads", "1"};
  }
};

grpc::Status health_check(ServerProcess& server, const std::string& service,
                          health::HealthCheckResponse* response) {
  auto stub = health::Health::NewStub(server.channel());
  grpc::ClientContext context;
  set_deadline(context);
  health::HealthCheckRequest request;
  request.set_service(service);
  return stub->Check(&context, request, response);
}

TEST_F(DiscoveryTest, HealthSaysServingForTheServerAndTheService) {
  for (const char* service : {"", "ukes.v1.UkesService"}) {
    SCOPED_TRACE(std::string("service '") + service + "'");
    health::HealthCheckResponse response;
    const grpc::Status s = health_check(*server_, service, &response);
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(response.status(), health::HealthCheckResponse::SERVING);
  }
  health::HealthCheckResponse response;
  EXPECT_EQ(health_check(*server_, "no.such.Service", &response).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

// --health-port: the port its "listening" log line names, once it has one (0: none in time).
int logged_health_port(ServerProcess& server) {
  for (int tries = 0; tries < 500; ++tries) {
    const std::string log = server.log_text();
    const auto at = log.find("\"health_port\":");
    if (at != std::string::npos) return std::atoi(log.c_str() + at + 14);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return 0;
}

TEST(HealthPort, ServesHealthAloneInPlainText) {
  ServerProcess server({"--health-port", "0", "--threads", "1"});
  const int port = logged_health_port(server);
  ASSERT_GT(port, 0) << server.log_text();
  ASSERT_NE(port, server.port());
  const auto channel =
      grpc::CreateChannel("127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials());
  for (const char* service : {"", "ukes.v1.UkesService"}) {
    SCOPED_TRACE(std::string("service '") + service + "'");
    grpc::ClientContext context;
    set_deadline(context);
    health::HealthCheckRequest request;
    request.set_service(service);
    health::HealthCheckResponse response;
    const grpc::Status s = health::Health::NewStub(channel)->Check(&context, request, &response);
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(response.status(), health::HealthCheckResponse::SERVING);
  }
  // Nothing else is served there: no job can be submitted or read on the probe's port.
  grpc::ClientContext context;
  set_deadline(context);
  v1::GetServerInfoResponse info;
  EXPECT_EQ(v1::UkesService::NewStub(channel)
                ->GetServerInfo(&context, v1::GetServerInfoRequest{}, &info)
                .error_code(),
            grpc::StatusCode::UNIMPLEMENTED);
}

// One request/response exchange on the reflection stream.
reflection::ServerReflectionResponse reflect(ServerProcess& server,
                                             const reflection::ServerReflectionRequest& request) {
  auto stub = reflection::ServerReflection::NewStub(server.channel());
  grpc::ClientContext context;
  set_deadline(context);
  auto stream = stub->ServerReflectionInfo(&context);
  reflection::ServerReflectionResponse response;
  EXPECT_TRUE(stream->Write(request));
  EXPECT_TRUE(stream->WritesDone());
  EXPECT_TRUE(stream->Read(&response));
  reflection::ServerReflectionResponse extra;
  while (stream->Read(&extra)) {
  }
  const grpc::Status s = stream->Finish();
  EXPECT_TRUE(s.ok()) << s.error_message();
  return response;
}

TEST_F(DiscoveryTest, ReflectionListsTheServicesAndDescribesUkesService) {
  reflection::ServerReflectionRequest list;
  list.set_list_services("");
  const auto listed = reflect(*server_, list);
  ASSERT_TRUE(listed.has_list_services_response());
  std::vector<std::string> names;
  for (const auto& s : listed.list_services_response().service()) names.push_back(s.name());
  EXPECT_NE(std::find(names.begin(), names.end(), "ukes.v1.UkesService"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "grpc.health.v1.Health"), names.end());

  reflection::ServerReflectionRequest symbol;
  symbol.set_file_containing_symbol("ukes.v1.UkesService");
  const auto described = reflect(*server_, symbol);
  ASSERT_TRUE(described.has_file_descriptor_response());
  bool found = false;
  for (const auto& bytes : described.file_descriptor_response().file_descriptor_proto()) {
    google::protobuf::FileDescriptorProto file;
    ASSERT_TRUE(file.ParseFromString(bytes));
    if (file.package() != "ukes.v1") continue;
    for (const auto& service : file.service())
      if (service.name() == "UkesService") {
        found = true;
        std::vector<std::string> methods;
        for (const auto& m : service.method()) methods.push_back(m.name());
        for (const char* m :
             {"ListModels", "DescribeModel", "RegisterModel", "DeleteModel", "GetServerInfo",
              "SubmitJob", "StreamJobResults", "Simulate", "GetJob", "CancelJob"})
          EXPECT_NE(std::find(methods.begin(), methods.end(), m), methods.end()) << m;
      }
  }
  EXPECT_TRUE(found);
}

// A protocol model equals the catalogue's description, field by field.
void expect_model_is(const v1::Model& got, const ModelInfo& want) {
  SCOPED_TRACE(want.name);
  EXPECT_EQ(got.name(), want.name);
  EXPECT_EQ(got.source(), want.source);
  EXPECT_EQ(got.n(), want.n);
  EXPECT_EQ(got.position_rows(), want.position_rows);
  EXPECT_EQ(got.velocity_rows(), want.velocity_rows);
  EXPECT_EQ(got.nonideal(), want.nonideal);
  EXPECT_EQ(std::vector<std::string>(got.coordinates().begin(), got.coordinates().end()),
            want.coordinates);
  ASSERT_EQ(got.params_size(), static_cast<int>(want.params.size()));
  for (int k = 0; k < got.params_size(); ++k) {
    const auto& p = want.params[static_cast<std::size_t>(k)];
    EXPECT_EQ(got.params(k).name(), p.name);
    EXPECT_EQ(got.params(k).default_value(), p.value);
    EXPECT_EQ(got.params(k).structural(), p.structural);
  }
  EXPECT_EQ(got.t_end(), want.t_end);
  EXPECT_EQ(got.alpha(), want.gains.alpha);
  EXPECT_EQ(got.beta(), want.gains.beta);
  EXPECT_EQ(std::vector<double>(got.q0().begin(), got.q0().end()), want.q0);
  EXPECT_EQ(std::vector<double>(got.qd0().begin(), got.qd0().end()), want.qd0);
}

TEST_F(DiscoveryTest, ListModelsIsTheCatalogueInOrder) {
  grpc::ClientContext context;
  set_deadline(context);
  v1::ListModelsResponse response;
  ASSERT_TRUE(stub_->ListModels(&context, v1::ListModelsRequest(), &response).ok());
  const auto& catalogue = catalogue_info();
  ASSERT_EQ(catalogue.size(), 15u);
  ASSERT_EQ(response.models_size(), 15);
  for (int k = 0; k < response.models_size(); ++k)
    expect_model_is(response.models(k), catalogue[static_cast<std::size_t>(k)]);
}

TEST_F(DiscoveryTest, DescribeModelScara) {
  grpc::ClientContext context;
  set_deadline(context);
  v1::DescribeModelRequest request;
  request.set_name("scara");
  v1::DescribeModelResponse response;
  ASSERT_TRUE(stub_->DescribeModel(&context, request, &response).ok());
  const ModelInfo* scara = find_model("scara");
  ASSERT_NE(scara, nullptr);
  expect_model_is(response.model(), *scara);
}

TEST_F(DiscoveryTest, ServerInfoReportsItsFlags) {
  grpc::ClientContext context;
  set_deadline(context);
  v1::GetServerInfoResponse info;
  ASSERT_TRUE(stub_->GetServerInfo(&context, v1::GetServerInfoRequest(), &info).ok());
  EXPECT_EQ(info.version(), version());
  EXPECT_NE(std::find(info.backends().begin(), info.backends().end(), "cpu"),
            info.backends().end());
  EXPECT_EQ(info.max_concurrent_jobs(), 3);
  EXPECT_EQ(info.max_queued_jobs(), 7);
  EXPECT_EQ(info.cpu_threads(), 1);
  EXPECT_EQ(info.running_jobs(), 0);
  EXPECT_EQ(info.queued_jobs(), 0);
}

}  // namespace
}  // namespace ukes::testing
