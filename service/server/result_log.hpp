// A job's results as an append-only log of numbered chunks. Chunks stay in memory while the
// server-wide MemoryBudget allows; beyond it they are read back from the log's storage
// (service/server/chunk_storage.hpp): a spill file, so that a job nobody is reading yet never
// grows the server's memory without bound, or, for durable jobs, the job store, which holds
// every chunk. Readers get any chunk by its sequence number, which is what lets a client resume
// a stream where it broke.
//
// A durable log reopened after a restart holds the chunks stored before; the job then runs
// again from the start, and the chunks it produces that are already stored are checked against
// them and dropped (results are deterministic), so every sequence number keeps one chunk. A
// stored chunk found corrupt (its checksum, service/server/job_store.hpp) is never handed out: it
// becomes a missing chunk, which readers wait for, and which the next run of the job fills with
// the chunk it produces at that sequence. An ended job's log is sealed: runs after that only fill
// missing chunks, and the log never grows.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
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
  // A log over `storage` that already holds chunks 1..stored but for `missing` (a durable job
  // reopened).
  ResultLog(std::unique_ptr<ChunkStorage> storage, MemoryBudget& budget, std::int64_t stored = 0,
            std::set<std::int64_t> missing = {});
  ~ResultLog();  // gives the memory back
  ResultLog(const ResultLog&) = delete;
  ResultLog& operator=(const ResultLog&) = delete;

  // Numbers the chunks and appends them (to the storage together: all or none); returns the
  // last one's sequence. Throws DiskFullError or std::runtime_error when the storage cannot be
  // written (the message reaches clients: it names no server path). `in_memory` keeps the chunks
  // in memory whatever the budget, and in memory alone when the disk is full (for the small
  // header and JobEnd, which must not be lost to a full disk). `slice_end`: the chunks are a
  // slice's, after which that many systems are done (StoredChunk::slice_end).
  std::int64_t append(std::vector<Chunk> chunks, bool in_memory = false,
                      std::int64_t slice_end = 0);
  std::int64_t append(Chunk chunk, bool in_memory = false);
  std::int64_t size() const;
  // Chunk `sequence` (1-based), or nullptr when there is none (yet) or it is missing. A stored
  // chunk that fails its checksum becomes missing here, and the listener set with
  // on_missing is called.
  std::shared_ptr<const Chunk> get(std::int64_t sequence) const;

  // A run of a stored log produces it again from its first chunk (the header) on.
  void rewind();
  // The job ended: from now on only missing chunks are taken.
  void seal();
  // Missing chunks (see above): how many there are, whether `sequence` is one, and how many
  // were ever found (which tells a run whether more went missing while it ran).
  std::int64_t missing() const;
  bool is_missing(std::int64_t sequence) const;
  std::int64_t missing_found() const;
  // Called (no lock held) when get() finds a stored chunk corrupt.
  void on_missing(std::function<void()> listener);

  std::int64_t memory_bytes() const;
  std::int64_t spilled_bytes() const;  // written to the storage
  // Chunks produced again after a restart that differ from the stored ones (kept: clients may
  // have them). Results are deterministic, so this stays 0 unless the machine changed.
  std::int64_t replay_mismatches() const;

 private:
  // Whether a produced chunk is one already stored (and checks it against the stored one); a
  // chunk that fills a missing one is not.
  bool replayed(const Chunk& chunk, std::int64_t sequence);

  std::unique_ptr<ChunkStorage> storage_;
  MemoryBudget& budget_;
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<const Chunk>> entries_;  // null: in the storage
  // Chunks produced: by this run (rewind), else the log's end, where a JobEnd written outside a
  // run (a job ended at recovery) goes.
  std::int64_t produced_ = 0;
  std::int64_t stored_bytes_ = 0;
  std::int64_t memory_bytes_ = 0;
  std::int64_t replay_mismatches_ = 0;
  mutable std::set<std::int64_t> missing_;
  mutable std::int64_t missing_found_ = 0;
  bool sealed_ = false;
  std::function<void()> on_missing_;
};

}  // namespace ukes::server
