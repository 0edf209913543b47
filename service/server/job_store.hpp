// The durable record of a server's jobs under --data-dir: an SQLite database in WAL mode holding
// each job's spec, owner and times, every chunk of its result log, and the user models each
// principal registered. A chunk, or a slice's chunks together, is written in one transaction, so
// a crash (kill -9 included) never leaves a torn chunk: after a restart a log holds exactly the
// chunks whose transaction committed. WAL with synchronous=NORMAL makes a commit survive the
// process's death at once; a power cut may lose the last commits, never corrupt earlier ones.
//
// Every row carries a SHA-256 of what it holds, checked on every read: a chunk whose bytes
// changed on disk is never handed out (CorruptRecordError), and a job or model record that fails
// its check is reported as not intact. Opening runs SQLite's quick_check and refuses (with
// StoreDamagedError) a file that fails it, an empty file where a database was, and a file of
// another layout: never a silent fresh start. README.md ("What survives what") says what a restart
// does with these records.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "service/server/store_errors.hpp"

struct sqlite3;
struct sqlite3_stmt;

namespace ukes::server {

class WalCheckpointer;

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
  // Read back with a checksum that does not match: only `id` may be relied on (as read).
  bool intact = true;
};

// One serialized chunk, its sequence in the job's log, the case of its payload
// (v1::StreamJobResultsResponse::PayloadCase), by which a restart finds a log's end without
// reading the rest, and for a slice's chunks the number of systems done after that slice, by
// which a run after a restart reproduces the stored slices (any intact chunk of a slice tells).
struct StoredChunk {
  std::int64_t sequence = 0;
  int kind = 0;
  std::string data;
  std::int64_t slice_end = 0;  // 0: not a slice's chunk
};

// A user model a principal registered (content id and canonical definition).
struct StoredModel {
  std::string owner;
  std::string id;
  std::string definition_json;
  bool intact = true;  // as StoredJob::intact
};

class JobStore {
 public:
  // Opens the database at `path`, or creates it (atomically: a crash leaves no half-made file),
  // and removes chunks of jobs it does not hold (a crash between storing a job's header and the
  // job). StoreDamagedError when the file cannot be used as it is (see above); DiskFullError or
  // std::runtime_error when it cannot be created. `wal_bound`: see kWalBound.
  explicit JobStore(const std::string& path, std::int64_t wal_bound = kWalBound);
  ~JobStore();
  JobStore(const JobStore&) = delete;
  JobStore& operator=(const JobStore&) = delete;

  // Renames the database at `path` and its WAL and shared-memory files aside (suffix
  // ".damaged-<unix seconds>"), so that a server starts with a new store and the old one stays
  // for inspection. Returns the new name of the database; "" when there was no file.
  static std::string set_aside(const std::string& path);

  // Jobs, in submission order (not intact ones included, flagged).
  void add_job(const StoredJob& job);
  std::vector<StoredJob> jobs() const;
  void set_ended_at(const std::string& id, double unix_s);
  void set_fetched_at(const std::string& id, double unix_s);
  void set_cancel_requested(const std::string& id);
  // The job and its chunks; the pages they held are given back to the file system.
  void remove_job(const std::string& id);

  // A job's chunks, numbered from 1. put_chunks stores them in one transaction (a chunk
  // replaces a stored one of its sequence, as a run repairing the log does): all of them or, on
  // failure (DiskFullError, std::runtime_error), none.
  void put_chunks(const std::string& id, const std::vector<StoredChunk>& chunks);
  // The chunk's bytes; "" when absent, CorruptRecordError when they fail their checksum.
  std::string chunk(const std::string& id, std::int64_t sequence) const;
  // Checks every chunk of the job, removes those that fail, and returns their sequences.
  std::vector<std::int64_t> remove_corrupt_chunks(const std::string& id);
  // The sequences stored, ascending, and how many.
  std::vector<std::int64_t> chunk_sequences(const std::string& id) const;
  std::int64_t chunk_count(const std::string& id) const {
    return static_cast<std::int64_t>(chunk_sequences(id).size());
  }
  // The job's chunks of one kind, in order (each checked: CorruptRecordError).
  std::vector<std::string> chunks_of_kind(const std::string& id, int kind) const;
  // Where the job's stored slices end (distinct StoredChunk::slice_end), ascending.
  std::vector<int> slice_ends(const std::string& id) const;

  // Registered user models, in registration order (not intact ones flagged). add_model stores
  // one unless the owner has it already; remove_model returns whether it was there.
  void add_model(const std::string& owner, const std::string& id,
                 const std::string& definition_json);
  bool remove_model(const std::string& owner, const std::string& id);
  std::vector<StoredModel> models() const;

  // Chunk rows the opening removed (see the constructor).
  std::int64_t removed_orphan_chunks() const { return removed_orphan_chunks_; }

  static constexpr const char* kFileName = "ukes-jobs.sqlite";
  // The most the WAL holds before a commit waits for a checkpoint: four times its size limit.
  // Checkpoints run off the committing threads (wal_checkpointer.hpp), but commits that come
  // faster than they finish leave them no moment to start the log again, which then grows until
  // the commits pause; past this bound the commit that finds it so makes a RESTART checkpoint
  // itself (the rest copied, and the next commit starts the log from its beginning).
  static constexpr std::int64_t kWalBound = std::int64_t{256} << 20;

 private:
  class Statement;
  void open(const std::string& path);
  void check_integrity(const std::string& path);
  void exec(const char* sql) const;
  std::int64_t changes() const;
  // Runs `body` in a write transaction: committed when it returns, rolled back when it throws.
  template <class Body>
  void transaction(Body&& body);
  // Reads the job's row, lets `change` modify it, writes it back with its new checksum.
  template <class Change>
  void update_job(const std::string& id, Change&& change);

  // After a commit: the WAL's frames, from SQLite's hook; checkpoints past the bound.
  static int count_wal_frames(void* store, sqlite3*, const char*, int frames);
  void bound_wal();

  sqlite3* db_ = nullptr;
  mutable std::mutex mu_;  // one connection, used by one thread at a time
  std::int64_t wal_bound_;
  std::int64_t page_bytes_ = 4096;  // the database's, read when it opens
  std::int64_t wal_frames_ = 0;     // after the last commit
  std::int64_t removed_orphan_chunks_ = 0;
  // Checkpoints the WAL off the committing threads (closed before db_).
  std::unique_ptr<WalCheckpointer> checkpointer_;
};

}  // namespace ukes::server
