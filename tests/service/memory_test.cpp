// The server's memory stays bounded whatever clients ask: queued jobs cost their spec's text
// (inputs are built by the worker, a slice at a time), a job whose working memory exceeds the
// budget is refused up front, every accepted job's result header fits a stock client, and peak
// RSS stays within a stated factor of --memory-budget-mb under a slow reader and large
// trajectory jobs.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "service/server/job_runner.hpp"
#include "tests/service/service_support.hpp"

namespace ukes::testing {
namespace {

using std::chrono::steady_clock;

// A field of /proc/PID/status in bytes (VmRSS: resident now, VmHWM: the peak).
std::int64_t proc_status_bytes(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field + ":", 0) == 0) return std::stoll(line.substr(field.size() + 1)) * 1024;
  return -1;
}

// 9 * 10^6 duffing systems: their final results alone (104 B each) take about 0.9 GiB, just
// under the server's default memory budget.
std::string large_sweep(int seed) {
  return R"({"model": "duffing", "sweep": {"count": 9000000, "seed": )" + std::to_string(seed) +
         R"(, "vary": {"params.m1": {"uniform": [1.5, 2.5]}}}})";
}

// The slices of a job whose finals leave less room than the largest slices shrink to fit beside
// them (service/server/job_runner.hpp); a job too large even then stays over the budget.
TEST(JobMemory, ALargeJobsSlicesShrinkToFitItsBudget) {
  using server::job_memory, server::job_slice_bytes, server::slice_bytes_for;
  const std::int64_t budget = std::int64_t{1} << 30;
  const auto sweep = [](int count) {
    return parse_run_spec(nlohmann::json::parse(R"({"model": "duffing", "sweep": {"count": )" +
                                                std::to_string(count) + "}}"));
  };
  const RunSpec small = sweep(1000);
  EXPECT_EQ(job_slice_bytes(small, budget), slice_bytes_for(budget));
  const RunSpec large = sweep(9000000);
  EXPECT_GT(job_memory(large, slice_bytes_for(budget)).total(), budget);
  const std::int64_t slices = job_slice_bytes(large, budget);
  EXPECT_LT(slices, slice_bytes_for(budget));
  EXPECT_LE(job_memory(large, slices).total(), budget);
  const std::int64_t half = budget / 2;  // under the large job's finals alone
  EXPECT_GT(job_memory(large, job_slice_bytes(large, half)).total(), half);
}

class OneWorkerTest : public SharedServerTest<OneWorkerTest> {
 public:
  static std::vector<std::string> server_args() { return {"--max-concurrent-jobs", "1"}; }
};

// Four queued sweeps of 10^7 systems once took the server to 4.7 GB, built in the SubmitJob
// handler at 2-11 s a call, and kept it after they were cancelled.
TEST_F(OneWorkerTest, QueuedJobsCostOnlyTheirSpec) {
  const std::string endless = submit_ok(*stub_, json_request(kEndlessSystemSpec));
  ASSERT_EQ(wait_running(*stub_, endless, 0).state(), v1::JOB_STATE_RUNNING);
  const std::int64_t rss_before = proc_status_bytes(server_->pid(), "VmRSS");
  std::vector<std::string> queued;
  for (int k = 0; k < 4; ++k) {
    const auto t0 = steady_clock::now();
    queued.push_back(submit_ok(*stub_, json_request(large_sweep(k))));
    EXPECT_LT(seconds_since(t0), 0.5) << "SubmitJob " << k;
  }
  const std::int64_t rss_queued = proc_status_bytes(server_->pid(), "VmRSS");
  EXPECT_LT(rss_queued - rss_before, std::int64_t{16} << 20) << rss_before << " -> " << rss_queued;
  for (const auto& id : queued) {
    v1::CancelJobResponse r;
    ASSERT_TRUE(cancel_job(*stub_, id, &r).ok());
    EXPECT_EQ(r.state(), v1::JOB_STATE_CANCELLED);
  }
  v1::CancelJobResponse r;
  ASSERT_TRUE(cancel_job(*stub_, endless, &r).ok());
}

class SmallBudgetTest : public SharedServerTest<SmallBudgetTest> {
 public:
  static std::vector<std::string> server_args() { return {"--memory-budget-mb", "32"}; }
};

void expect_exhausted(Stub& stub, const std::string& spec, const std::string& field) {
  SCOPED_TRACE(field);
  v1::SubmitJobResponse response;
  grpc::ClientContext context;
  set_deadline(context);
  const grpc::Status s = stub.SubmitJob(&context, json_request(spec), &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  EXPECT_EQ(s.error_message().rfind(field + ": ", 0), 0u) << s.error_message();
}

TEST_F(SmallBudgetTest, JobsBeyondTheBudgetAreRefusedUpFront) {
  grpc::ClientContext context;
  set_deadline(context);
  v1::GetServerInfoResponse info;
  ASSERT_TRUE(stub_->GetServerInfo(&context, v1::GetServerInfoRequest(), &info).ok());
  EXPECT_EQ(info.memory_budget_bytes(), std::int64_t{32} << 20);

  // 10^6 Duffing systems' final values alone take about 100 MB.
  expect_exhausted(*stub_, R"({"model": "duffing", "sweep": {"count": 1000000}})", "sweep.count");
  // One trajectory of 10^6 samples of 8 fields: 64 MB.
  expect_exhausted(*stub_,
                   R"({"model": "duffing", "output": {"samples": 1000000, "trajectories": "all"}})",
                   "output.samples");
}

// Every accepted job's result header fits a stock gRPC client (4 MiB): the parts of it that grow
// with the spec are refused past 1 MiB each.
TEST_F(SmallBudgetTest, ResultHeadersStayReadable) {
  const std::string description(2 << 20, 'd');
  expect_exhausted(*stub_, R"({"model": "duffing", "description": ")" + description + R"("})",
                   "description");
  expect_exhausted(*stub_, R"({"model": "duffing", "output": {"samples": 200000}})",
                   "output.samples");
  // Just under each limit the job runs and its header arrives whole at the default 4 MiB.
  const std::string near_limits = R"({"model": "duffing", "description": ")" +
                                  std::string(900 << 10, 'd') +
                                  R"(", "integrator": {"method": "rk4", "t_end": 0.01, "dt": 1e-3},
      "output": {"samples": 100000}})";
  const StreamResult r = simulate(*stub_, json_request(near_limits));
  ASSERT_TRUE(r.status.ok()) << r.status.error_message();
  EXPECT_EQ(r.end_state(), v1::JOB_STATE_SUCCEEDED);
  ASSERT_FALSE(r.chunks.empty());
  EXPECT_LT(r.chunks.front().ByteSizeLong(), std::size_t{4} << 20);
}

// Peak RSS under a 32 MiB budget: a large trajectory job read by a slow client, beside a sweep
// whose final values fill most of its working memory. The bound (idle RSS + 2.5 budgets) is the
// one README states: results in memory and running jobs' working memory share the budget,
// plus what gRPC and the allocator hold beyond it.
TEST_F(SmallBudgetTest, PeakRssStaysWithinTheBudgetsFactor) {
  const std::int64_t budget = std::int64_t{32} << 20;
  const std::int64_t idle = proc_status_bytes(server_->pid(), "VmRSS");
  // 4000 systems x 2001 samples x 8 fields x 8 bytes: 512 MB of trajectories.
  const std::string trajectories = R"({"model": "duffing",
      "sweep": {"count": 4000, "vary": {"params.m1": {"uniform": [1.5, 2.5]}}},
      "integrator": {"method": "rk4", "t_end": 2.0, "dt": 1e-3},
      "output": {"samples": 2001, "trajectories": "all"}})";
  const std::string sweep = R"({"model": "duffing",
      "sweep": {"count": 150000, "vary": {"params.m1": {"uniform": [1.5, 2.5]}}},
      "integrator": {"method": "rk4", "t_end": 0.2, "dt": 1e-3}})";
  const std::string traj_id = submit_ok(*stub_, json_request(trajectories));
  const std::string sweep_id = submit_ok(*stub_, json_request(sweep));
  // The slow reader: one chunk every 5 ms.
  std::int64_t received = 0;
  grpc::ClientContext context;
  set_deadline(context, 300);
  v1::StreamJobResultsRequest request;
  request.set_job_id(traj_id);
  auto reader = stub_->StreamJobResults(&context, request);
  Chunk chunk;
  while (reader->Read(&chunk)) {
    received += static_cast<std::int64_t>(chunk.ByteSizeLong());
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_TRUE(reader->Finish().ok());
  EXPECT_EQ(chunk.end().state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_GT(received, std::int64_t{400} << 20);
  EXPECT_EQ(
      wait_for_job(*stub_, sweep_id,
                   [](const v1::GetJobResponse& j) { return j.state() == v1::JOB_STATE_SUCCEEDED; })
          .state(),
      v1::JOB_STATE_SUCCEEDED);
  const std::int64_t peak = proc_status_bytes(server_->pid(), "VmHWM");
  const auto mib = [](std::int64_t bytes) { return static_cast<double>(bytes) / 1048576.0; };
  std::printf(
      "[ memory   ] idle RSS %.1f MiB, peak %.1f MiB, budget %.1f MiB: peak - idle = "
      "%.2f budgets\n",
      mib(idle), mib(peak), mib(budget), mib(peak - idle) / mib(budget));
  EXPECT_LT(peak - idle, budget * 5 / 2);
}

// Each open result stream may hold one chunk (about 1 MiB) outside the budget, so their number
// is bounded: past --max-streams a stream is refused RESOURCE_EXHAUSTED with a retry hint (the
// CLI waits it out), and Simulate submits nothing.
class StreamLimitTest : public SharedServerTest<StreamLimitTest> {
 public:
  static std::vector<std::string> server_args() { return {"--max-streams", "2"}; }
};

TEST_F(StreamLimitTest, StreamsBeyondTheLimitAreRefusedUntilOneCloses) {
  const std::string endless = submit_ok(*stub_, json_request(kEndlessSystemSpec));
  v1::StreamJobResultsRequest request;
  request.set_job_id(endless);
  // Two streams that nobody reads.
  grpc::ClientContext first, second;
  auto first_reader = stub_->StreamJobResults(&first, request);
  auto second_reader = stub_->StreamJobResults(&second, request);
  Chunk header;
  ASSERT_TRUE(first_reader->Read(&header));
  ASSERT_TRUE(second_reader->Read(&header));

  grpc::ClientContext third;
  set_deadline(third);
  auto third_reader = stub_->StreamJobResults(&third, request);
  while (third_reader->Read(&header)) {
  }
  const grpc::Status refused = third_reader->Finish();
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << refused.error_message();
  EXPECT_EQ(refused.error_message().rfind("streams: ", 0), 0u) << refused.error_message();
  EXPECT_EQ(third.GetServerTrailingMetadata().count(kRetryAfterMetadataKey), 1u);
  const StreamResult simulated = simulate(*stub_, json_request(kEndlessSystemSpec));
  EXPECT_EQ(simulated.status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_TRUE(simulated.chunks.empty());

  // One closes: a new stream is served.
  first.TryCancel();
  while (first_reader->Read(&header)) {
  }
  first_reader->Finish();
  bool served = false;
  for (int attempt = 0; attempt < 100 && !served; ++attempt) {
    grpc::ClientContext again;
    set_deadline(again);
    auto reader = stub_->StreamJobResults(&again, request);
    served = reader->Read(&header);
    again.TryCancel();
    while (reader->Read(&header)) {
    }
    reader->Finish();
    if (!served) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(served);
  v1::CancelJobResponse cancelled;
  EXPECT_TRUE(cancel_job(*stub_, endless, &cancelled).ok());
  second.TryCancel();
  while (second_reader->Read(&header)) {
  }
  second_reader->Finish();
}

}  // namespace
}  // namespace ukes::testing
