// The job store (service/server/job_store.hpp): an SQLite file in WAL mode that gives back what
// was stored, in order, after it is closed and reopened; stores a slice's chunks all or none;
// removes chunks no job owns when it opens; forgets a removed job entirely; never hands out a
// record whose bytes changed on disk; checkpoints its WAL while open (on a thread of its own),
// within a bound however fast the writes; and refuses, with one line naming the file and the way
// out, a file that is empty, truncated, no database, or of another layout.
#include "service/server/job_store.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

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
    store.add_model("alice", "m-1", R"({"name": "one"})");
    store.add_model("alice", "m-1", R"({"name": "one"})");  // once only
    store.add_model("bob", "m-1", R"({"name": "one"})");    // in bob's namespace too
    store.add_model("alice", "m-0", R"({"name": "zero"})");
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
  ASSERT_EQ(models.size(), 3u);
  EXPECT_EQ(models[0].id, "m-1");
  EXPECT_EQ(models[1].owner, "bob");
  EXPECT_EQ(models[2].definition_json, R"({"name": "zero"})");
  for (const auto& m : models) EXPECT_TRUE(m.intact);
  EXPECT_TRUE(store.remove_model("alice", "m-1"));
  EXPECT_FALSE(store.remove_model("alice", "m-1"));
  EXPECT_EQ(store.models().size(), 2u);
}

TEST_F(JobStoreTest, ASliceIsStoredWholeOrNotAtAll) {
  JobStore store(path());
  store.add_job(job("j-1", ""));
  store.put_chunks("j-1", chunks(1, 2, 1));
  // The third chunk of the slice fails to insert (as a full disk would fail it): the first two
  // go too.
  query(
      "CREATE TRIGGER fail_5 BEFORE INSERT ON chunks WHEN NEW.sequence = 5 "
      "BEGIN SELECT RAISE(ABORT, 'injected failure'); END");
  EXPECT_THROW(store.put_chunks("j-1", chunks(3, 3, 1)), std::runtime_error);
  EXPECT_EQ(store.chunk_count("j-1"), 2);
  EXPECT_EQ(store.chunk("j-1", 3), "");
  query("DROP TRIGGER fail_5");
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
  for (int k = 1; k <= 16; ++k) big.push_back({k, 1, std::string(1 << 20, 'x'), k});
  store.put_chunks("j-big", big);
  const auto pages = [&] { return std::stoll(query("PRAGMA page_count")); };
  const auto full = pages();
  store.remove_job("j-big");
  EXPECT_TRUE(store.jobs().empty());
  EXPECT_EQ(store.chunk_count("j-big"), 0);
  EXPECT_EQ(query("SELECT count(*) FROM chunks"), "0");
  EXPECT_LT(pages(), full / 8) << "the 16 MiB of chunks were not given back";
}

// The one line a refused file gives names the file, the problem and the way out.
void expect_refused(const std::string& path, const std::string& problem) {
  try {
    JobStore store(path);
    ADD_FAILURE() << "opened a store that " << problem;
  } catch (const StoreDamagedError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(path), std::string::npos) << what;
    EXPECT_NE(what.find(problem), std::string::npos) << what;
    EXPECT_NE(what.find("--set-aside-store"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

TEST_F(JobStoreTest, AFileOfAnotherLayoutIsRefused) {
  { JobStore store(path()); }
  query("PRAGMA user_version = 99");
  expect_refused(path(), "has layout 99");
  query("PRAGMA user_version = 1");  // before checksums
  expect_refused(path(), "an earlier ukes wrote it");
}

TEST_F(JobStoreTest, AnEmptyFileWhereADatabaseWasIsRefusedNotStartedAfresh) {
  { JobStore store(path()); }
  fs::resize_file(path(), 0);
  expect_refused(path(), "is empty (0 bytes)");
  EXPECT_EQ(fs::file_size(path()), 0u) << "the file was touched";
}

TEST_F(JobStoreTest, ATruncatedOrForeignFileIsRefused) {
  {
    JobStore store(path());
    store.add_job(job("j-1", ""));
    std::vector<StoredChunk> big;
    for (int k = 1; k <= 64; ++k) big.push_back({k, 1, std::string(64 << 10, 'x'), k});
    store.put_chunks("j-1", big);
  }
  fs::resize_file(path(), fs::file_size(path()) / 2);
  expect_refused(path(), "");
  std::ofstream(path(), std::ios::trunc)
      << "not a database, but long enough to look like one " << std::string(4096, '#');
  expect_refused(path(), "is not a readable database");
}

TEST_F(JobStoreTest, SetAsideMovesTheFileAwayForAnEmptyStore) {
  { JobStore store(path()); }
  fs::resize_file(path(), 0);
  const std::string aside = JobStore::set_aside(path());
  EXPECT_NE(aside.find(".damaged-"), std::string::npos) << aside;
  EXPECT_TRUE(fs::exists(aside));
  EXPECT_FALSE(fs::exists(path()));
  JobStore fresh(path());
  EXPECT_TRUE(fresh.jobs().empty());
  EXPECT_EQ(JobStore::set_aside((dir_ / "none.sqlite").string()), "");
}

// Commits leave checkpoints to the store's own thread (wal_checkpointer.hpp): the chunks still
// reach the database file while the store is open, and the WAL is truncated to its limit once a
// checkpoint has caught up (by the next write, or by the checkpointer itself: the next test).
TEST_F(JobStoreTest, CommittedChunksReachTheDatabaseFileWhileTheStoreIsOpen) {
  JobStore store(path());
  store.add_job(job("j-1", "alice"));
  EXPECT_EQ(query("PRAGMA page_size"), "65536");
  const std::string mib(std::size_t{1} << 20, 'r');
  constexpr int kChunks = 96;  // past the WAL's limit of 64 MiB
  for (int k = 1; k <= kChunks; k += 8) {
    std::vector<StoredChunk> slice;
    for (int c = k; c < k + 8; ++c) slice.push_back({c, 2, mib + std::to_string(c), c});
    store.put_chunks("j-1", slice);
  }
  const fs::path wal = path() + "-wal";
  // A write that begins after a checkpoint has copied every frame resets the WAL, truncated to
  // its limit (the file's size says nothing before: a checkpoint sizes the file first). So the
  // writes here leave the checkpoints time to finish (each syncs the file). Within a minute,
  // though the machine may be busy: the checkpoints run on their own. Each write changes the
  // row: SQLite writes no page for an update that leaves a row's bytes as they were, and a log
  // with no new frames is never reset. With one value, a first write made while the large
  // checkpoint was still copying was the only one, and the WAL stayed 100 MB (1 run in 6 under
  // strace; two CI runs in a row on a 2-core VM).
  const auto patience = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  double fetched_at = 1.7e9;
  do {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    store.set_fetched_at("j-1", fetched_at += 1.0);
  } while (fs::file_size(wal) > std::uintmax_t{64} << 20 &&
           std::chrono::steady_clock::now() < patience);
  EXPECT_LE(fs::file_size(wal), std::uintmax_t{64} << 20);
  EXPECT_GE(fs::file_size(path()), std::uintmax_t{kChunks} << 20);
  EXPECT_EQ(store.chunk("j-1", kChunks), mib + std::to_string(kChunks));
}

// A store that goes quiet after a large job gives the WAL's space back once the checkpoints have
// copied it (wal_checkpointer.hpp): with no write after them, the log kept the whole burst on
// disk, already copied, until the next one. The store goes on as before after that.
TEST_F(JobStoreTest, AQuietStoreTruncatesTheLogItsCheckpointsCopied) {
  JobStore store(path());
  store.add_job(job("j-1", "alice"));
  const std::string mib(std::size_t{1} << 20, 'q');
  constexpr int kChunks = 96;  // in one commit: a log past the 64 MiB it keeps, whatever the timing
  std::vector<StoredChunk> slice;
  for (int c = 1; c <= kChunks; ++c) slice.push_back({c, 2, mib + std::to_string(c), c});
  store.put_chunks("j-1", slice);
  const fs::path wal = path() + "-wal";
  ASSERT_GT(fs::file_size(wal), std::uintmax_t{kChunks} << 20);
  const auto patience = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (fs::file_size(wal) > 0 && std::chrono::steady_clock::now() < patience)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(fs::file_size(wal), 0u);
  EXPECT_GE(fs::file_size(path()), std::uintmax_t{kChunks} << 20);
  EXPECT_EQ(store.chunk("j-1", kChunks), mib + std::to_string(kChunks));
  store.put_chunks("j-1", {{kChunks + 1, 2, "after", kChunks + 1}});
  EXPECT_EQ(store.chunk("j-1", kChunks + 1), "after");
  EXPECT_EQ(store.chunk("j-1", 1), mib + "1");
}

// Commits that never pause leave the checkpoints no moment to start the log again; past its bound
// (4 MiB here, 256 MiB in a server) the commit that finds it so checkpoints itself. 100 MiB of
// 256 KiB chunks, committed as fast as the store takes them, grew the log to 41 and 103 MB in two
// runs without the bound; with it the log holds the bound and one commit at most.
TEST_F(JobStoreTest, CommitsThatNeverPauseKeepTheWalWithinItsBound) {
  constexpr std::int64_t kBound = std::int64_t{4} << 20;
  JobStore store(path(), kBound);
  store.add_job(job("j-1", "alice"));
  const std::string chunk(std::size_t{256} << 10, 'w');
  std::uintmax_t largest = 0;
  for (int k = 1; k <= 400; ++k) {
    store.put_chunks("j-1", {{k, 2, chunk, k}});
    largest = std::max(largest, fs::file_size(path() + "-wal"));
  }
  EXPECT_LE(largest, std::uintmax_t{kBound} + (std::uintmax_t{1} << 20));
  EXPECT_EQ(store.chunk("j-1", 400), chunk);
}

// Flips one byte of `needle`'s first occurrence in the file, as a failing disk would: SQLite
// itself is not asked, so nothing but the checksums can tell.
void flip_byte_of(const fs::path& file, const std::string& needle, std::size_t offset) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const std::size_t at = bytes.find(needle);
  ASSERT_NE(at, std::string::npos) << "not in the file";
  f.seekp(static_cast<std::streamoff>(at + offset));
  f.put(static_cast<char>(bytes[at + offset] ^ 0x10));
}

TEST_F(JobStoreTest, AChunkWhoseBytesChangedOnDiskIsNeverHandedOut) {
  {
    JobStore store(path());
    store.add_job(job("j-1", "alice"));
    store.put_chunks("j-1", {{1, 1, "header"}, {2, 2, "first slice 3.14159", 40}, {3, 9, "end"}});
  }  // closed: the WAL is checkpointed into the file
  flip_byte_of(path(), "first slice 3.14159", 14);
  JobStore store(path());
  EXPECT_EQ(store.chunk("j-1", 1), "header");
  try {
    store.chunk("j-1", 2);
    ADD_FAILURE() << "a corrupt chunk was handed out";
  } catch (const CorruptRecordError& e) {
    EXPECT_EQ(e.job(), "j-1");
    EXPECT_EQ(e.sequence(), 2);
  }
  EXPECT_THROW(store.chunks_of_kind("j-1", 2), CorruptRecordError);
  EXPECT_EQ(store.remove_corrupt_chunks("j-1"), std::vector<std::int64_t>{2});
  EXPECT_EQ(store.chunk_sequences("j-1"), (std::vector<std::int64_t>{1, 3}));
  // A run fills it again.
  store.put_chunks("j-1", {{2, 2, "first slice 3.14159", 40}});
  EXPECT_EQ(store.chunk("j-1", 2), "first slice 3.14159");
  EXPECT_EQ(store.slice_ends("j-1"), std::vector<int>{40});
}

TEST_F(JobStoreTest, ChangedRecordsOfJobsAndModelsAreFlaggedNotTrusted) {
  {
    JobStore store(path());
    store.add_job(job("j-1", "alice"));
    store.add_job(job("j-2", "bob"));
    store.set_ended_at("j-2", 1.7e9 + 5);
    store.add_model("alice", "m-1", R"({"name": "one"})");
  }
  // Another program changes them without their checksums.
  query("UPDATE jobs SET owner = 'mallory' WHERE id = 'j-1'");
  query("UPDATE jobs SET cancel_requested = 1 WHERE id = 'j-2'");
  query("UPDATE models SET definition_json = '{\"name\": \"two\"}'");
  JobStore store(path());
  const auto jobs = store.jobs();
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_FALSE(jobs[0].intact);
  EXPECT_FALSE(jobs[1].intact);
  EXPECT_FALSE(store.models()[0].intact);
  // An update leaves a record that failed its check as it is: rewriting it would bless it.
  store.set_fetched_at("j-1", 1.7e9 + 9);
  EXPECT_FALSE(store.jobs()[0].intact);
}

}  // namespace
}  // namespace ukes::server
