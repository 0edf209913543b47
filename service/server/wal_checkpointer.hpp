// Copies a SQLite database's write-ahead log into the database file on a thread of its own, with
// a connection of its own, so that no commit waits for it (the job store's, job_store.hpp). With
// SQLite's automatic checkpoints, the thread that committed a slice's result chunks also copied
// them a second time and synced the file: 0.5 of the 0.8 s that 200 MiB of 1 MiB chunks took to
// store on our 2-core machine (the store's settings, 4 KiB pages), on the run's worker thread,
// where a GPU run then waits for it.
//
// The store's own connection turns its automatic checkpoints off and wakes this one after it
// commits. Checkpoints here are PASSIVE: they never block the writer or a reader, and copy what
// they can; a write that begins after one has caught up resets the log (truncated to
// kWalKeptBytes). Writes that come faster than checkpoints finish (each syncs the file) would
// keep the log growing until they paused; the store bounds it by checkpointing on the committing
// thread past JobStore::kWalBound. A log that a checkpoint has caught up with and that is longer
// than kWalKeptBytes is truncated here too, by a TRUNCATE checkpoint that waits for no one (tried
// again shortly while a reader or the writer is in the way): otherwise a store that went quiet
// after a large job kept the whole burst on disk, already copied, until its next write (an
// update that changes no row's bytes writes nothing). Committed data is in the log either way,
// so a failed checkpoint (a full disk) only leaves the log longer: it is logged once, and the
// next wake tries again.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>

struct sqlite3;

namespace ukes::server {

// How long the store's connection waits for another's lock (the checkpointer's waits for none);
// and how long a commit that bounds the WAL (JobStore::bound_wal) retries its checkpoint while
// the checkpointer's is under way.
inline constexpr std::chrono::milliseconds kStoreBusyTimeout{5000};
// The WAL's size once reset (the store's journal_size_limit): SQLite reuses the file's space up
// to it rather than growing the file again at each burst of commits.
inline constexpr std::int64_t kWalKeptBytes = std::int64_t{64} << 20;
// How soon a truncation that a reader or the writer kept from happening is tried again.
inline constexpr std::chrono::milliseconds kTruncateRetry{250};

class WalCheckpointer {
 public:
  // Opens its connection to the database at `path`, whose pages are `page_bytes` long
  // (std::runtime_error when it cannot).
  WalCheckpointer(const std::string& path, std::int64_t page_bytes);
  ~WalCheckpointer();  // stops the thread (after a checkpoint under way), closes the connection
  WalCheckpointer(const WalCheckpointer&) = delete;
  WalCheckpointer& operator=(const WalCheckpointer&) = delete;

  // There are new commits in the log: checkpoint soon (at once when idle).
  void wake();

 private:
  void serve(std::stop_token stop);
  // A PASSIVE checkpoint, then the truncation when it caught up with a log past kWalKeptBytes;
  // returns SQLite's code, and sets `retry` when the truncation has to wait.
  int checkpoint(bool& retry);

  sqlite3* db_ = nullptr;
  std::int64_t page_bytes_;
  std::mutex mu_;
  std::condition_variable_any woken_;
  bool pending_ = false;  // commits since the last checkpoint began
  std::jthread thread_;   // last: starts when the members it uses exist
};

}  // namespace ukes::server
