// A job's results as an append-only log of numbered chunks. Chunks stay in memory while the
// server-wide MemoryBudget allows; beyond it they are read back from the log's storage
// (service/server/chunk_storage.hpp): a spill file, so that a job nobody is reading yet never
// grows the server's memory without bound, or, for durable jobs, the job store, which holds
// every chunk. Readers get any chunk by its sequence number, which is what lets a client resume
// a stream where it broke.
//
// A durable log reopened after a restart holds the chunks stored before; the job then runs
// again from the start, and the chunks it produces that are already stored are checked against
// them and dropped (results are deterministic), so every sequence number keeps one chunk.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "service/server/chunk_storage.hpp"
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

  // A memory-only log spilling to `spill_path` (created on first use).
  ResultLog(std::string spill_path, MemoryBudget& budget);
  // A log over `storage` that already holds chunks 1..stored (a durable job reopened; its
  // header, chunk 1, is not produced again).
  ResultLog(std::unique_ptr<ChunkStorage> storage, MemoryBudget& budget, std::int64_t stored = 0);
  ~ResultLog();  // gives the memory back
  ResultLog(const ResultLog&) = delete;
  ResultLog& operator=(const ResultLog&) = delete;

  // Numbers the chunks and appends them (to the storage together: all or none); returns the
  // last one's sequence. Throws std::runtime_error when the storage cannot be written (the
  // message reaches clients: it names no server path). `in_memory` keeps the chunks in memory
  // whatever the budget (for the small header and JobEnd, which must not be lost to a full
  // disk).
  std::int64_t append(std::vector<Chunk> chunks, bool in_memory = false);
  std::int64_t append(Chunk chunk, bool in_memory = false);
  std::int64_t size() const;
  // Chunk `sequence` (1-based), or nullptr when there is none (yet).
  std::shared_ptr<const Chunk> get(std::int64_t sequence) const;

  std::int64_t memory_bytes() const;
  std::int64_t spilled_bytes() const;  // written to the storage
  // Chunks produced again after a restart that differ from the stored ones (kept: clients may
  // have them). Results are deterministic, so this stays 0 unless the machine changed.
  std::int64_t replay_mismatches() const;

 private:
  // Whether a produced chunk is one already stored (and checks it against the stored one).
  bool replayed(const Chunk& chunk, std::int64_t sequence);

  std::unique_ptr<ChunkStorage> storage_;
  MemoryBudget& budget_;
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<const Chunk>> entries_;  // null: in the storage
  std::int64_t produced_ = 0;                          // chunks the job has produced this run
  std::int64_t stored_bytes_ = 0;
  std::int64_t memory_bytes_ = 0;
  std::int64_t replay_mismatches_ = 0;
};

}  // namespace ukes::server
