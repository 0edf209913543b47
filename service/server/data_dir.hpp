// A server's directory: the job store of durable jobs (--data-dir, service/server/job_store.hpp)
// or the spill files of memory-only ones (a private directory). It is held for the process's
// life by an flock on a lock file in it (released by the kernel however the process ends, kill
// -9 included). That lock is how a starting server tells what earlier servers left behind: the
// private directories (`$TMPDIR/ukes-server-*`) of servers that were killed are removed whole,
// and spill files in a --data-dir (left by a memory-only server of an earlier version) too.
#pragma once

#include <string>

namespace ukes::server {

class DataDir {
 public:
  // `path` empty: a new private directory under $TMPDIR, removed by the destructor. Otherwise
  // `path` (created if missing), which no other live server may hold: std::runtime_error if one
  // does. Either way, what dead servers left is removed first (see above).
  explicit DataDir(const std::string& path);
  ~DataDir();
  DataDir(const DataDir&) = delete;
  DataDir& operator=(const DataDir&) = delete;

  const std::string& path() const { return path_; }
  // What the start removed: spill files of dead jobs, private directories of dead servers.
  int removed_spill_files() const { return removed_spill_files_; }
  int removed_private_dirs() const { return removed_private_dirs_; }

  static constexpr const char* kLockFile = "ukes-server.lock";
  static constexpr const char* kPrivatePrefix = "ukes-server-";

 private:
  std::string path_;
  bool private_ = false;
  int lock_fd_ = -1;
  int removed_spill_files_ = 0;
  int removed_private_dirs_ = 0;
};

}  // namespace ukes::server
