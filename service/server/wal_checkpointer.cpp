#include "service/server/wal_checkpointer.hpp"

#include <sqlite3.h>

#include <stdexcept>

#include "service/server/log.hpp"

namespace ukes::server {

WalCheckpointer::WalCheckpointer(const std::string& path, std::int64_t page_bytes)
    : page_bytes_(page_bytes) {
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX;
  if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(db_, static_cast<int>(kStoreBusyTimeout.count()));
    // A connection opens the file at its first statement; until then a checkpoint finds no WAL.
    if (sqlite3_exec(db_, "PRAGMA journal_mode", nullptr, nullptr, nullptr) == SQLITE_OK) {
      // From here on it waits for no lock: PASSIVE checkpoints never do, and a truncation that
      // waited would hold the store's commits back while it did.
      sqlite3_busy_timeout(db_, 0);
      thread_ = std::jthread([this](std::stop_token stop) { serve(stop); });
      return;
    }
  }
  const std::string message = db_ != nullptr ? sqlite3_errmsg(db_) : "out of memory";
  sqlite3_close(db_);
  throw std::runtime_error("cannot open the job store for its checkpoints: " + message);
}

WalCheckpointer::~WalCheckpointer() {
  thread_.request_stop();
  if (thread_.joinable()) thread_.join();
  sqlite3_close(db_);
}

void WalCheckpointer::wake() {
  {
    const std::lock_guard lock(mu_);
    pending_ = true;
  }
  woken_.notify_one();
}

int WalCheckpointer::checkpoint(bool& retry) {
  retry = false;
  int log_frames = 0, copied_frames = 0;
  const int rc = sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_PASSIVE, &log_frames,
                                           &copied_frames);
  if (rc != SQLITE_OK || copied_frames < log_frames ||
      std::int64_t{log_frames} * page_bytes_ <= kWalKeptBytes)
    return rc;
  // Caught up with a long log: nothing in it is left to copy, so the truncation only has to find
  // no reader in the log and no writer (BUSY at once otherwise, without a busy handler).
  const int truncated =
      sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_TRUNCATE, nullptr, nullptr);
  retry = truncated == SQLITE_BUSY;
  return retry ? SQLITE_OK : truncated;
}

void WalCheckpointer::serve(std::stop_token stop) {
  bool failing = false;  // logged: one line per run of failures
  bool retry = false;    // a truncation waits for a reader or the writer to leave the log
  const auto woken = [this] { return pending_; };
  std::unique_lock lock(mu_);
  while (!stop.stop_requested()) {
    if (retry)
      woken_.wait_for(lock, stop, kTruncateRetry, woken);
    else if (!woken_.wait(lock, stop, woken))
      break;
    if (stop.stop_requested()) break;
    pending_ = false;
    lock.unlock();
    const int rc = checkpoint(retry);
    const bool failed = rc != SQLITE_OK && rc != SQLITE_BUSY;
    if (failed && !failing)
      log_event(LogLevel::kWarning, "job_store_checkpoint_failed",
                {{"error", sqlite3_errstr(rc)}, {"note", "the log keeps what it holds"}});
    failing = failed;
    lock.lock();
  }
}

}  // namespace ukes::server
