#include "service/server/job_store.hpp"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <thread>

#include "kernels/core/sha256.hpp"
#include "service/server/wal_checkpointer.hpp"

namespace ukes::server {

namespace {

// The layout this build writes. A file of another layout is refused, not misread: layout 1 had
// no checksums, and a file from a later ukes may hold what this one does not understand.
constexpr int kSchemaVersion = 2;

constexpr const char* kSchema = R"(
CREATE TABLE jobs (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,  -- submission order
  id TEXT NOT NULL UNIQUE,
  owner TEXT NOT NULL,
  spec_json TEXT NOT NULL,
  timeout_s REAL NOT NULL,
  system_summaries INTEGER NOT NULL,
  submitted_at REAL NOT NULL,
  ended_at REAL NOT NULL DEFAULT 0,
  fetched_at REAL NOT NULL DEFAULT 0,
  cancel_requested INTEGER NOT NULL DEFAULT 0,
  checksum BLOB NOT NULL);
CREATE TABLE chunks (
  job TEXT NOT NULL,
  sequence INTEGER NOT NULL,
  kind INTEGER NOT NULL,
  slice_end INTEGER NOT NULL,
  data BLOB NOT NULL,
  checksum BLOB NOT NULL,
  PRIMARY KEY (job, sequence));
CREATE TABLE models (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,  -- registration order
  owner TEXT NOT NULL,
  id TEXT NOT NULL,
  definition_json TEXT NOT NULL,
  checksum BLOB NOT NULL,
  UNIQUE (owner, id));
)";

std::string job_checksum(const StoredJob& j) {
  return Sha256()
      .add(j.id)
      .add(j.owner)
      .add(j.spec_json)
      .add(j.timeout_s)
      .add(std::int64_t{j.system_summaries})
      .add(j.submitted_at)
      .add(j.ended_at)
      .add(j.fetched_at)
      .add(std::int64_t{j.cancel_requested})
      .digest();
}

std::string chunk_checksum(const std::string& job, const StoredChunk& c) {
  return Sha256()
      .add(job)
      .add(c.sequence)
      .add(std::int64_t{c.kind})
      .add(c.slice_end)
      .add(c.data)
      .digest();
}

std::string model_checksum(const StoredModel& m) {
  return Sha256().add(m.owner).add(m.id).add(m.definition_json).digest();
}

bool disk_full(sqlite3* db) {
  const int err = db != nullptr ? sqlite3_system_errno(db) : 0;
  return (db != nullptr && (sqlite3_extended_errcode(db) & 0xff) == SQLITE_FULL) || err == ENOSPC ||
         err == EDQUOT;
}

[[noreturn]] void fail(sqlite3* db, const std::string& what) {
  if (disk_full(db)) throw DiskFullError();
  // The message reaches clients of a failed job: SQLite's text names no path.
  throw std::runtime_error("cannot " + what + " in the job store: " +
                           (db != nullptr ? sqlite3_errmsg(db) : "out of memory"));
}

// The one line a refused store gives: the file, what is wrong, the way out.
[[noreturn]] void damaged(const std::string& path, const std::string& problem) {
  throw StoreDamagedError("the job store " + path + " " + problem +
                          ": start with another --data-dir, or with --set-aside-store to move it "
                          "aside (kept for inspection) and start with an empty store");
}

}  // namespace

// One prepared statement, bound by position (from 1) and stepped; finalized when it goes. Bound
// text and blobs are not copied (SQLITE_STATIC): they must outlive the step.
class JobStore::Statement {
 public:
  Statement(sqlite3* db, const char* sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK) fail(db, "prepare a query");
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int k, const std::string& text) {
    return check(
        sqlite3_bind_text(stmt_, k, text.data(), static_cast<int>(text.size()), SQLITE_STATIC));
  }
  Statement& bind_blob(int k, const std::string& bytes) {
    return check(sqlite3_bind_blob64(stmt_, k, bytes.data(), bytes.size(), SQLITE_STATIC));
  }
  Statement& bind(int k, std::int64_t v) { return check(sqlite3_bind_int64(stmt_, k, v)); }
  Statement& bind(int k, double v) { return check(sqlite3_bind_double(stmt_, k, v)); }

  // True while there is a row to read; false when done.
  bool step(const char* what) {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc != SQLITE_DONE) fail(db_, what);
    return false;
  }
  void run(const char* what) {
    step(what);
    sqlite3_reset(stmt_);
  }

  std::string text(int column) const {
    const auto* p = static_cast<const char*>(sqlite3_column_blob(stmt_, column));
    return p != nullptr
               ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)))
               : std::string();
  }
  std::int64_t integer(int column) const { return sqlite3_column_int64(stmt_, column); }
  double real(int column) const { return sqlite3_column_double(stmt_, column); }

 private:
  Statement& check(int rc) {
    if (rc != SQLITE_OK) fail(db_, "bind a value");
    return *this;
  }
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

JobStore::JobStore(const std::string& path, std::int64_t wal_bound) : wal_bound_(wal_bound) {
  struct stat st {};
  const bool existed = ::stat(path.c_str(), &st) == 0;
  if (existed && st.st_size == 0)
    damaged(path, "is empty (0 bytes) where a database was: its jobs cannot be recovered from it");
  if (!existed) {
    // Made whole under another name and renamed: a crash never leaves an empty or half-made
    // file where a database is expected (which the next start would refuse, see above).
    const std::string fresh = path + ".new";
    std::remove(fresh.c_str());
    open(fresh);
    try {
      // Before any table: lets remove_job shrink the file. Pages of 64 KiB (SQLite's largest):
      // a 1 MiB chunk fills 16 instead of 256, and 200 such chunks were written in 0.17 s
      // instead of 0.30 s on our 2-core machine (checkpoints apart).
      exec("PRAGMA page_size = 65536");  // first: SQLite keeps 4 KiB after auto_vacuum's
      exec("PRAGMA auto_vacuum = INCREMENTAL");
      exec(kSchema);
      exec(("PRAGMA user_version = " + std::to_string(kSchemaVersion)).c_str());
    } catch (...) {
      sqlite3_close(db_);
      std::remove(fresh.c_str());
      throw;
    }
    sqlite3_close(db_);
    db_ = nullptr;
    if (std::rename(fresh.c_str(), path.c_str()) != 0)
      throw std::runtime_error("cannot create the job store " + path);
  }
  open(path);
  try {
    sqlite3_busy_timeout(db_, static_cast<int>(kStoreBusyTimeout.count()));
    check_integrity(path);
    exec("PRAGMA journal_mode = WAL");
    exec("PRAGMA synchronous = NORMAL");
    // A large job's chunks pass through the WAL: truncate it after checkpoints, which
    // checkpointer_ makes on a thread of its own (wal_checkpointer.hpp).
    exec(("PRAGMA journal_size_limit = " + std::to_string(kWalKeptBytes)).c_str());
    exec("PRAGMA wal_autocheckpoint = 0");
    sqlite3_wal_hook(db_, count_wal_frames, this);  // after the line above, which clears it
    {
      Statement s(db_, "PRAGMA page_size");
      if (s.step("read the page size")) page_bytes_ = s.integer(0);
    }
    checkpointer_ = std::make_unique<WalCheckpointer>(path, page_bytes_);
    exec("DELETE FROM chunks WHERE job NOT IN (SELECT id FROM jobs)");
    removed_orphan_chunks_ = changes();
    if (removed_orphan_chunks_ > 0) exec("PRAGMA incremental_vacuum");
  } catch (...) {
    checkpointer_.reset();
    sqlite3_close(db_);
    db_ = nullptr;
    throw;
  }
}

void JobStore::open(const std::string& path) {
  // Every user's specs and results: the owner's alone. Created here with that mode, since SQLite
  // would create it 0644; its WAL and shared-memory files take the database's mode.
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (errno == ENOSPC || errno == EDQUOT) throw DiskFullError();
    throw std::runtime_error("cannot create the job store " + path);
  }
  ::close(fd);
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
    const std::string message = db_ != nullptr ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw std::runtime_error("cannot open the job store " + path + ": " + message);
  }
}

// Refuses (StoreDamagedError) a file that is no database of this layout or fails quick_check.
void JobStore::check_integrity(const std::string& path) {
  std::int64_t version = 0;
  std::string verdict;
  try {
    {
      Statement s(db_, "PRAGMA user_version");
      s.step("read the layout version");
      version = s.integer(0);
    }  // finalized: an open statement would keep the WAL switch from happening
    Statement check(db_, "PRAGMA quick_check(1)");
    if (check.step("check the database")) verdict = check.text(0);
  } catch (const DiskFullError&) {
    throw;
  } catch (const std::exception&) {
    damaged(path, std::string("is not a readable database (") + sqlite3_errmsg(db_) + ")");
  }
  if (verdict != "ok") damaged(path, "fails SQLite's quick_check (" + verdict.substr(0, 200) + ")");
  if (version != kSchemaVersion)
    damaged(path, "has layout " + std::to_string(version) + ", this ukes-server reads layout " +
                      std::to_string(kSchemaVersion) +
                      (version < kSchemaVersion ? " (an earlier ukes wrote it)" : ""));
}

std::string JobStore::set_aside(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "";
  const std::string aside =
      path + ".damaged-" + std::to_string(static_cast<std::int64_t>(unix_now()));
  for (const char* suffix : {"-wal", "-shm", ""}) {
    const std::string from = path + suffix, to = aside + suffix;
    if (std::rename(from.c_str(), to.c_str()) != 0 && errno != ENOENT)
      throw std::runtime_error("cannot move " + from + " aside to " + to);
  }
  return aside;
}

JobStore::~JobStore() {
  checkpointer_.reset();
  sqlite3_close(db_);  // the last connection: checkpoints what is left and removes the WAL
}

void JobStore::exec(const char* sql) const {
  char* error = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &error) != SQLITE_OK) {
    const std::string message = error != nullptr ? error : "unknown error";
    sqlite3_free(error);
    if (disk_full(db_)) throw DiskFullError();
    throw std::runtime_error("job store: " + message);
  }
}

std::int64_t JobStore::changes() const { return sqlite3_changes64(db_); }

template <class Body>
void JobStore::transaction(Body&& body) {
  exec("BEGIN IMMEDIATE");
  try {
    body();
    exec("COMMIT");
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
  bound_wal();
  checkpointer_->wake();
}

int JobStore::count_wal_frames(void* store, sqlite3*, const char*, int frames) {
  static_cast<JobStore*>(store)->wal_frames_ = frames;
  return SQLITE_OK;
}

void JobStore::bound_wal() {
  if (wal_frames_ * page_bytes_ <= wal_bound_) return;
  // A checkpoint under way on the checkpointer's thread makes this one BUSY at once (SQLite waits
  // in the busy handler for writers and readers, not for another checkpoint): tried again until
  // that one ends, for as long as the busy timeout. Any other failure (a full disk) leaves the
  // log as it is: committed data is in it, and the next commit tries again.
  const auto give_up = std::chrono::steady_clock::now() + kStoreBusyTimeout;
  int rc = SQLITE_BUSY;
  while (rc == SQLITE_BUSY && std::chrono::steady_clock::now() < give_up) {
    rc = sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_RESTART, nullptr, nullptr);
    if (rc == SQLITE_BUSY) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (rc == SQLITE_OK) wal_frames_ = 0;
}

namespace {

// The columns of a job row, in this order, in every statement that reads or writes one whole.
constexpr const char* kJobColumns =
    "id, owner, spec_json, timeout_s, system_summaries, submitted_at, ended_at, fetched_at, "
    "cancel_requested, checksum";

}  // namespace

void JobStore::add_job(const StoredJob& job) {
  const std::string checksum = job_checksum(job);
  const std::lock_guard lock(mu_);
  Statement s(db_, (std::string("INSERT INTO jobs (") + kJobColumns +
                    ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)")
                       .c_str());
  s.bind(1, job.id).bind(2, job.owner).bind(3, job.spec_json).bind(4, job.timeout_s);
  s.bind(5, std::int64_t{job.system_summaries}).bind(6, job.submitted_at).bind(7, job.ended_at);
  s.bind(8, job.fetched_at).bind(9, std::int64_t{job.cancel_requested}).bind_blob(10, checksum);
  s.run("store a job");
}

namespace {

StoredJob read_job(const auto& s) {
  StoredJob j;
  j.id = s.text(0);
  j.owner = s.text(1);
  j.spec_json = s.text(2);
  j.timeout_s = s.real(3);
  j.system_summaries = s.integer(4) != 0;
  j.submitted_at = s.real(5);
  j.ended_at = s.real(6);
  j.fetched_at = s.real(7);
  j.cancel_requested = s.integer(8) != 0;
  j.intact = s.text(9) == job_checksum(j);
  return j;
}

}  // namespace

std::vector<StoredJob> JobStore::jobs() const {
  const std::lock_guard lock(mu_);
  Statement s(db_, (std::string("SELECT ") + kJobColumns + " FROM jobs ORDER BY seq").c_str());
  std::vector<StoredJob> out;
  while (s.step("read the jobs")) out.push_back(read_job(s));
  return out;
}

template <class Change>
void JobStore::update_job(const std::string& id, Change&& change) {
  const std::lock_guard lock(mu_);
  transaction([&] {
    StoredJob job;
    {
      Statement s(db_, (std::string("SELECT ") + kJobColumns + " FROM jobs WHERE id = ?1").c_str());
      s.bind(1, id);
      if (!s.step("read a job")) return;
      job = read_job(s);
    }
    // A record that no longer matches its checksum stays so: rewriting it would bless it.
    if (!job.intact) return;
    change(job);
    const std::string checksum = job_checksum(job);
    Statement(db_,
              "UPDATE jobs SET ended_at = ?2, fetched_at = ?3, cancel_requested = ?4, "
              "checksum = ?5 WHERE id = ?1")
        .bind(1, id)
        .bind(2, job.ended_at)
        .bind(3, job.fetched_at)
        .bind(4, std::int64_t{job.cancel_requested})
        .bind_blob(5, checksum)
        .run("update a job");
  });
}

void JobStore::set_ended_at(const std::string& id, double unix_s) {
  update_job(id, [&](StoredJob& j) { j.ended_at = unix_s; });
}

void JobStore::set_fetched_at(const std::string& id, double unix_s) {
  update_job(id, [&](StoredJob& j) { j.fetched_at = unix_s; });
}

void JobStore::set_cancel_requested(const std::string& id) {
  update_job(id, [&](StoredJob& j) { j.cancel_requested = true; });
}

void JobStore::remove_job(const std::string& id) {
  const std::lock_guard lock(mu_);
  transaction([&] {
    Statement(db_, "DELETE FROM chunks WHERE job = ?1").bind(1, id).run("remove a job's chunks");
    Statement(db_, "DELETE FROM jobs WHERE id = ?1").bind(1, id).run("remove a job");
  });
  exec("PRAGMA incremental_vacuum");
  checkpointer_->wake();
}

void JobStore::put_chunks(const std::string& id, const std::vector<StoredChunk>& chunks) {
  if (chunks.empty()) return;
  // Hashed before the lock (about 1 ns a byte): a slice's megabytes need not keep the streams
  // reading this store, and the other jobs writing it, waiting.
  std::vector<std::string> checksums;
  checksums.reserve(chunks.size());
  for (const StoredChunk& c : chunks) checksums.push_back(chunk_checksum(id, c));
  const std::lock_guard lock(mu_);
  transaction([&] {
    Statement s(db_,
                "INSERT OR REPLACE INTO chunks (job, sequence, kind, slice_end, data, checksum) "
                "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
    for (std::size_t k = 0; k < chunks.size(); ++k) {
      const StoredChunk& c = chunks[k];
      s.bind(1, id).bind(2, c.sequence).bind(3, std::int64_t{c.kind}).bind(4, c.slice_end);
      s.bind_blob(5, c.data).bind_blob(6, checksums[k]);
      s.run("store a result chunk");
    }
  });
}

namespace {

// A chunk row read as (sequence, kind, slice_end, data, checksum).
StoredChunk chunk_row(const auto& s) {
  return {s.integer(0), static_cast<int>(s.integer(1)), s.text(3), s.integer(2)};
}
// Whether that row is intact.
StoredChunk read_chunk(const auto& s, const std::string& job, bool* intact) {
  StoredChunk c = chunk_row(s);
  *intact = s.text(4) == chunk_checksum(job, c);
  return c;
}

constexpr const char* kChunkColumns = "sequence, kind, slice_end, data, checksum";

}  // namespace

std::string JobStore::chunk(const std::string& id, std::int64_t sequence) const {
  StoredChunk c;
  std::string checksum;
  {
    const std::lock_guard lock(mu_);
    Statement s(db_, (std::string("SELECT ") + kChunkColumns +
                      " FROM chunks WHERE job = ?1 AND sequence = ?2")
                         .c_str());
    s.bind(1, id).bind(2, sequence);
    if (!s.step("read a result chunk")) return {};
    c = chunk_row(s);
    checksum = s.text(4);
  }
  // Checked out of the lock, as put_chunks hashes. A row whose sequence itself changed fails its
  // checksum too: it was computed with the old one.
  if (checksum != chunk_checksum(id, c)) throw CorruptRecordError(id, sequence);
  return std::move(c.data);
}

std::vector<std::int64_t> JobStore::remove_corrupt_chunks(const std::string& id) {
  const std::lock_guard lock(mu_);
  std::vector<std::int64_t> corrupt;
  {
    Statement s(db_, (std::string("SELECT ") + kChunkColumns +
                      " FROM chunks WHERE job = ?1 ORDER BY sequence")
                         .c_str());
    s.bind(1, id);
    bool intact = false;
    while (s.step("check a job's chunks"))
      if (read_chunk(s, id, &intact); !intact) corrupt.push_back(s.integer(0));
  }
  if (corrupt.empty()) return corrupt;
  transaction([&] {
    Statement d(db_, "DELETE FROM chunks WHERE job = ?1 AND sequence = ?2");
    for (const std::int64_t sequence : corrupt)
      d.bind(1, id).bind(2, sequence).run("remove a chunk");
  });
  return corrupt;
}

std::vector<std::int64_t> JobStore::chunk_sequences(const std::string& id) const {
  const std::lock_guard lock(mu_);
  Statement s(db_, "SELECT sequence FROM chunks WHERE job = ?1 ORDER BY sequence");
  s.bind(1, id);
  std::vector<std::int64_t> out;
  while (s.step("list a job's chunks")) out.push_back(s.integer(0));
  return out;
}

std::vector<std::string> JobStore::chunks_of_kind(const std::string& id, int kind) const {
  const std::lock_guard lock(mu_);
  Statement s(db_, (std::string("SELECT ") + kChunkColumns +
                    " FROM chunks WHERE job = ?1 AND kind = ?2 ORDER BY sequence")
                       .c_str());
  s.bind(1, id).bind(2, std::int64_t{kind});
  std::vector<std::string> out;
  bool intact = false;
  while (s.step("read a job's chunks")) {
    StoredChunk c = read_chunk(s, id, &intact);
    if (!intact) throw CorruptRecordError(id, c.sequence);
    out.push_back(std::move(c.data));
  }
  return out;
}

std::vector<int> JobStore::slice_ends(const std::string& id) const {
  const std::lock_guard lock(mu_);
  Statement s(db_,
              "SELECT DISTINCT slice_end FROM chunks WHERE job = ?1 AND slice_end > 0 "
              "ORDER BY slice_end");
  s.bind(1, id);
  std::vector<int> out;
  while (s.step("read a job's slices")) out.push_back(static_cast<int>(s.integer(0)));
  return out;
}

void JobStore::add_model(const std::string& owner, const std::string& id,
                         const std::string& definition_json) {
  const std::string checksum = model_checksum({owner, id, definition_json});
  const std::lock_guard lock(mu_);
  Statement(db_,
            "INSERT OR IGNORE INTO models (owner, id, definition_json, checksum) "
            "VALUES (?1, ?2, ?3, ?4)")
      .bind(1, owner)
      .bind(2, id)
      .bind(3, definition_json)
      .bind_blob(4, checksum)
      .run("store a model");
}

bool JobStore::remove_model(const std::string& owner, const std::string& id) {
  const std::lock_guard lock(mu_);
  Statement(db_, "DELETE FROM models WHERE owner = ?1 AND id = ?2")
      .bind(1, owner)
      .bind(2, id)
      .run("remove a model");
  return changes() > 0;
}

std::vector<StoredModel> JobStore::models() const {
  const std::lock_guard lock(mu_);
  Statement s(db_, "SELECT owner, id, definition_json, checksum FROM models ORDER BY seq");
  std::vector<StoredModel> out;
  while (s.step("read the models")) {
    StoredModel m{s.text(0), s.text(1), s.text(2)};
    m.intact = s.text(3) == model_checksum(m);
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace ukes::server
