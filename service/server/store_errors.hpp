// What can go wrong with what a server writes to disk (the job store, spill files), as types the
// callers map to gRPC codes (service/server/ukes_service.cpp) and to a job's end
// (service/server/job_runner.cpp). Their messages reach clients: they name no server path.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace ukes::server {

// The data disk (or the file system's quota) is full: RESOURCE_EXHAUSTED with a retry hint for a
// request, FAILED for a job that could not store its results. Nothing was written.
class DiskFullError : public std::runtime_error {
 public:
  DiskFullError()
      : std::runtime_error(
            "the server's data disk is full: nothing more can be stored until room is made "
            "(--data-dir, or $TMPDIR for spill files)") {}
};

// A stored record whose checksum does not match its bytes: it is never served.
class CorruptRecordError : public std::runtime_error {
 public:
  CorruptRecordError(const std::string& job, std::int64_t sequence)
      : std::runtime_error("chunk " + std::to_string(sequence) + " of job " + job +
                           " is corrupt in the job store"),
        job_(job),
        sequence_(sequence) {}
  const std::string& job() const { return job_; }
  std::int64_t sequence() const { return sequence_; }

 private:
  std::string job_;
  std::int64_t sequence_;
};

// The job store's file cannot be used as it is (empty, not a database, failing SQLite's
// quick_check, or of another layout). The server refuses to start: its message is the one line
// that names the file and the way out.
class StoreDamagedError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace ukes::server
