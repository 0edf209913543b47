// Bad requests get the right status code and name the offending field; limits are enforced at
// their boundary; none of it disturbs the server.
#include <grpcpp/health_check_service_interface.h>
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "grpc/health/v1/health.grpc.pb.h"
#include "tests/service/service_support.hpp"

namespace ukes::testing {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

constexpr const char* kSmallSpec = R"({"model": "pendulum_polar",
  "systems": [{}, {"params": {"L": 1.5}, "q0": [1.5, 0.3], "qd0": [0.0, 0.0]}],
  "integrator": {"method": "dopri5", "t_end": 1.0},
  "output": {"samples": 6, "trajectories": "all"}})";

struct BadRequest {
  std::string name;
  v1::SubmitJobRequest request;
  grpc::StatusCode code;
  std::string field;  // "" when the error is not about a field (full queue)
};

std::string trailing_field(const grpc::ClientContext& context) {
  const auto& md = context.GetServerTrailingMetadata();
  const auto it = md.find(kFieldMetadataKey);
  return it == md.end() ? "" : std::string(it->second.data(), it->second.size());
}

// SubmitJob fails with the expected code, a message "<field>: <reason>" and the field in the
// trailing metadata.
void expect_rejected(Stub& stub, const BadRequest& bad) {
  SCOPED_TRACE(bad.name);
  grpc::ClientContext context;
  set_deadline(context);
  v1::SubmitJobResponse response;
  const grpc::Status s = stub.SubmitJob(&context, bad.request, &response);
  EXPECT_EQ(s.error_code(), bad.code) << s.error_message();
  EXPECT_EQ(s.error_message().rfind(bad.field + ": ", 0), 0u) << s.error_message();
  EXPECT_EQ(trailing_field(context), bad.field);
  EXPECT_TRUE(response.job_id().empty());
}

v1::RunSpec duffing_typed() {
  v1::RunSpec s;
  s.set_model("duffing");
  s.mutable_integrator()->set_t_end(0.1);
  return s;
}

std::vector<BadRequest> invalid_requests() {
  const auto invalid = grpc::StatusCode::INVALID_ARGUMENT;
  std::vector<BadRequest> v;
  const auto json = [&](std::string name, std::string text, std::string field) {
    v.push_back({std::move(name), json_request(text), invalid, std::move(field)});
  };
  const auto typed = [&](std::string name, v1::RunSpec spec, std::string field) {
    v.push_back({std::move(name), typed_request(spec), invalid, std::move(field)});
  };
  json("unknown model", R"({"model": "no_such_model"})", "model");
  json("unknown parameter", R"({"model": "duffing", "params": {"k9": 1}})", "params.k9");
  json("unknown parameter of a system",
       R"({"model": "duffing", "systems": [{}, {"params": {"mass": 1}}]})",
       "systems[1].params.mass");
  json("q0 of the wrong length", R"({"model": "duffing", "systems": [{"q0": [1, 1, 1]}]})",
       "systems[0].q0");
  json("t_end equal to t0", R"({"model": "duffing", "integrator": {"t0": 1, "t_end": 1}})",
       "integrator.t_end");
  json("t_end before t0", R"({"model": "duffing", "integrator": {"t0": 1, "t_end": 0.5}})",
       "integrator.t_end");
  json("rtol zero", R"({"model": "duffing", "integrator": {"rtol": 0}})", "integrator.rtol");
  json("rtol negative", R"({"model": "duffing", "integrator": {"rtol": -1e-9}})",
       "integrator.rtol");
  json("unknown sampler",
       R"({"model": "duffing", "sweep": {"count": 4, "sampler": "halton",
           "vary": {"params.m1": {"uniform": [1, 2]}}}})",
       "sweep.sampler");
  json("unknown distribution",
       R"({"model": "duffing", "sweep": {"count": 4,
           "vary": {"params.m1": {"cauchy": [1, 2]}}}})",
       "sweep.vary.params.m1.cauchy");
  json("systems and sweep",
       R"({"model": "duffing", "systems": [{}], "sweep": {"count": 4,
           "vary": {"params.m1": {"uniform": [1, 2]}}}})",
       "sweep");
  json("invalid JSON", R"({"model": "duffing", )", "spec");
  json("JSON that is not an object", R"([1, 2])", "spec");

  v1::RunSpec nan_param = duffing_typed();
  (*nan_param.mutable_params())["k1"] = kNaN;
  typed("NaN parameter", nan_param, "params.k1");
  v1::RunSpec inf_system_param = duffing_typed();
  inf_system_param.add_systems();
  (*inf_system_param.add_systems()->mutable_params())["m1"] = kInf;
  typed("infinite parameter of a system", inf_system_param, "systems[1].params.m1");
  v1::RunSpec nan_q0 = duffing_typed();
  nan_q0.add_systems()->add_q0(1.0);
  nan_q0.mutable_systems(0)->add_q0(kNaN);
  typed("NaN initial position", nan_q0, "systems[0].q0[1]");
  v1::RunSpec inf_t_end = duffing_typed();
  inf_t_end.mutable_integrator()->set_t_end(kInf);
  typed("infinite t_end", inf_t_end, "integrator.t_end");
  v1::RunSpec nan_rtol = duffing_typed();
  nan_rtol.mutable_integrator()->set_rtol(kNaN);
  typed("NaN rtol", nan_rtol, "integrator.rtol");
  v1::RunSpec minus_inf_t0 = duffing_typed();
  minus_inf_t0.mutable_integrator()->set_t0(-kInf);
  typed("-inf t0", minus_inf_t0, "integrator.t0");

  v.push_back({"missing spec", v1::SubmitJobRequest(), invalid, "spec"});
  v.push_back({"negative timeout", json_request(kSmallSpec, -1.0), invalid, "timeout_s"});
  v.push_back({"NaN timeout", json_request(kSmallSpec, kNaN), invalid, "timeout_s"});
  return v;
}

class ErrorsTest : public SharedServerTest<ErrorsTest> {
 public:
  static std::vector<std::string> server_args() { return {}; }
};

class LimitsTest : public SharedServerTest<LimitsTest> {
 public:
  static std::vector<std::string> server_args() {
    return {"--max-systems", "1000", "--max-samples", "500", "--max-trajectory-mb", "1"};
  }
};

void expect_server_healthy(ServerProcess& server, Stub& stub) {
  EXPECT_TRUE(server.alive()) << server.log_text();
  auto health = grpc::health::v1::Health::NewStub(server.channel());
  grpc::ClientContext context;
  set_deadline(context);
  grpc::health::v1::HealthCheckRequest request;
  request.set_service("ukes.v1.UkesService");
  grpc::health::v1::HealthCheckResponse response;
  const grpc::Status s = health->Check(&context, request, &response);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(response.status(), grpc::health::v1::HealthCheckResponse::SERVING);
  expect_matches_in_process(simulate(stub, json_request(kSmallSpec)), kSmallSpec);
}

TEST_F(ErrorsTest, InvalidSpecsNameTheirField) {
  for (const auto& bad : invalid_requests()) expect_rejected(*stub_, bad);
  expect_server_healthy(*server_, *stub_);
}

// Field names are client text: bytes outside printable ASCII once went into the `ukes-field`
// metadata as they were, and gRPC aborted the server on the illegal header value.
TEST_F(ErrorsTest, FieldNamesOutsidePrintableAsciiAreEscaped) {
  const auto invalid = grpc::StatusCode::INVALID_ARGUMENT;
  std::vector<BadRequest> bad = {
      {"non-ASCII key", json_request(R"({"model": "duffing", "m\u00f6del": 1})"), invalid,
       R"(m\xc3\xb6del)"},
      {"tab in a key", json_request("{\"model\": \"duffing\", \"a\\tb\": 1}"), invalid,
       R"(a\x09b)"},
      {"newline in a key", json_request("{\"model\": \"duffing\", \"a\\nb\": 1}"), invalid,
       R"(a\x0ab)"},
      {"CJK parameter", json_request(R"({"model": "duffing", "params": {"\u4e2d": 1}})"), invalid,
       R"(params.\xe4\xb8\xad)"},
      {"backslash in a key", json_request(R"({"model": "duffing", "a\\b": 1})"), invalid,
       R"(a\\b)"},
  };
  v1::RunSpec nul_key = duffing_typed();
  (*nul_key.mutable_params())[std::string("k\0x", 3)] = 1.0;
  bad.push_back({"typed map key with a NUL", typed_request(nul_key), invalid, R"(params.k\x00x)"});
  for (const auto& b : bad) expect_rejected(*stub_, b);
  expect_server_healthy(*server_, *stub_);
}

// Whatever a request names, the reply quotes a bounded, printable part of it.
TEST_F(ErrorsTest, QuotedClientTextIsBounded) {
  const std::string long_key(1 << 20, 'k');
  grpc::ClientContext context;
  set_deadline(context);
  v1::SubmitJobResponse response;
  const grpc::Status s = stub_->SubmitJob(
      &context, json_request(R"({"model": "duffing", ")" + long_key + R"(": 1})"), &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message().size();
  EXPECT_LT(s.error_message().size(), 2048u);
  EXPECT_LT(trailing_field(context).size(), 512u);
  EXPECT_NE(trailing_field(context).find("more bytes"), std::string::npos);

  v1::GetJobResponse job;
  const grpc::Status unknown = get_job(*stub_, std::string(1 << 20, 'z'), &job);
  EXPECT_EQ(unknown.error_code(), grpc::StatusCode::NOT_FOUND) << unknown.error_message().size();
  EXPECT_LT(unknown.error_message().size(), 2048u);
  expect_server_healthy(*server_, *stub_);
}

// Requests that do not parse used to be answered UNIMPLEMENTED with no message (gRPC's callback
// API does that when deserialization fails); the service now parses them itself.
TEST_F(ErrorsTest, UnparsableRequestsAreInvalidArgument) {
  v1::SubmitJobRequest not_utf8 = json_request(R"({"model": "duffing"})");
  not_utf8.set_spec_json("{\"model\": \"duff\xffing\"}");
  v1::GetJobRequest id_not_utf8;
  id_not_utf8.set_job_id("j-\xc3(");
  const std::pair<std::string, std::string> requests[] = {
      {"SubmitJob", "\xff\xff\xff\xff"},
      {"SubmitJob", not_utf8.SerializeAsString()},
      {"Simulate", "\x0a\x05\x12"},  // a truncated length-delimited field
      {"GetJob", id_not_utf8.SerializeAsString()},
      {"CancelJob", id_not_utf8.SerializeAsString()},
      {"StreamJobResults", id_not_utf8.SerializeAsString()},
      {"DescribeModel", "\x0a\x02\xff\xfe"},
  };
  for (const auto& [method, bytes] : requests) {
    const grpc::Status s = raw_call(server_->channel(), method, bytes);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << method;
    EXPECT_EQ(s.error_message().rfind("request: not a valid ukes.v1.", 0), 0u)
        << method << ": " << s.error_message();
  }
  // Protobuf's complaint is a JSON log line like every other.
  EXPECT_FALSE(log_events(*server_, "protobuf").empty());
  std::istringstream log(server_->log_text());
  for (std::string line; std::getline(log, line);)
    EXPECT_TRUE(nlohmann::json::accept(line)) << line;
  expect_server_healthy(*server_, *stub_);
}

TEST_F(ErrorsTest, SimulateRejectsAnInvalidSpecBeforeAnyChunk) {
  grpc::ClientContext context;
  set_deadline(context);
  v1::SimulateRequest request;
  *request.mutable_job() = json_request(R"({"model": "duffing", "params": {"k9": 1}})");
  auto reader = stub_->Simulate(&context, request);
  const StreamResult r = read_all(*reader);
  EXPECT_EQ(r.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(r.status.error_message().rfind("params.k9: ", 0), 0u) << r.status.error_message();
  EXPECT_EQ(trailing_field(context), "params.k9");
  EXPECT_TRUE(r.chunks.empty());
}

TEST_F(ErrorsTest, UnknownJobsAndModelsAreNotFound) {
  const std::string unknown = "j-00000000deadbeef";
  v1::GetJobResponse job;
  EXPECT_EQ(get_job(*stub_, unknown, &job).error_code(), grpc::StatusCode::NOT_FOUND);
  v1::CancelJobResponse cancelled;
  EXPECT_EQ(cancel_job(*stub_, unknown, &cancelled).error_code(), grpc::StatusCode::NOT_FOUND);
  const StreamResult stream = stream_results(*stub_, unknown);
  EXPECT_EQ(stream.status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_TRUE(stream.chunks.empty());

  grpc::ClientContext context;
  set_deadline(context);
  v1::DescribeModelRequest request;
  request.set_name("no_such_model");
  v1::DescribeModelResponse model;
  EXPECT_EQ(stub_->DescribeModel(&context, request, &model).error_code(),
            grpc::StatusCode::NOT_FOUND);
  expect_server_healthy(*server_, *stub_);
}

TEST_F(ErrorsTest, ResumingPastTheEndOfAnEndedJobIsOutOfRange) {
  const StreamResult done = simulate(*stub_, json_request(kSmallSpec));
  ASSERT_TRUE(done.ended());
  const std::int64_t size = done.last()->sequence();
  const StreamResult past = stream_results(*stub_, done.job_id(), size + 1);
  EXPECT_EQ(past.status.error_code(), grpc::StatusCode::OUT_OF_RANGE)
      << past.status.error_message();
  EXPECT_TRUE(past.chunks.empty());
  // The last chunk alone is still there.
  const StreamResult last = stream_results(*stub_, done.job_id(), size - 1);
  ASSERT_TRUE(last.status.ok()) << last.status.error_message();
  ASSERT_EQ(last.chunks.size(), 1u);
  EXPECT_EQ(deterministic_bytes(last.chunks[0]), deterministic_bytes(*done.last()));
}

std::string duffing_sweep(int count, int samples, const std::string& trajectories) {
  return R"({"model": "duffing", "sweep": {"count": )" + std::to_string(count) +
         R"(, "vary": {"params.m1": {"uniform": [1.5, 2.5]}}},
             "integrator": {"method": "rk4", "t_end": 0.05, "dt": 0.005},
             "output": {"samples": )" +
         std::to_string(samples) + R"(, "trajectories": )" + trajectories + "}}";
}

// Duffing trajectories take 8 doubles per sample (q, qd, force: 2 each; 2 residual slots), so
// 1 MiB holds 16384 samples: 30 systems of 500 samples fit, 100 do not.
TEST_F(LimitsTest, RequestsOverTheLimitsAreResourceExhausted) {
  const auto exhausted = grpc::StatusCode::RESOURCE_EXHAUSTED;
  std::string many_systems = R"({"model": "duffing", "systems": [{})";
  for (int i = 1; i < 1001; ++i) many_systems += ", {}";
  many_systems += "]}";
  std::string hundred_ids = "[0";
  for (int i = 1; i < 100; ++i) hundred_ids += ", " + std::to_string(i);
  hundred_ids += "]";
  const std::vector<BadRequest> over = {
      {"sweep over max-systems", json_request(duffing_sweep(1001, 2, R"("none")")), exhausted,
       "sweep.count"},
      {"batch over max-systems", json_request(many_systems), exhausted, "systems"},
      {"samples over max-samples", json_request(duffing_sweep(10, 501, R"("none")")), exhausted,
       "output.samples"},
      {"trajectories over max-trajectory-mb",
       json_request(duffing_sweep(1000, 500, R"("first:100")")), exhausted, "output.trajectories"},
      {"listed trajectories over max-trajectory-mb",
       json_request(duffing_sweep(1000, 500, hundred_ids)), exhausted, "output.trajectories"},
  };
  for (const auto& bad : over) expect_rejected(*stub_, bad);

  grpc::ClientContext context;
  set_deadline(context);
  v1::GetServerInfoResponse info;
  ASSERT_TRUE(stub_->GetServerInfo(&context, v1::GetServerInfoRequest(), &info).ok());
  EXPECT_EQ(info.max_systems(), 1000);
  EXPECT_EQ(info.max_samples(), 500);
  EXPECT_EQ(info.max_trajectory_bytes(), std::int64_t{1} << 20);
}

TEST_F(LimitsTest, RequestsAtTheLimitsRun) {
  // 26 trajectories x 500 samples x 80 B (q, qd, force, control: 2 each; residual: 2) <= 1 MiB.
  const std::string at_limits = duffing_sweep(1000, 500, R"("first:26")");
  expect_matches_in_process(simulate(*stub_, json_request(at_limits)), at_limits);
  expect_server_healthy(*server_, *stub_);
}

}  // namespace
}  // namespace ukes::testing
