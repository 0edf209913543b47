// Helpers for the end-to-end tests of ukes-server: gRPC calls with deadlines, whole result
// streams, the same spec run in-process as the reference, and exact (bitwise) comparisons of the
// two. Header-only.
#pragma once

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <future>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "service/engine/engine.hpp"
#include "service/protocol/metadata.hpp"
#include "service/protocol/result_assembler.hpp"
#include "service/runspec/run_spec.hpp"
#include "service/runspec/spec_text.hpp"
#include "support/server_process.hpp"
#include "ukes/v1/ukes.grpc.pb.h"
#include "ukes/v1/ukes.pb.h"

namespace ukes::testing {

using Chunk = v1::StreamJobResultsResponse;
using Stub = v1::UkesService::Stub;

// No single call in these tests should take long; a hang fails instead of blocking the suite.
inline constexpr double kCallDeadlineS = 60.0;

inline void set_deadline(grpc::ClientContext& context, double seconds = kCallDeadlineS) {
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000)));
}

inline std::unique_ptr<Stub> make_stub(const std::shared_ptr<grpc::Channel>& channel) {
  return v1::UkesService::NewStub(channel);
}

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// A test suite sharing one server, started with Derived::server_args() (CRTP: one server per
// suite class).
template <class Derived>
class SharedServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    try {
      server_ = std::make_unique<ServerProcess>(Derived::server_args(), Derived::kDataDir);
    } catch (const std::exception& e) {
      start_error_ = e.what();
    }
  }
  static void TearDownTestSuite() { server_.reset(); }
  void SetUp() override {
    ASSERT_NE(server_, nullptr) << start_error_;
    stub_ = make_stub(server_->channel());
  }

  // Where the server keeps jobs: a --data-dir (durable jobs) unless a suite says otherwise.
  static constexpr DataDir kDataDir = DataDir::kGiven;
  static inline std::unique_ptr<ServerProcess> server_;
  static inline std::string start_error_;
  std::unique_ptr<Stub> stub_;
};

// ------------------------------------------------------------------------------- requests

inline v1::SubmitJobRequest json_request(const std::string& spec_text, double timeout_s = 0.0) {
  v1::SubmitJobRequest r;
  r.set_spec_json(spec_text);
  r.set_timeout_s(timeout_s);
  return r;
}

inline v1::SubmitJobRequest typed_request(const v1::RunSpec& spec, double timeout_s = 0.0) {
  v1::SubmitJobRequest r;
  *r.mutable_run_spec() = spec;
  r.set_timeout_s(timeout_s);
  return r;
}

// A sweep of duffing systems that runs for many minutes: for cancellation, timeouts, full queues.
// One system of 10^15 RK4 steps: hours of work that only a check inside the step loop can stop
// (cancellation was once checked between systems only, and this job could not be stopped).
inline constexpr const char* kEndlessSystemSpec = R"({"model": "duffing",
  "integrator": {"method": "rk4", "dt": 1e-12, "max_steps": 1000000000000000}})";

inline std::string long_sweep_spec(int count = 200000) {
  return R"({"model": "duffing",
             "sweep": {"count": )" +
         std::to_string(count) + R"(, "seed": 3,
                       "vary": {"params.m1": {"uniform": [1.5, 2.5]}}},
             "integrator": {"method": "dopri5", "t_end": 50.0, "rtol": 1e-11, "atol": 1e-11}})";
}

// ------------------------------------------------------------------------------- calls

struct StreamResult {
  std::vector<Chunk> chunks;
  grpc::Status status;
  std::string job_id() const {
    return !chunks.empty() && chunks.front().has_header() ? chunks.front().header().job_id() : "";
  }
  const Chunk* last() const { return chunks.empty() ? nullptr : &chunks.back(); }
  bool ended() const { return last() != nullptr && last()->has_end(); }
  v1::JobState end_state() const {
    return ended() ? last()->end().state() : v1::JOB_STATE_UNSPECIFIED;
  }
};

inline StreamResult read_all(grpc::ClientReader<Chunk>& reader) {
  StreamResult r;
  Chunk c;
  while (reader.Read(&c)) r.chunks.push_back(c);
  r.status = reader.Finish();
  return r;
}

inline StreamResult simulate(Stub& stub, const v1::SubmitJobRequest& job,
                             double deadline_s = kCallDeadlineS) {
  grpc::ClientContext context;
  set_deadline(context, deadline_s);
  v1::SimulateRequest request;
  *request.mutable_job() = job;
  auto reader = stub.Simulate(&context, request);
  return read_all(*reader);
}

// `bytes` sent as the request of ukes.v1.UkesService/`method`, whatever they are (a unary call,
// also to the streaming methods: an error status ends it before any message); the call's status.
inline grpc::Status raw_call(const std::shared_ptr<grpc::Channel>& channel,
                             const std::string& method, const std::string& bytes) {
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  set_deadline(context);
  grpc::Slice slice(bytes);
  const grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  std::promise<grpc::Status> done;
  stub.UnaryCall(&context, "/ukes.v1.UkesService/" + method, grpc::StubOptions(), &request,
                 &response, [&done](grpc::Status s) { done.set_value(std::move(s)); });
  return done.get_future().get();
}

inline StreamResult stream_results(Stub& stub, const std::string& job_id,
                                   std::int64_t resume_after = 0,
                                   double deadline_s = kCallDeadlineS) {
  grpc::ClientContext context;
  set_deadline(context, deadline_s);
  v1::StreamJobResultsRequest request;
  request.set_job_id(job_id);
  request.set_resume_after(resume_after);
  auto reader = stub.StreamJobResults(&context, request);
  return read_all(*reader);
}

// Reads the first `n` chunks of a job's stream, then cancels the call (a client going away).
inline std::vector<Chunk> read_first(const ServerProcess& server, const std::string& id,
                                     std::size_t n) {
  auto stub = make_stub(server.channel());
  grpc::ClientContext context;
  set_deadline(context);
  v1::StreamJobResultsRequest request;
  request.set_job_id(id);
  auto reader = stub->StreamJobResults(&context, request);
  std::vector<Chunk> out;
  Chunk c;
  while (out.size() < n && reader->Read(&c)) out.push_back(c);
  context.TryCancel();
  reader->Finish();
  return out;
}

inline grpc::Status submit(Stub& stub, const v1::SubmitJobRequest& request,
                           v1::SubmitJobResponse* response) {
  grpc::ClientContext context;
  set_deadline(context);
  return stub.SubmitJob(&context, request, response);
}

// Submits and returns the job id (empty on failure, with the failure recorded).
inline std::string submit_ok(Stub& stub, const v1::SubmitJobRequest& request) {
  v1::SubmitJobResponse response;
  const grpc::Status s = submit(stub, request, &response);
  EXPECT_TRUE(s.ok()) << s.error_code() << " " << s.error_message();
  EXPECT_FALSE(response.job_id().empty());
  return response.job_id();
}

inline grpc::Status get_job(Stub& stub, const std::string& id, v1::GetJobResponse* response) {
  grpc::ClientContext context;
  set_deadline(context);
  v1::GetJobRequest request;
  request.set_job_id(id);
  return stub.GetJob(&context, request, response);
}

inline grpc::Status cancel_job(Stub& stub, const std::string& id, v1::CancelJobResponse* response) {
  grpc::ClientContext context;
  set_deadline(context);
  v1::CancelJobRequest request;
  request.set_job_id(id);
  return stub.CancelJob(&context, request, response);
}

// Polls GetJob until `done(response)` or the timeout; returns the last response seen.
inline v1::GetJobResponse wait_for_job(Stub& stub, const std::string& id,
                                       const std::function<bool(const v1::GetJobResponse&)>& done,
                                       double timeout_s = 30.0) {
  const auto t0 = std::chrono::steady_clock::now();
  v1::GetJobResponse r;
  for (;;) {
    r.Clear();
    const grpc::Status s = get_job(stub, id, &r);
    EXPECT_TRUE(s.ok()) << s.error_message();
    if (!s.ok() || done(r) || seconds_since(t0) > timeout_s) return r;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// Waits until the job runs and has published at least `chunks` chunks.
inline v1::GetJobResponse wait_running(Stub& stub, const std::string& id, std::int64_t chunks = 1) {
  return wait_for_job(stub, id, [&](const v1::GetJobResponse& r) {
    return r.state() == v1::JOB_STATE_RUNNING && r.chunks() >= chunks;
  });
}

// Joins a thread when the scope ends, also when an assertion returns early (a joinable
// std::thread would terminate the test binary); `before` runs first to unblock it.
class JoinGuard {
 public:
  explicit JoinGuard(std::thread& thread, std::function<void()> before = {})
      : thread_(thread), before_(std::move(before)) {}
  ~JoinGuard() {
    if (!thread_.joinable()) return;
    if (before_) before_();
    thread_.join();
  }
  JoinGuard(const JoinGuard&) = delete;
  JoinGuard& operator=(const JoinGuard&) = delete;

 private:
  std::thread& thread_;
  std::function<void()> before_;
};

// ------------------------------------------------------------------------------- in-process

inline RunSpec parse_in_process(const std::string& spec_text) {
  return parse_run_spec(parse_spec_text(spec_text));
}

inline RunOutcome run_in_process(const std::string& spec_text) {
  return execute(parse_in_process(spec_text));
}

// Serialized with a fixed order of map entries, so equal messages give equal bytes.
inline std::string deterministic_bytes(const google::protobuf::Message& m) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream raw(&out);
    google::protobuf::io::CodedOutputStream coded(&raw);
    coded.SetSerializationDeterministic(true);
    m.SerializeToCodedStream(&coded);
  }
  return out;
}

// ------------------------------------------------------------------------------- checks

template <class T>
::testing::AssertionResult bitwise_equal(const std::string& what, const std::vector<T>& got,
                                         const std::vector<T>& want) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure()
           << what << ": " << got.size() << " values, expected " << want.size();
  for (std::size_t i = 0; i < got.size(); ++i)
    if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0) {
      std::ostringstream os;
      os.precision(17);
      os << what << "[" << i << "] = " << got[i] << ", expected " << want[i];
      return ::testing::AssertionFailure() << os.str();
    }
  return ::testing::AssertionSuccess();
}

inline ::testing::AssertionResult same_summary(const std::string& what, const Summary& got,
                                               const Summary& want) {
  const std::vector<double> g = {got.min, got.max, got.mean, got.std, got.p50, got.p95, got.p99};
  const std::vector<double> w = {want.min, want.max, want.mean, want.std,
                                 want.p50, want.p95, want.p99};
  if (got.count != want.count)
    return ::testing::AssertionFailure()
           << what << ".count = " << got.count << ", expected " << want.count;
  return bitwise_equal(what + " (min max mean std p50 p95 p99)", g, w);
}

inline void expect_same_statistics(const EnsembleStatistics& got, const EnsembleStatistics& want) {
  EXPECT_EQ(got.count, want.count);
  EXPECT_EQ(got.ok, want.ok);
  EXPECT_EQ(got.failed, want.failed);
  EXPECT_EQ(got.by_status, want.by_status);
  const auto same_list = [](const std::string& what, const std::vector<Summary>& g,
                            const std::vector<Summary>& w) {
    ASSERT_EQ(g.size(), w.size()) << what;
    for (std::size_t k = 0; k < g.size(); ++k)
      EXPECT_TRUE(same_summary(what + "[" + std::to_string(k) + "]", g[k], w[k]));
  };
  same_list("statistics.q", got.q, want.q);
  same_list("statistics.qd", got.qd, want.qd);
  same_list("statistics.residual_max", got.residual, want.residual);
#define UKES_SAME_SCALAR(name, encoding) \
  EXPECT_TRUE(same_summary("statistics." #name, got.name, want.name));
  UKES_SUMMARIZED_SCALARS(UKES_SAME_SCALAR)
#undef UKES_SAME_SCALAR
}

// Per-system final values and the recorded trajectories (the fields `output` asks for).
inline void expect_same_results(const BatchResults& got, const BatchResults& want,
                                const OutputSpec& output) {
  ASSERT_EQ(got.count, want.count);
  ASSERT_EQ(got.n, want.n);
  ASSERT_EQ(got.residual_slots, want.residual_slots);
  EXPECT_TRUE(bitwise_equal("status", got.status, want.status));
  EXPECT_TRUE(bitwise_equal("t", got.t, want.t));
  EXPECT_TRUE(bitwise_equal("q", got.q, want.q));
  EXPECT_TRUE(bitwise_equal("qd", got.qd, want.qd));
  EXPECT_TRUE(bitwise_equal("residual_max", got.residual_max, want.residual_max));
  EXPECT_TRUE(bitwise_equal("force_max", got.force_max, want.force_max));
  EXPECT_TRUE(bitwise_equal("inconsistency_max", got.inconsistency_max, want.inconsistency_max));
  EXPECT_TRUE(bitwise_equal("steps", got.steps, want.steps));
  EXPECT_TRUE(bitwise_equal("rejected", got.rejected, want.rejected));
  EXPECT_EQ(got.samples, want.samples);
  EXPECT_EQ(got.traj_ids, want.traj_ids);
  const auto same_field = [&](bool wanted, const char* what, const std::vector<double>& g,
                              const std::vector<double>& w) {
    if (!wanted) return;  // not carried by the stream
    EXPECT_TRUE(bitwise_equal(what, g, w));
  };
  same_field(output.q, "traj_q", got.traj_q, want.traj_q);
  same_field(output.qd, "traj_qd", got.traj_qd, want.traj_qd);
  same_field(output.residual, "traj_residual", got.traj_residual, want.traj_residual);
  same_field(output.force, "traj_force", got.traj_force, want.traj_force);
}

// The log's shape: sequences 1..N, the header first (with the job id), then groups of summaries,
// trajectories and one progress chunk, then statistics (for a job that succeeded), JobEnd last.
inline void expect_well_formed_log(const std::vector<Chunk>& chunks) {
  ASSERT_GE(chunks.size(), 2u);
  for (std::size_t k = 0; k < chunks.size(); ++k)
    ASSERT_EQ(chunks[k].sequence(), static_cast<std::int64_t>(k) + 1) << "chunk " << k;
  ASSERT_TRUE(chunks.front().has_header());
  EXPECT_FALSE(chunks.front().header().job_id().empty());
  ASSERT_TRUE(chunks.back().has_end());
  const bool succeeded = chunks.back().end().state() == v1::JOB_STATE_SUCCEEDED;
  const std::size_t body_end = chunks.size() - (succeeded ? 2 : 1);
  if (succeeded) {
    EXPECT_TRUE(chunks[body_end].has_statistics());
  }
  bool trajectories_seen = false;  // within the current engine chunk
  for (std::size_t k = 1; k < body_end; ++k) {
    const Chunk& c = chunks[k];
    if (c.has_summaries()) {
      EXPECT_FALSE(trajectories_seen) << "summaries after trajectories at sequence " << k + 1;
    } else if (c.has_trajectory()) {
      trajectories_seen = true;
    } else if (c.has_progress()) {
      trajectories_seen = false;
    } else {
      ADD_FAILURE() << "unexpected payload " << c.payload_case() << " at sequence " << k + 1;
    }
  }
  if (succeeded && body_end > 1) {
    EXPECT_TRUE(chunks[body_end - 1].has_progress());
  }
}

// Feeds a whole stream to a ResultAssembler (which checks order and shapes).
inline std::unique_ptr<ResultAssembler> assemble(const std::vector<Chunk>& chunks) {
  auto a = std::make_unique<ResultAssembler>();
  for (const auto& c : chunks) a->add(c);
  return a;
}

// A successful stream carries exactly what the in-process run of the same spec produces.
inline void expect_matches_in_process(const StreamResult& stream, const std::string& spec_text) {
  ASSERT_TRUE(stream.status.ok()) << stream.status.error_code() << " "
                                  << stream.status.error_message();
  ASSERT_NO_FATAL_FAILURE(expect_well_formed_log(stream.chunks));
  ASSERT_EQ(stream.end_state(), v1::JOB_STATE_SUCCEEDED) << stream.last()->end().message();
  std::unique_ptr<ResultAssembler> got;
  ASSERT_NO_THROW(got = assemble(stream.chunks));
  ASSERT_TRUE(got->finished());
  ASSERT_TRUE(got->has_statistics());
  const RunSpec spec = parse_in_process(spec_text);
  const RunOutcome want = execute(spec);
  const v1::JobHeader& h = got->header();
  EXPECT_EQ(h.count(), spec.batch.count);
  EXPECT_EQ(std::vector<double>(h.sample_times().begin(), h.sample_times().end()),
            sample_times(spec.settings));
  EXPECT_EQ(std::vector<std::int32_t>(h.trajectory_ids().begin(), h.trajectory_ids().end()),
            spec.output.trajectory_ids);
  EXPECT_EQ(got->systems_received(), spec.batch.count);
  expect_same_results(got->outcome().results, want.results, spec.output);
  expect_same_statistics(got->outcome().statistics, want.statistics);
}

// ------------------------------------------------------------------------------- server log

// The JSON lines of the server's log whose "event" is `event`.
inline std::vector<nlohmann::json> log_events(const ServerProcess& server,
                                              const std::string& event) {
  std::vector<nlohmann::json> out;
  std::istringstream in(server.log_text());
  std::string line;
  while (std::getline(in, line)) {
    const auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_object() && j.value("event", "") == event) out.push_back(j);
  }
  return out;
}

}  // namespace ukes::testing
