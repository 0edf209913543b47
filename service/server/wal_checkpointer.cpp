#include "service/server/wal_checkpointer.hpp"

#include <sqlite3.h>

#include <stdexcept>

#include "service/server/log.hpp"

namespace ukes::server {

WalCheckpointer::WalCheckpointer(const std::string& path) {
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX;
  if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(db_, static_cast<int>(kStoreBusyTimeout.count()));
    // A connection opens the file at its first statement; until then a checkpoint finds no WAL.
    if (sqlite3_exec(db_, "PRAGMA journal_mode", nullptr, nullptr, nullptr) == SQLITE_OK) {
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

void WalCheckpointer::serve(std::stop_token stop) {
  bool failing = false;  // logged: one line per run of failures
  std::unique_lock lock(mu_);
  while (woken_.wait(lock, stop, [this] { return pending_; })) {
    pending_ = false;
    lock.unlock();
    const int rc =
        sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
    const bool failed = rc != SQLITE_OK && rc != SQLITE_BUSY;
    if (failed && !failing)
      log_event(LogLevel::kWarning, "job_store_checkpoint_failed",
                {{"error", sqlite3_errstr(rc)}, {"note", "the log keeps what it holds"}});
    failing = failed;
    lock.lock();
  }
}

}  // namespace ukes::server
