// The job store (service/server/job_store.hpp): an SQLite file in WAL mode that gives back what
// was stored, in order, after it is closed and reopened; stores a slice's chunks all or none;
// removes chunks no job owns when it opens; forgets a removed job entirely; and refuses a file
// from a newer layout.
#include "service/server/job_store.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

namespace ukes::server {
namespace {

namespace fs = std::filesystem;

class JobStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "ukes_store_XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path() const { return (dir_ / JobStore::kFileName).string(); }

  // Runs one statement on the file with SQLite directly (as another program would).
  std::string query(const std::string& sql) const {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open(path().c_str(), &db), SQLITE_OK);
    std::string out;
    sqlite3_exec(
        db, sql.c_str(),
        [](void* to, int, char** values, char**) {
          *static_cast<std::string*>(to) += values[0] != nullptr ? values[0] : "NULL";
          return 0;
        },
        &out, nullptr);
    sqlite3_close(db);
    return out;
  }

  fs::path dir_;
};

StoredJob job(const std::string& id, const std::string& owner) {
  StoredJob j;
  j.id = id;
  j.owner = owner;
  j.spec_json = R"({"model": "duffing"})";
  j.timeout_s = 2.5;
  j.system_summaries = false;
  j.submitted_at = 1.7e9;
  return j;
}

std::vector<StoredChunk> chunks(std::int64_t first, int count, int kind) {
  std::vector<StoredChunk> out;
  for (int k = 0; k < count; ++k)
    out.push_back({first + k, kind, "chunk " + std::to_string(first + k) + std::string(1, '\0')});
  return out;
}

TEST_F(JobStoreTest, WhatIsStoredComesBackAfterReopeningInOrder) {
  {
    JobStore store(path());
    store.add_job(job("j-b", "alice"));
    store.add_job(job("j-a", "bob"));
    store.put_chunks("j-b", chunks(1, 3, 7));
    store.put_chunks("j-b", chunks(4, 2, 9));
    store.set_ended_at("j-b", 1.7e9 + 10);
    store.set_fetched_at("j-b", 1.7e9 + 20);
    store.set_cancel_requested("j-a");
    store.add_model("m-1", R"({"name": "one"})");
    store.add_model("m-1", R"({"name": "one"})");  // once only
    store.add_model("m-0", R"({"name": "zero"})");
  }
  EXPECT_EQ(query("PRAGMA journal_mode"), "wal");
  // Every user's specs and results: readable by the server's owner alone.
  EXPECT_EQ(fs::status(path()).permissions() & (fs::perms::group_all | fs::perms::others_all),
            fs::perms::none);
  JobStore store(path());
  const auto jobs = store.jobs();
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].id, "j-b");  // submission order, not id order
  EXPECT_EQ(jobs[0].owner, "alice");
  EXPECT_EQ(jobs[0].spec_json, R"({"model": "duffing"})");
  EXPECT_EQ(jobs[0].timeout_s, 2.5);
  EXPECT_FALSE(jobs[0].system_summaries);
  EXPECT_EQ(jobs[0].submitted_at, 1.7e9);
  EXPECT_EQ(jobs[0].ended_at, 1.7e9 + 10);
  EXPECT_EQ(jobs[0].fetched_at, 1.7e9 + 20);
  EXPECT_FALSE(jobs[0].cancel_requested);
  EXPECT_EQ(jobs[1].id, "j-a");
  EXPECT_TRUE(jobs[1].cancel_requested);
  EXPECT_EQ(jobs[1].ended_at, 0.0);

  EXPECT_EQ(store.chunk_count("j-b"), 5);
  EXPECT_EQ(store.chunk_count("j-a"), 0);
  for (int s = 1; s <= 5; ++s)
    EXPECT_EQ(store.chunk("j-b", s), "chunk " + std::to_string(s) + std::string(1, '\0'));
  EXPECT_EQ(store.chunk("j-b", 6), "");
  const auto nines = store.chunks_of_kind("j-b", 9);
  ASSERT_EQ(nines.size(), 2u);
  EXPECT_EQ(nines[0], store.chunk("j-b", 4));
  EXPECT_EQ(nines[1], store.chunk("j-b", 5));

  const auto models = store.models();
  ASSERT_EQ(models.size(), 2u);
  EXPECT_EQ(models[0].first, "m-1");
  EXPECT_EQ(models[1].second, R"({"name": "zero"})");
}

TEST_F(JobStoreTest, ASliceIsStoredWholeOrNotAtAll) {
  JobStore store(path());
  store.add_job(job("j-1", ""));
  store.put_chunks("j-1", chunks(1, 2, 1));
  // The third chunk collides with a stored one: the insert fails and the first two go too.
  auto slice = chunks(3, 3, 1);
  slice[2].sequence = 2;
  EXPECT_THROW(store.put_chunks("j-1", slice), std::runtime_error);
  EXPECT_EQ(store.chunk_count("j-1"), 2);
  EXPECT_EQ(store.chunk("j-1", 3), "");
  store.put_chunks("j-1", chunks(3, 3, 1));  // the store is usable after the failure
  EXPECT_EQ(store.chunk_count("j-1"), 5);
}

TEST_F(JobStoreTest, OpeningRemovesChunksOfJobsItDoesNotHold) {
  {
    JobStore store(path());
    store.add_job(job("j-kept", ""));
    store.put_chunks("j-kept", chunks(1, 2, 1));
    // A crash between a job's header and its record leaves chunks without a job.
    store.put_chunks("j-orphan", chunks(1, 3, 1));
  }
  JobStore store(path());
  EXPECT_EQ(store.removed_orphan_chunks(), 3);
  EXPECT_EQ(store.chunk_count("j-orphan"), 0);
  EXPECT_EQ(store.chunk_count("j-kept"), 2);
}

TEST_F(JobStoreTest, ARemovedJobLeavesNothingAndItsPagesAreFreed) {
  JobStore store(path());
  store.add_job(job("j-big", ""));
  std::vector<StoredChunk> big;
  for (int k = 1; k <= 16; ++k) big.push_back({k, 1, std::string(1 << 20, 'x')});
  store.put_chunks("j-big", big);
  const auto pages = [&] { return std::stoll(query("PRAGMA page_count")); };
  const auto full = pages();
  store.remove_job("j-big");
  EXPECT_TRUE(store.jobs().empty());
  EXPECT_EQ(store.chunk_count("j-big"), 0);
  EXPECT_EQ(query("SELECT count(*) FROM chunks"), "0");
  EXPECT_LT(pages(), full / 8) << "the 16 MiB of chunks were not given back";
}

TEST_F(JobStoreTest, AFileFromANewerLayoutIsRefused) {
  { JobStore store(path()); }
  query("PRAGMA user_version = 99");
  try {
    JobStore store(path());
    ADD_FAILURE() << "a newer layout was opened";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("newer"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ukes::server
