// Durable jobs (service/server/job_store.hpp) across a server killed with SIGKILL or stopped with
// SIGTERM and started again on the same --data-dir: finished jobs are served as they were, the
// running and queued ones run again and give what an uninterrupted run gives, a client that
// resumes its stream gets every chunk exactly once, cancels stay cancelled, expired jobs leave
// nothing in the store, a number changed on disk is never served, and a damaged store is refused
// rather than started afresh. Also: a --data-dir belongs to one live server at a time.
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "service/server/job_store.hpp"
#include "service_support.hpp"

namespace ukes::testing {
namespace {

namespace fs = std::filesystem;

// A directory that outlives the servers of one test.
class DataDirectory {
 public:
  DataDirectory() {
    std::string tmpl = (fs::temp_directory_path() / "ukes_restart_test_XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    root_ = tmpl;
  }
  ~DataDirectory() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  fs::path path() const { return root_ / "data"; }
  std::vector<std::string> flags(std::vector<std::string> more = {}) const {
    more.insert(more.begin(), {"--data-dir", path().string()});
    return more;
  }

 private:
  fs::path root_;
};

// Chunk for chunk the same messages (compared as messages: map fields serialize in any order).
void expect_same_chunks(const std::vector<Chunk>& got, const std::vector<Chunk>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t k = 0; k < got.size(); ++k)
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(got[k], want[k]))
        << "chunk " << k + 1 << " differs";
}

// Several slices of work (about two seconds on one thread), the trajectories of a few systems.
std::string running_spec() {
  std::string spec = long_sweep_spec(1500);
  spec.insert(spec.rfind('}'), R"(, "output": {"samples": 21, "trajectories": [3, 700, 1499]})");
  return spec;
}

constexpr const char* kShortSpec = R"({"model": "duffing",
  "sweep": {"count": 300, "seed": 5, "vary": {"params.m1": {"uniform": [1.5, 2.5]}}},
  "integrator": {"method": "rk4", "t_end": 1.0, "dt": 1e-3},
  "output": {"samples": 11, "trajectories": [0, 7]}})";

TEST(Restart, AfterKill9FinishedJobsAreServedAndTheOthersRunAgainExactlyOnce) {
  const DataDirectory data;
  const auto flags = data.flags({"--max-concurrent-jobs", "1", "--threads", "1"});
  std::string finished_id, running_id, queued_id, cancelled_id;
  std::vector<Chunk> finished_before, running_before;
  {
    ServerProcess first(flags, DataDir::kPrivate);
    auto stub = make_stub(first.channel());
    const StreamResult finished = simulate(*stub, json_request(kShortSpec));
    ASSERT_EQ(finished.end_state(), v1::JOB_STATE_SUCCEEDED);
    finished_id = finished.job_id();
    finished_before = finished.chunks;

    running_id = submit_ok(*stub, json_request(running_spec()));
    queued_id = submit_ok(*stub, json_request(kShortSpec));
    cancelled_id = submit_ok(*stub, json_request(kShortSpec));
    v1::CancelJobResponse cancelled;
    ASSERT_TRUE(cancel_job(*stub, cancelled_id, &cancelled).ok());
    ASSERT_EQ(cancelled.state(), v1::JOB_STATE_CANCELLED);
    // A client has part of the running job's results when the server dies.
    ASSERT_EQ(wait_running(*stub, running_id, 8).state(), v1::JOB_STATE_RUNNING);
    running_before = read_first(first, running_id, 6);
    ASSERT_EQ(running_before.size(), 6u);
    ::kill(first.pid(), SIGKILL);
    first.wait_exit(10);
  }

  ServerProcess second(flags, DataDir::kPrivate);
  auto stub = make_stub(second.channel());
  const auto recovered = log_events(second, "jobs_recovered");
  ASSERT_EQ(recovered.size(), 1u) << second.log_text();
  EXPECT_EQ(recovered[0].value("served", -1), 2);  // the finished and the cancelled job
  EXPECT_EQ(recovered[0].value("run_again", -1), 2);

  // The finished job: the very chunks it had.
  const StreamResult finished = stream_results(*stub, finished_id);
  expect_same_chunks(finished.chunks, finished_before);

  // The running job: the client resumes after what it had, and the whole is the uninterrupted
  // run's result with every sequence number once.
  const StreamResult rest =
      stream_results(*stub, running_id, running_before.back().sequence(), 120.0);
  StreamResult whole;
  whole.status = rest.status;
  whole.chunks = running_before;
  whole.chunks.insert(whole.chunks.end(), rest.chunks.begin(), rest.chunks.end());
  expect_matches_in_process(whole, running_spec());
  EXPECT_TRUE(log_events(second, "job_rerun_differs").empty()) << second.log_text();

  // The queued job runs; the cancelled one stays cancelled.
  expect_matches_in_process(stream_results(*stub, queued_id), kShortSpec);
  v1::GetJobResponse cancelled;
  ASSERT_TRUE(get_job(*stub, cancelled_id, &cancelled).ok());
  EXPECT_EQ(cancelled.state(), v1::JOB_STATE_CANCELLED);
  second.stop();
}

TEST(Restart, SigtermStopsDurableJobsWithoutEndingThemAndTheNextServerFinishesThem) {
  const DataDirectory data;
  const auto flags = data.flags({"--threads", "1"});
  std::string id;
  {
    ServerProcess first(flags, DataDir::kPrivate);
    auto stub = make_stub(first.channel());
    id = submit_ok(*stub, json_request(running_spec()));
    ASSERT_EQ(wait_running(*stub, id, 3).state(), v1::JOB_STATE_RUNNING);
    ASSERT_EQ(::kill(first.pid(), SIGTERM), 0);
    ASSERT_NE(first.wait_exit(10), -1);
    EXPECT_EQ(log_events(first, "job_suspended").size(), 1u) << first.log_text();
  }
  ServerProcess second(flags, DataDir::kPrivate);
  auto stub = make_stub(second.channel());
  expect_matches_in_process(stream_results(*stub, id, 0, 120.0), running_spec());
  second.stop();
}

TEST(Restart, ExpiredJobsLeaveNothingInTheStore) {
  const DataDirectory data;
  const auto flags = data.flags({"--result-ttl-s", "1"});
  std::string id;
  {
    ServerProcess first(flags, DataDir::kPrivate);
    auto stub = make_stub(first.channel());
    const StreamResult r = simulate(*stub, json_request(kShortSpec));
    ASSERT_EQ(r.end_state(), v1::JOB_STATE_SUCCEEDED);
    id = r.job_id();
    ::kill(first.pid(), SIGKILL);
    first.wait_exit(10);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // past the TTL while down
  {
    ServerProcess second(flags, DataDir::kPrivate);
    auto stub = make_stub(second.channel());
    v1::GetJobResponse job;
    EXPECT_EQ(get_job(*stub, id, &job).error_code(), grpc::StatusCode::NOT_FOUND);
    const auto recovered = log_events(second, "jobs_recovered");
    ASSERT_EQ(recovered.size(), 1u);
    EXPECT_EQ(recovered[0].value("expired", -1), 1);
    // A job that expires while the server runs goes from the store too.
    const StreamResult r = simulate(*stub, json_request(kShortSpec));
    ASSERT_EQ(r.end_state(), v1::JOB_STATE_SUCCEEDED);
    const auto t0 = std::chrono::steady_clock::now();
    while (get_job(*stub, r.job_id(), &job).ok() && seconds_since(t0) < 10.0)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_EQ(get_job(*stub, r.job_id(), &job).error_code(), grpc::StatusCode::NOT_FOUND);
    second.stop();
  }
  const server::JobStore store((data.path() / server::JobStore::kFileName).string());
  EXPECT_TRUE(store.jobs().empty());
  EXPECT_EQ(store.chunk_count(id), 0);
}

// The bytes of the first final q value in the job's first chunk of summaries.
std::string first_final_q_bytes(const std::vector<Chunk>& chunks) {
  for (const Chunk& c : chunks)
    if (c.has_summaries() && c.summaries().q_size() > 0) {
      const double q = c.summaries().q(0);
      return std::string(reinterpret_cast<const char*>(&q), sizeof q);
    }
  return {};
}

// Flips one bit of the stored number `bytes` in the database file, as a failing disk would.
void flip_stored_number(const fs::path& file, const std::string& bytes) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const std::size_t at = text.find(bytes);
  ASSERT_NE(at, std::string::npos) << "the number is not in the file";
  f.seekp(static_cast<std::streamoff>(at + 3));
  f.put(static_cast<char>(text[at + 3] ^ 0x01));
}

TEST(Restart, ANumberChangedOnDiskIsNeverServedTheJobComputesItAgain) {
  const DataDirectory data;
  const auto flags = data.flags({"--threads", "1"});
  std::string id;
  std::vector<Chunk> before;
  {
    ServerProcess first(flags, DataDir::kPrivate);
    auto stub = make_stub(first.channel());
    const StreamResult r = simulate(*stub, json_request(kShortSpec));
    ASSERT_EQ(r.end_state(), v1::JOB_STATE_SUCCEEDED);
    id = r.job_id();
    before = r.chunks;
    first.stop();  // SIGTERM: the WAL is checkpointed into the database file
  }
  flip_stored_number(data.path() / server::JobStore::kFileName, first_final_q_bytes(before));

  ServerProcess second(flags, DataDir::kPrivate);
  auto stub = make_stub(second.channel());
  const StreamResult after = stream_results(*stub, id, 0, 120.0);
  ASSERT_TRUE(after.status.ok()) << after.status.error_message();
  EXPECT_EQ(after.end_state(), v1::JOB_STATE_SUCCEEDED);
  ASSERT_EQ(after.chunks.size(), before.size());
  for (std::size_t k = 0; k < before.size(); ++k) {
    if (before[k].has_summaries() || before[k].has_trajectory() || before[k].has_statistics()) {
      EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(after.chunks[k], before[k]))
          << "chunk " << k + 1 << " differs";
    }
  }
  expect_matches_in_process(after, kShortSpec);
  EXPECT_EQ(log_events(second, "chunk_corrupt").size(), 1u) << second.log_text();
  second.stop();
}

TEST(Restart, ADamagedStoreIsRefusedWithOneLineUnlessSetAside) {
  const DataDirectory data;
  {
    ServerProcess first(data.flags(), DataDir::kPrivate);
    auto stub = make_stub(first.channel());
    ASSERT_EQ(simulate(*stub, json_request(kShortSpec)).end_state(), v1::JOB_STATE_SUCCEEDED);
    first.stop();
  }
  const fs::path file = data.path() / server::JobStore::kFileName;
  fs::resize_file(file, 0);  // once, silently treated as a new store: every job gone
  try {
    ServerProcess refused(data.flags(), DataDir::kPrivate);
    ADD_FAILURE() << "a server started on an empty job store file";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(file.string() + " is empty (0 bytes)"), std::string::npos) << what;
    EXPECT_NE(what.find("--set-aside-store"), std::string::npos) << what;
  }
  EXPECT_EQ(fs::file_size(file), 0u);
  ServerProcess aside(data.flags({"--set-aside-store"}), DataDir::kPrivate);
  ASSERT_EQ(log_events(aside, "store_set_aside").size(), 1u) << aside.log_text();
  const std::string moved = log_events(aside, "store_set_aside")[0].value("file", "");
  EXPECT_TRUE(fs::exists(moved)) << moved;
  auto stub = make_stub(aside.channel());
  EXPECT_EQ(simulate(*stub, json_request(kShortSpec)).end_state(), v1::JOB_STATE_SUCCEEDED);
  aside.stop();
}

TEST(Restart, ADataDirBelongsToOneLiveServerAndOutlivesAKilledOne) {
  const DataDirectory data;
  const auto flags = data.flags();
  {
    ServerProcess first(flags, DataDir::kPrivate);
    try {
      ServerProcess second(flags, DataDir::kPrivate);
      ADD_FAILURE() << "two servers started on one --data-dir";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("in use by another ukes-server"), std::string::npos)
          << e.what();
    }
    ::kill(first.pid(), SIGKILL);
    first.wait_exit(10);
  }
  // A spill file an older, memory-only server left there.
  std::ofstream(data.path() / "j-00112233445566778899aabbccddeeff.chunks") << "dead chunks";
  ServerProcess next(flags, DataDir::kPrivate);
  EXPECT_FALSE(fs::exists(data.path() / "j-00112233445566778899aabbccddeeff.chunks"));
  EXPECT_NE(next.log_text().find("\"orphans_removed\""), std::string::npos) << next.log_text();
  next.stop();
}

}  // namespace
}  // namespace ukes::testing
