#include "service/server/job_store.hpp"

#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <stdexcept>

namespace ukes::server {

namespace {

// The layout this build writes; a file from a later layout is refused rather than misread.
constexpr int kSchemaVersion = 1;

constexpr const char* kSchema = R"(
CREATE TABLE IF NOT EXISTS jobs (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,  -- submission order
  id TEXT NOT NULL UNIQUE,
  owner TEXT NOT NULL,
  spec_json TEXT NOT NULL,
  timeout_s REAL NOT NULL,
  system_summaries INTEGER NOT NULL,
  submitted_at REAL NOT NULL,
  ended_at REAL NOT NULL DEFAULT 0,
  fetched_at REAL NOT NULL DEFAULT 0,
  cancel_requested INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS chunks (
  job TEXT NOT NULL,
  sequence INTEGER NOT NULL,
  kind INTEGER NOT NULL,
  data BLOB NOT NULL,
  PRIMARY KEY (job, sequence));
CREATE TABLE IF NOT EXISTS models (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  definition_json TEXT NOT NULL);
)";

[[noreturn]] void fail(sqlite3* db, const std::string& what) {
  // The message reaches clients of a failed job: SQLite's text names no path.
  throw std::runtime_error("cannot " + what + " in the job store: " +
                           (db != nullptr ? sqlite3_errmsg(db) : "out of memory"));
}

}  // namespace

// One prepared statement, bound by position (from 1) and stepped; finalized when it goes.
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

JobStore::JobStore(const std::string& path) {
  // Every user's specs and results: the owner's alone. Created here with that mode, since SQLite
  // would create it 0644; its WAL and shared-memory files take the database's mode.
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) throw std::runtime_error("cannot create the job store " + path);
  ::close(fd);
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
    const std::string message = db_ != nullptr ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    throw std::runtime_error("cannot open the job store " + path + ": " + message);
  }
  try {
    sqlite3_busy_timeout(db_, 5000);
    std::int64_t found = 0;
    {
      Statement version(db_, "PRAGMA user_version");
      version.step("read the layout version");
      found = version.integer(0);
    }  // finalized: an open statement would keep the WAL switch below from happening
    if (found > kSchemaVersion)
      throw std::runtime_error("the job store " + path + " has layout " + std::to_string(found) +
                               ", newer than this ukes-server's " + std::to_string(kSchemaVersion));
    // Before any table exists: lets remove_job give freed pages back to the file system.
    exec("PRAGMA auto_vacuum = INCREMENTAL");
    exec("PRAGMA journal_mode = WAL");
    exec("PRAGMA synchronous = NORMAL");
    // A large job's chunks pass through the WAL: truncate it after checkpoints.
    exec("PRAGMA journal_size_limit = 67108864");
    exec(kSchema);
    exec(("PRAGMA user_version = " + std::to_string(kSchemaVersion)).c_str());
    exec("DELETE FROM chunks WHERE job NOT IN (SELECT id FROM jobs)");
    removed_orphan_chunks_ = changes();
    if (removed_orphan_chunks_ > 0) exec("PRAGMA incremental_vacuum");
  } catch (...) {
    sqlite3_close(db_);
    throw;
  }
}

JobStore::~JobStore() { sqlite3_close(db_); }

void JobStore::exec(const char* sql) const {
  char* error = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &error) != SQLITE_OK) {
    const std::string message = error != nullptr ? error : "unknown error";
    sqlite3_free(error);
    throw std::runtime_error("job store: " + message);
  }
}

std::int64_t JobStore::changes() const { return sqlite3_changes64(db_); }

void JobStore::add_job(const StoredJob& job) {
  const std::lock_guard lock(mu_);
  Statement s(
      db_,
      "INSERT INTO jobs (id, owner, spec_json, timeout_s, system_summaries, submitted_at, "
      "ended_at, fetched_at, cancel_requested) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
  s.bind(1, job.id).bind(2, job.owner).bind(3, job.spec_json).bind(4, job.timeout_s);
  s.bind(5, std::int64_t{job.system_summaries}).bind(6, job.submitted_at).bind(7, job.ended_at);
  s.bind(8, job.fetched_at).bind(9, std::int64_t{job.cancel_requested});
  s.run("store a job");
}

std::vector<StoredJob> JobStore::jobs() const {
  const std::lock_guard lock(mu_);
  Statement s(db_,
              "SELECT id, owner, spec_json, timeout_s, system_summaries, submitted_at, ended_at, "
              "fetched_at, cancel_requested FROM jobs ORDER BY seq");
  std::vector<StoredJob> out;
  while (s.step("read the jobs")) {
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
    out.push_back(std::move(j));
  }
  return out;
}

void JobStore::set_ended_at(const std::string& id, double unix_s) {
  const std::lock_guard lock(mu_);
  Statement(db_, "UPDATE jobs SET ended_at = ?2 WHERE id = ?1")
      .bind(1, id)
      .bind(2, unix_s)
      .run("record a job's end");
}

void JobStore::set_fetched_at(const std::string& id, double unix_s) {
  const std::lock_guard lock(mu_);
  Statement(db_, "UPDATE jobs SET fetched_at = ?2 WHERE id = ?1")
      .bind(1, id)
      .bind(2, unix_s)
      .run("record a job's fetch");
}

void JobStore::set_cancel_requested(const std::string& id) {
  const std::lock_guard lock(mu_);
  Statement(db_, "UPDATE jobs SET cancel_requested = 1 WHERE id = ?1")
      .bind(1, id)
      .run("record a cancel");
}

void JobStore::remove_job(const std::string& id) {
  const std::lock_guard lock(mu_);
  exec("BEGIN IMMEDIATE");
  try {
    Statement(db_, "DELETE FROM chunks WHERE job = ?1").bind(1, id).run("remove a job's chunks");
    Statement(db_, "DELETE FROM jobs WHERE id = ?1").bind(1, id).run("remove a job");
    exec("COMMIT");
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
  exec("PRAGMA incremental_vacuum");
}

void JobStore::put_chunks(const std::string& id, const std::vector<StoredChunk>& chunks) {
  if (chunks.empty()) return;
  const std::lock_guard lock(mu_);
  exec("BEGIN IMMEDIATE");
  try {
    Statement s(db_, "INSERT INTO chunks (job, sequence, kind, data) VALUES (?1, ?2, ?3, ?4)");
    for (const StoredChunk& c : chunks) {
      s.bind(1, id).bind(2, c.sequence).bind(3, std::int64_t{c.kind}).bind_blob(4, c.data);
      s.run("store a result chunk");
    }
    exec("COMMIT");
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

std::string JobStore::chunk(const std::string& id, std::int64_t sequence) const {
  const std::lock_guard lock(mu_);
  Statement s(db_, "SELECT data FROM chunks WHERE job = ?1 AND sequence = ?2");
  s.bind(1, id).bind(2, sequence);
  return s.step("read a result chunk") ? s.text(0) : std::string();
}

std::int64_t JobStore::chunk_count(const std::string& id) const {
  const std::lock_guard lock(mu_);
  Statement s(db_, "SELECT count(*) FROM chunks WHERE job = ?1");
  s.bind(1, id);
  s.step("count a job's chunks");
  return s.integer(0);
}

std::vector<std::string> JobStore::chunks_of_kind(const std::string& id, int kind) const {
  const std::lock_guard lock(mu_);
  Statement s(db_, "SELECT data FROM chunks WHERE job = ?1 AND kind = ?2 ORDER BY sequence");
  s.bind(1, id).bind(2, std::int64_t{kind});
  std::vector<std::string> out;
  while (s.step("read a job's chunks")) out.push_back(s.text(0));
  return out;
}

void JobStore::add_model(const std::string& id, const std::string& definition_json) {
  const std::lock_guard lock(mu_);
  Statement(db_, "INSERT OR IGNORE INTO models (id, definition_json) VALUES (?1, ?2)")
      .bind(1, id)
      .bind(2, definition_json)
      .run("store a model");
}

std::vector<std::pair<std::string, std::string>> JobStore::models() const {
  const std::lock_guard lock(mu_);
  Statement s(db_, "SELECT id, definition_json FROM models ORDER BY seq");
  std::vector<std::pair<std::string, std::string>> out;
  while (s.step("read the models")) out.emplace_back(s.text(0), s.text(1));
  return out;
}

}  // namespace ukes::server
