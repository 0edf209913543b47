// Stored results are never served wrong (service/server/job_store.hpp, result_log.hpp): a chunk
// whose bytes changed in the job store, found while the server runs or when it starts, is never
// handed out; the job runs again from its stored spec and the chunk is replaced by the one it
// produces, equal to the original, while the job stays as it ended and its log does not grow. A
// job whose own record changed can no longer be trusted: it ends with DATA_LOSS. Once, a changed
// byte was served as a number of a SUCCEEDED job.
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "service/server/job_manager.hpp"

namespace ukes::server {
namespace {

namespace fs = std::filesystem;
using Chunk = v1::StreamJobResultsResponse;

class StoreRepairTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "ukes_repair_XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  ServerOptions options() const {
    ServerOptions o;
    o.data_dir = (dir_ / "data").string();
    o.max_concurrent_jobs = 1;
    o.threads = 1;
    o.device = Device::kCpu;
    o.chunk_target_s = 0.02;  // several slices
    return o;
  }

  // Runs `sql` on the store as another program would (checksums untouched).
  void change_store(const std::string& sql) const {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((dir_ / "data" / JobStore::kFileName).c_str(), &db), SQLITE_OK);
    char* error = nullptr;
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
        << (error != nullptr ? error : "");
    sqlite3_free(error);
    sqlite3_close(db);
  }

  fs::path dir_;
};

constexpr const char* kSpec = R"({"model": "duffing",
  "sweep": {"count": 400, "seed": 3, "vary": {"params.m1": {"uniform": [1.5, 2.5]}}},
  "integrator": {"method": "rk4", "t_end": 2.0, "dt": 1e-3},
  "output": {"samples": 11, "trajectories": [0, 5, 399]}})";

v1::SubmitJobRequest request(const std::string& spec) {
  v1::SubmitJobRequest r;
  r.set_spec_json(spec);
  return r;
}

template <class Ready>
bool wait_for(Ready ready, double seconds = 60.0) {
  const auto t0 = std::chrono::steady_clock::now();
  while (!ready()) {
    if (std::chrono::steady_clock::now() - t0 > std::chrono::duration<double>(seconds))
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

std::vector<Chunk> all_chunks(const Job& job) {
  std::vector<Chunk> out;
  for (std::int64_t s = 1; s <= job.log().size(); ++s) out.push_back(*job.log().get(s));
  return out;
}

// The sequence of the job's first chunk with per-system summaries.
std::int64_t first_summaries(const std::vector<Chunk>& chunks) {
  for (const Chunk& c : chunks)
    if (c.has_summaries()) return c.sequence();
  return 0;
}

// Changes one byte in the middle of the stored chunk, leaving its checksum as it was.
std::string corrupt_chunk_sql(const std::string& job, std::int64_t sequence) {
  const std::string where = " WHERE job = '" + job + "' AND sequence = " + std::to_string(sequence);
  return "UPDATE chunks SET data = substr(data, 1, length(data) / 2) || x'5a' || "
         "substr(data, length(data) / 2 + 2)" +
         where;
}

TEST_F(StoreRepairTest, AChunkFoundCorruptWhileServingIsRecomputedNotServed) {
  std::string id;
  std::vector<Chunk> before;
  {
    JobManager jobs(options());
    const auto job = jobs.submit(request(kSpec), "alice");
    ASSERT_TRUE(wait_for([&] { return job->ended(); }));
    ASSERT_EQ(job->state(), v1::JOB_STATE_SUCCEEDED);
    id = job->id();
    before = all_chunks(*job);
  }
  // A restarted server reads the finished job's chunks from the store, checked on every read;
  // the byte changes after the start's own check.
  JobManager jobs(options());
  const auto job = jobs.find(id);
  ASSERT_NE(job, nullptr);
  const std::int64_t bad = first_summaries(before);
  ASSERT_GT(bad, 1);
  change_store(corrupt_chunk_sql(id, bad));

  EXPECT_TRUE(job->log().get(bad) == nullptr) << "a corrupt chunk was handed out";
  ASSERT_TRUE(wait_for([&] { return job->log().get(bad) != nullptr; })) << "never repaired";
  EXPECT_TRUE(
      google::protobuf::util::MessageDifferencer::Equals(*job->log().get(bad), before[bad - 1]));
  EXPECT_EQ(job->state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(job->log().size(), static_cast<std::int64_t>(before.size())) << "the log grew";
  EXPECT_EQ(job->log().replay_mismatches(), 0);
  jobs.shutdown();
}

TEST_F(StoreRepairTest, ChunksFoundCorruptAtStartAreRecomputedAndJobsStayAsTheyEnded) {
  std::string done_id, cancelled_id;
  std::vector<Chunk> done_before, cancelled_before;
  {
    JobManager jobs(options());
    const auto done = jobs.submit(request(kSpec), "alice");
    ASSERT_TRUE(wait_for([&] { return done->ended(); }));
    const auto cancelled = jobs.submit(request(kSpec), "bob");
    ASSERT_TRUE(wait_for([&] { return cancelled->log().size() > 6; }));
    jobs.cancel(*cancelled);
    ASSERT_TRUE(wait_for([&] { return cancelled->ended(); }));
    done_id = done->id();
    cancelled_id = cancelled->id();
    done_before = all_chunks(*done);
    cancelled_before = all_chunks(*cancelled);
  }
  // The header, a slice and the statistics of the finished job; a slice of the cancelled one.
  change_store(corrupt_chunk_sql(done_id, 1));
  change_store(corrupt_chunk_sql(done_id, first_summaries(done_before)));
  change_store(corrupt_chunk_sql(done_id, static_cast<std::int64_t>(done_before.size()) - 1));
  change_store(corrupt_chunk_sql(cancelled_id, first_summaries(cancelled_before)));

  JobManager jobs(options());
  for (const auto& [id, before] :
       {std::pair{done_id, done_before}, std::pair{cancelled_id, cancelled_before}}) {
    const auto job = jobs.find(id);
    ASSERT_NE(job, nullptr);
    ASSERT_TRUE(wait_for([&] { return job->log().missing() == 0; })) << "never repaired";
    EXPECT_EQ(job->log().size(), static_cast<std::int64_t>(before.size())) << "the log grew";
    const std::vector<Chunk> after = all_chunks(*job);
    for (std::size_t k = 0; k < after.size(); ++k) {
      if (after[k].has_progress() || after[k].has_header() || after[k].has_end()) continue;
      EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(after[k], before[k]))
          << "chunk " << k + 1 << " of " << id;
    }
    EXPECT_TRUE(after.front().has_header());
    EXPECT_EQ(after.front().header().job_id(), id);
  }
  EXPECT_EQ(jobs.find(done_id)->state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(jobs.find(cancelled_id)->state(), v1::JOB_STATE_CANCELLED);
  jobs.shutdown();
}

TEST_F(StoreRepairTest, AJobWhoseRecordChangedEndsWithDataLoss) {
  std::string id;
  {
    JobManager jobs(options());
    const auto job = jobs.submit(request(kSpec), "alice");
    ASSERT_TRUE(wait_for([&] { return job->ended(); }));
    id = job->id();
  }
  change_store("UPDATE jobs SET spec_json = replace(spec_json, '400', '401')");
  JobManager jobs(options());
  const auto job = jobs.find(id);
  ASSERT_NE(job, nullptr);
  EXPECT_TRUE(job->data_lost());
  EXPECT_EQ(job->state(), v1::JOB_STATE_FAILED);
  EXPECT_NE(job->message().find("DATA_LOSS"), std::string::npos) << job->message();
  EXPECT_NE(job->message().find(id), std::string::npos) << job->message();
  EXPECT_TRUE(job->log().get(1) == nullptr) << "nothing of it is served";
  jobs.shutdown();
}

}  // namespace
}  // namespace ukes::server
