// Job life cycle on a real server: cancelling running and queued jobs, timeouts, a full queue,
// results spilled to disk beyond the memory budget, and SIGTERM with a job running.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "tests/service/service_support.hpp"

namespace ukes::testing {
namespace {

namespace fs = std::filesystem;
using std::chrono::steady_clock;

// A job of about a second, to run beside others and be compared with in-process.
constexpr const char* kModerateSpec = R"({"model": "duffing",
  "sweep": {"count": 1500, "seed": 21, "vary": {"params.c1": {"uniform": [0.05, 0.2]}}},
  "integrator": {"method": "dopri5", "t_end": 5.0, "rtol": 1e-10, "atol": 1e-10},
  "output": {"samples": 11, "trajectories": "first:3"}})";

// Non-empty regular files anywhere under `dir` (spill files).
std::size_t files_under(const fs::path& dir) {
  std::size_t n = 0;
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(dir, ec))
    n += e.is_regular_file() && e.file_size() > 0;
  return n;
}

// ------------------------------------------------------------------ default limits, two workers

class JobsTest : public SharedServerTest<JobsTest> {
 public:
  static std::vector<std::string> server_args() { return {}; }
};

TEST_F(JobsTest, CancelStopsARunningJobPromptlyAndSparesTheOtherJob) {
  const std::string long_id = submit_ok(*stub_, json_request(long_sweep_spec()));
  const std::string other_id = submit_ok(*stub_, json_request(kModerateSpec));
  ASSERT_FALSE(long_id.empty());
  ASSERT_FALSE(other_id.empty());
  StreamResult other;
  std::thread other_client([&] {
    auto stub = make_stub(server_->channel());
    other = stream_results(*stub, other_id);
  });
  const JoinGuard join_other(other_client);
  // Both run at once, and the long one has published results.
  EXPECT_EQ(wait_running(*stub_, other_id).state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(wait_running(*stub_, long_id, 3).state(), v1::JOB_STATE_RUNNING);
  const std::vector<Chunk> before = read_first(*server_, long_id, 3);
  ASSERT_EQ(before.size(), 3u);

  const auto t0 = steady_clock::now();
  v1::CancelJobResponse cancelled;
  const grpc::Status s = cancel_job(*stub_, long_id, &cancelled);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_TRUE(cancelled.state() == v1::JOB_STATE_RUNNING ||
              cancelled.state() == v1::JOB_STATE_CANCELLED)
      << cancelled.state();
  const StreamResult stopped = stream_results(*stub_, long_id);
  const double stop_s = seconds_since(t0);
  ASSERT_TRUE(stopped.status.ok()) << stopped.status.error_message();
  EXPECT_EQ(stopped.end_state(), v1::JOB_STATE_CANCELLED);
  EXPECT_LT(stop_s, 2.0) << "the cancelled job took " << stop_s << " s to end";
  ASSERT_NO_FATAL_FAILURE(expect_well_formed_log(stopped.chunks));
  for (const auto& c : stopped.chunks) EXPECT_FALSE(c.has_statistics());
  // What was published before the cancellation is still there, unchanged.
  ASSERT_GE(stopped.chunks.size(), before.size() + 1);
  for (std::size_t k = 0; k < before.size(); ++k)
    EXPECT_EQ(deterministic_bytes(stopped.chunks[k]), deterministic_bytes(before[k]));

  v1::GetJobResponse job;
  ASSERT_TRUE(get_job(*stub_, long_id, &job).ok());
  EXPECT_EQ(job.state(), v1::JOB_STATE_CANCELLED);
  EXPECT_EQ(job.chunks(), static_cast<std::int64_t>(stopped.chunks.size()));

  other_client.join();
  expect_matches_in_process(other, kModerateSpec);
}

// A job submitted with timeout_s ends DEADLINE_EXCEEDED, not before the timeout and not long
// after it.
void expect_times_out(Stub& stub, const std::string& spec) {
  constexpr double kTimeoutS = 0.5;
  const auto t0 = steady_clock::now();
  const StreamResult r = simulate(stub, json_request(spec, kTimeoutS));
  const double elapsed = seconds_since(t0);
  ASSERT_TRUE(r.status.ok()) << r.status.error_message();
  ASSERT_NO_FATAL_FAILURE(expect_well_formed_log(r.chunks));
  EXPECT_EQ(r.end_state(), v1::JOB_STATE_DEADLINE_EXCEEDED);
  EXPECT_GE(elapsed, kTimeoutS);
  EXPECT_LT(elapsed, kTimeoutS + 2.5);
  v1::GetJobResponse job;
  ASSERT_TRUE(get_job(stub, r.job_id(), &job).ok());
  EXPECT_EQ(job.state(), v1::JOB_STATE_DEADLINE_EXCEEDED);
}

TEST_F(JobsTest, TimeoutEndsAJobOfManyShortSystems) { expect_times_out(*stub_, long_sweep_spec()); }

// Few systems, each integrating for a good fraction of a second (an undamped pendulum over 3000 s
// at tight tolerances): stopping has to happen within a batch of systems, not after it.
constexpr const char* kFewLongSystemsSpec = R"({"model": "pendulum_polar",
  "sweep": {"count": 64, "seed": 3, "vary": {"params.m": {"uniform": [0.9, 1.1]}}},
  "integrator": {"method": "dopri5", "t_end": 3000.0, "rtol": 1e-12, "atol": 1e-12}})";

TEST_F(JobsTest, TimeoutEndsAJobOfFewLongSystems) { expect_times_out(*stub_, kFewLongSystemsSpec); }

TEST_F(JobsTest, TimeoutEndsOneEndlessSystem) { expect_times_out(*stub_, kEndlessSystemSpec); }

TEST_F(JobsTest, CancelStopsAJobOfFewLongSystemsPromptly) {
  const std::string id = submit_ok(*stub_, json_request(kFewLongSystemsSpec));
  ASSERT_EQ(wait_running(*stub_, id).state(), v1::JOB_STATE_RUNNING);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // well into the first systems
  const auto t0 = steady_clock::now();
  v1::CancelJobResponse cancelled;
  ASSERT_TRUE(cancel_job(*stub_, id, &cancelled).ok());
  const StreamResult stopped = stream_results(*stub_, id);
  const double stop_s = seconds_since(t0);
  ASSERT_TRUE(stopped.status.ok()) << stopped.status.error_message();
  EXPECT_EQ(stopped.end_state(), v1::JOB_STATE_CANCELLED);
  EXPECT_LT(stop_s, 2.0) << "the cancelled job took " << stop_s << " s to end";
}

// ------------------------------------------------------------------ one worker, one queue slot

class SingleWorkerTest : public SharedServerTest<SingleWorkerTest> {
 public:
  static std::vector<std::string> server_args() {
    return {"--max-concurrent-jobs", "1", "--max-queued-jobs", "1"};
  }
};

TEST_F(SingleWorkerTest, QueuedJobCancelsAtOnceAndTheRunningJobIsUntouched) {
  const std::string running_id = submit_ok(*stub_, json_request(kModerateSpec));
  ASSERT_EQ(wait_running(*stub_, running_id).state(), v1::JOB_STATE_RUNNING);
  v1::SubmitJobResponse queued;
  ASSERT_TRUE(submit(*stub_, json_request(long_sweep_spec()), &queued).ok());
  EXPECT_EQ(queued.queue_position(), 1);

  v1::CancelJobResponse cancelled;
  ASSERT_TRUE(cancel_job(*stub_, queued.job_id(), &cancelled).ok());
  EXPECT_EQ(cancelled.state(), v1::JOB_STATE_CANCELLED);
  v1::GetJobResponse job;
  ASSERT_TRUE(get_job(*stub_, queued.job_id(), &job).ok());
  EXPECT_EQ(job.state(), v1::JOB_STATE_CANCELLED);
  EXPECT_EQ(job.queue_position(), 0);
  // Its log: the header and the end, nothing computed.
  const StreamResult log = stream_results(*stub_, queued.job_id());
  ASSERT_TRUE(log.status.ok()) << log.status.error_message();
  ASSERT_EQ(log.chunks.size(), 2u);
  EXPECT_TRUE(log.chunks[0].has_header());
  EXPECT_EQ(log.end_state(), v1::JOB_STATE_CANCELLED);

  expect_matches_in_process(stream_results(*stub_, running_id), kModerateSpec);
}

TEST_F(SingleWorkerTest, CancelStopsAnEndlessSystemAndTheQueuedJobRuns) {
  const std::string endless = submit_ok(*stub_, json_request(kEndlessSystemSpec));
  ASSERT_EQ(wait_running(*stub_, endless, 0).state(), v1::JOB_STATE_RUNNING);
  const std::string queued = submit_ok(*stub_, json_request(kModerateSpec));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const auto t0 = steady_clock::now();
  v1::CancelJobResponse cancelled;
  ASSERT_TRUE(cancel_job(*stub_, endless, &cancelled).ok());
  const v1::GetJobResponse ended = wait_for_job(*stub_, endless, [](const v1::GetJobResponse& r) {
    return r.state() != v1::JOB_STATE_RUNNING && r.state() != v1::JOB_STATE_QUEUED;
  });
  const double stop_s = seconds_since(t0);
  EXPECT_EQ(ended.state(), v1::JOB_STATE_CANCELLED);
  EXPECT_LT(stop_s, 0.5) << "the cancelled job took " << stop_s << " s to end";
  expect_matches_in_process(stream_results(*stub_, queued), kModerateSpec);
}

TEST_F(SingleWorkerTest, FullQueueIsResourceExhausted) {
  const std::string running_id = submit_ok(*stub_, json_request(long_sweep_spec()));
  ASSERT_EQ(wait_running(*stub_, running_id).state(), v1::JOB_STATE_RUNNING);
  const std::string queued_id = submit_ok(*stub_, json_request(long_sweep_spec()));
  v1::SubmitJobResponse rejected;
  const grpc::Status s = submit(*stub_, json_request(kModerateSpec), &rejected);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  // Simulate is refused the same way, before any chunk.
  const StreamResult simulated = simulate(*stub_, json_request(kModerateSpec));
  EXPECT_EQ(simulated.status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_TRUE(simulated.chunks.empty());

  grpc::ClientContext context;
  set_deadline(context);
  v1::GetServerInfoResponse info;
  ASSERT_TRUE(stub_->GetServerInfo(&context, v1::GetServerInfoRequest(), &info).ok());
  EXPECT_EQ(info.max_concurrent_jobs(), 1);
  EXPECT_EQ(info.max_queued_jobs(), 1);
  EXPECT_EQ(info.running_jobs(), 1);
  EXPECT_EQ(info.queued_jobs(), 1);

  v1::CancelJobResponse cancelled;
  ASSERT_TRUE(cancel_job(*stub_, queued_id, &cancelled).ok());
  ASSERT_TRUE(cancel_job(*stub_, running_id, &cancelled).ok());
  EXPECT_EQ(stream_results(*stub_, running_id).end_state(), v1::JOB_STATE_CANCELLED);
  EXPECT_EQ(stream_results(*stub_, queued_id).end_state(), v1::JOB_STATE_CANCELLED);
}

// ------------------------------------------------------------------ a 1 MiB memory budget

// Memory-only jobs (no --data-dir): results beyond the budget go to a spill file.
class SpillTest : public SharedServerTest<SpillTest> {
 public:
  static constexpr DataDir kDataDir = DataDir::kPrivate;
  static std::vector<std::string> server_args() {
    return {"--memory-budget-mb", "1", "--fetched-ttl-s", "3"};
  }
};

// About 6 MB of trajectories through a 1 MiB budget: they go to a spill file, come back intact,
// and the file goes when the fetched job expires.
TEST_F(SpillTest, ResultsBeyondTheBudgetAreSpilledAndComeBackIntact) {
  const std::string spec = R"({"model": "duffing",
    "sweep": {"count": 500, "seed": 9, "vary": {"params.m2": {"uniform": [0.8, 1.2]}}},
    "integrator": {"method": "dopri5", "t_end": 2.0},
    "output": {"samples": 201, "trajectories": "all"}})";
  Stub& stub = *stub_;
  const StreamResult r = simulate(stub, json_request(spec));
  EXPECT_GT(files_under(server_->tmpdir()), 0u) << "no spill file in " << server_->tmpdir();
  expect_matches_in_process(r, spec);

  std::int64_t spilled_bytes = -1;
  const auto t0 = steady_clock::now();
  while (spilled_bytes < 0 && seconds_since(t0) < 5.0) {
    for (const auto& e : log_events(*server_, "job_succeeded"))
      if (e.value("job", "") == r.job_id()) spilled_bytes = e.value("spilled_bytes", -1);
    if (spilled_bytes < 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_GT(spilled_bytes, 0) << server_->log_text();

  // Fetched, the job expires after --fetched-ttl-s and takes its spill file along.
  v1::GetJobResponse job;
  const auto t1 = steady_clock::now();
  while (get_job(stub, r.job_id(), &job).ok() && seconds_since(t1) < 15.0)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(get_job(stub, r.job_id(), &job).error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(files_under(server_->tmpdir()), 0u);
}

// ------------------------------------------------------------------ SIGTERM

// The long sweep with the trajectories of every system: a 32 MiB budget, most of it the job's
// working memory, leaves a few MiB for results, and it spills within a second.
std::string spilling_long_spec() {
  std::string spec = long_sweep_spec();
  spec.insert(spec.rfind('}'), R"(, "output": {"samples": 101, "trajectories": "all"})");
  return spec;
}

// Memory-only jobs end cancelled when the server stops (durable ones: restart_test.cpp).
TEST(ShutdownTest, SigtermEndsStreamsExitsZeroAndLeavesNoSpillFiles) {
  ServerProcess server({"--memory-budget-mb", "32"}, DataDir::kPrivate);
  auto stub = make_stub(server.channel());
  const std::string id = submit_ok(*stub, json_request(spilling_long_spec()));
  ASSERT_FALSE(id.empty());
  StreamResult stream;
  steady_clock::time_point stream_end;
  std::thread client([&] {
    auto s = make_stub(server.channel());
    stream = stream_results(*s, id);
    stream_end = steady_clock::now();
  });
  const JoinGuard join_client(client, [&] { server.stop(); });
  ASSERT_EQ(wait_running(*stub, id, 3).state(), v1::JOB_STATE_RUNNING);
  const auto t_spill = steady_clock::now();
  while (files_under(server.tmpdir()) == 0 && seconds_since(t_spill) < 10.0)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_GT(files_under(server.tmpdir()), 0u) << "the job never spilled";

  const auto t0 = steady_clock::now();
  ASSERT_EQ(kill(server.pid(), SIGTERM), 0);
  while (server.alive() && seconds_since(t0) < 8.0)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const double exit_s = seconds_since(t0);
  EXPECT_FALSE(server.alive()) << "still running " << exit_s << " s after SIGTERM";
  EXPECT_LT(exit_s, 5.0);
  const int status = server.stop();  // the status already reaped (or SIGKILL after 10 s)
  EXPECT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);

  client.join();
  EXPECT_LT(std::chrono::duration<double>(stream_end - t0).count(), 5.0)
      << "the open stream did not end with the server";
  if (stream.status.ok()) {
    EXPECT_TRUE(stream.ended());
    EXPECT_EQ(stream.end_state(), v1::JOB_STATE_CANCELLED);
  }
  EXPECT_FALSE(stream.chunks.empty());
  EXPECT_EQ(files_under(server.tmpdir()), 0u) << "spill files left after exit";
  const auto stopping = log_events(server, "stopping");
  ASSERT_EQ(stopping.size(), 1u);
  EXPECT_EQ(stopping[0].value("signal", ""), "SIGTERM");
  EXPECT_EQ(log_events(server, "stopped").size(), 1u);
}

TEST(ShutdownTest, SigtermStopsAnEndlessSystemPromptly) {
  ServerProcess server(std::vector<std::string>{});
  auto stub = make_stub(server.channel());
  const std::string id = submit_ok(*stub, json_request(kEndlessSystemSpec));
  ASSERT_EQ(wait_running(*stub, id, 0).state(), v1::JOB_STATE_RUNNING);
  const auto t0 = steady_clock::now();
  ASSERT_EQ(kill(server.pid(), SIGTERM), 0);
  const int status = server.wait_exit(5.0);
  const double exit_s = seconds_since(t0);
  ASSERT_NE(status, -1) << "still running 5 s after SIGTERM";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  // The job stops within milliseconds; gRPC then gives open calls up to 2 s to finish.
  EXPECT_LT(exit_s, 3.0) << server.log_text();
  // A durable job (the server has a --data-dir) stops without ending, for the next server.
  EXPECT_EQ(log_events(server, "job_suspended").size(), 1u) << server.log_text();
}

// Without --data-dir the server spills into a private directory of its own under $TMPDIR and
// removes it when SIGTERM stops it.
TEST(ShutdownTest, SigtermRemovesThePrivateDataDir) {
  ServerProcess server({"--memory-budget-mb", "32"}, DataDir::kPrivate);
  auto stub = make_stub(server.channel());
  const std::string id = submit_ok(*stub, json_request(spilling_long_spec()));
  ASSERT_FALSE(id.empty());
  ASSERT_EQ(wait_running(*stub, id, 3).state(), v1::JOB_STATE_RUNNING);
  const auto t_spill = steady_clock::now();
  while (files_under(server.tmpdir()) == 0 && seconds_since(t_spill) < 10.0)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_GT(files_under(server.tmpdir()), 0u) << "the job never spilled: " << server.log_text();
  std::size_t private_dirs = 0;
  for (const auto& e : fs::directory_iterator(server.tmpdir())) private_dirs += e.is_directory();
  EXPECT_EQ(private_dirs, 1u);

  ASSERT_EQ(kill(server.pid(), SIGTERM), 0);
  const int status = server.wait_exit(5.0);
  ASSERT_NE(status, -1) << "still running 5 s after SIGTERM";
  EXPECT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_TRUE(fs::is_empty(server.tmpdir())) << "left behind in " << server.tmpdir();
}

}  // namespace
}  // namespace ukes::testing
