// The durable record of a server's jobs under --data-dir: an SQLite database in WAL mode holding
// each job's spec, owner and times, every chunk of its result log, and the registered user
// models. A chunk, or a slice's chunks together, is written in one transaction, so a crash (kill
// -9 included) never leaves a torn chunk: after a restart a log holds exactly the chunks whose
// transaction committed. WAL with synchronous=NORMAL makes a commit survive the process's death
// at once; a power cut may lose the last commits, never corrupt earlier ones. README.md ("What
// survives what") says what a restart does with these records.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace ukes::server {

// Now as the store records times: wall-clock Unix seconds (steady-clock times do not outlive the
// process).
inline double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// A job as stored: what a restarted server needs to serve or run it again.
struct StoredJob {
  std::string id;
  std::string owner;
  std::string spec_json;  // the spec as accepted (a user model inline)
  double timeout_s = 0.0;
  bool system_summaries = true;
  // Wall-clock times, Unix seconds; 0 = not yet.
  double submitted_at = 0.0;
  double ended_at = 0.0;
  double fetched_at = 0.0;
  bool cancel_requested = false;  // a cancel asked for before the job ended
};

// One serialized chunk, its sequence in the job's log and the case of its payload
// (v1::StreamJobResultsResponse::PayloadCase), by which a restart finds a log's progress reports
// and end without reading the rest.
struct StoredChunk {
  std::int64_t sequence = 0;
  int kind = 0;
  std::string data;
};

class JobStore {
 public:
  // Opens or creates the database at `path` and removes chunks of jobs it does not hold (a
  // crash between storing a job's header and the job). std::runtime_error when it cannot, or
  // when the file was written by a newer ukes.
  explicit JobStore(const std::string& path);
  ~JobStore();
  JobStore(const JobStore&) = delete;
  JobStore& operator=(const JobStore&) = delete;

  // Jobs, in submission order.
  void add_job(const StoredJob& job);
  std::vector<StoredJob> jobs() const;
  void set_ended_at(const std::string& id, double unix_s);
  void set_fetched_at(const std::string& id, double unix_s);
  void set_cancel_requested(const std::string& id);
  // The job and its chunks; the pages they held are given back to the file system.
  void remove_job(const std::string& id);

  // A job's chunks, numbered from 1. put_chunks stores them in one transaction: all of them
  // or, on failure (std::runtime_error), none.
  void put_chunks(const std::string& id, const std::vector<StoredChunk>& chunks);
  std::string chunk(const std::string& id, std::int64_t sequence) const;  // "" when absent
  std::int64_t chunk_count(const std::string& id) const;
  // The job's chunks of one kind, in order.
  std::vector<std::string> chunks_of_kind(const std::string& id, int kind) const;

  // Registered user models: content id and canonical definition, in registration order.
  void add_model(const std::string& id, const std::string& definition_json);
  std::vector<std::pair<std::string, std::string>> models() const;

  // Chunk rows the opening removed (see the constructor).
  std::int64_t removed_orphan_chunks() const { return removed_orphan_chunks_; }

  static constexpr const char* kFileName = "ukes-jobs.sqlite";

 private:
  class Statement;
  void exec(const char* sql) const;
  std::int64_t changes() const;

  sqlite3* db_ = nullptr;
  mutable std::mutex mu_;  // one connection, used by one thread at a time
  std::int64_t removed_orphan_chunks_ = 0;
};

}  // namespace ukes::server
