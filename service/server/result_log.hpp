// A job's results as an append-only log of numbered chunks. Chunks stay in memory while the
// server-wide MemoryBudget allows and go to a spill file in the data directory beyond it, so a job
// that nobody is reading yet never grows the server's memory without bound; readers get any chunk
// by its sequence number, which is what lets a client resume a stream where it broke.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ukes/v1/ukes.pb.h"

namespace ukes::server {

// Bytes of results held in memory across all jobs.
class MemoryBudget {
 public:
  explicit MemoryBudget(std::int64_t limit) : limit_(limit) {}
  bool try_reserve(std::int64_t bytes);
  void force_reserve(std::int64_t bytes) { used_.fetch_add(bytes); }
  void release(std::int64_t bytes) { used_.fetch_sub(bytes); }
  std::int64_t used() const { return used_.load(); }
  std::int64_t limit() const { return limit_; }

 private:
  const std::int64_t limit_;
  std::atomic<std::int64_t> used_{0};
};

class ResultLog {
 public:
  using Chunk = v1::StreamJobResultsResponse;

  // spill_path: the file chunks go to once the budget is spent (created on first use).
  ResultLog(std::string spill_path, MemoryBudget& budget);
  ~ResultLog();  // gives the memory back and removes the spill file
  ResultLog(const ResultLog&) = delete;
  ResultLog& operator=(const ResultLog&) = delete;

  // Numbers the chunk (size() + 1) and appends it; returns its sequence. Throws
  // std::runtime_error when the spill file cannot be written (the message reaches clients: it
  // names no server path). `in_memory` keeps the chunk in
  // memory whatever the budget (for the small JobEnd, which must not be lost to a full disk).
  std::int64_t append(Chunk chunk, bool in_memory = false);
  std::int64_t size() const;
  // Chunk `sequence` (1-based), or nullptr when there is none (yet).
  std::shared_ptr<const Chunk> get(std::int64_t sequence) const;

  std::int64_t memory_bytes() const;
  std::int64_t spilled_bytes() const;

 private:
  struct Entry {
    std::shared_ptr<const Chunk> chunk;  // null when spilled
    std::int64_t offset = 0;             // in the spill file
    std::int64_t length = 0;
  };

  const std::string spill_path_;
  MemoryBudget& budget_;
  mutable std::mutex mu_;
  std::vector<Entry> entries_;
  int spill_fd_ = -1;
  std::int64_t spill_end_ = 0;
  std::int64_t memory_bytes_ = 0;
};

}  // namespace ukes::server
