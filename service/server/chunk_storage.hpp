// Where a job's result chunks live beyond memory (service/server/result_log.hpp): a spill file
// for the jobs of a server without --data-dir, which holds only the chunks the memory budget
// cannot and goes with its log, or the job store for durable jobs, which holds every chunk and
// outlives the process (service/server/job_store.hpp).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "service/server/job_store.hpp"

namespace ukes::server {

class ChunkStorage {
 public:
  virtual ~ChunkStorage() = default;
  // Whether the log must store every chunk here (then memory only caches them).
  virtual bool keeps_every_chunk() const = 0;
  // Stores the chunks (all or none); std::runtime_error whose message names no server path when
  // it cannot.
  virtual void put(const std::vector<StoredChunk>& chunks) = 0;
  // A stored chunk's bytes; std::runtime_error when they cannot be read.
  virtual std::string get(std::int64_t sequence) const = 0;
};

// An append-only file of the chunks a memory-only log cannot hold in memory, created on first
// use and removed with the log.
class SpillFile final : public ChunkStorage {
 public:
  explicit SpillFile(std::string path) : path_(std::move(path)) {}
  ~SpillFile() override;
  bool keeps_every_chunk() const override { return false; }
  void put(const std::vector<StoredChunk>& chunks) override;
  std::string get(std::int64_t sequence) const override;

 private:
  const std::string path_;
  mutable std::mutex mu_;
  int fd_ = -1;
  std::int64_t end_ = 0;
  std::map<std::int64_t, std::pair<std::int64_t, std::int64_t>> where_;  // offset, length
};

// One durable job's chunks in the job store.
class StoredChunks final : public ChunkStorage {
 public:
  StoredChunks(std::shared_ptr<JobStore> store, std::string job_id)
      : store_(std::move(store)), job_id_(std::move(job_id)) {}
  bool keeps_every_chunk() const override { return true; }
  void put(const std::vector<StoredChunk>& chunks) override { store_->put_chunks(job_id_, chunks); }
  std::string get(std::int64_t sequence) const override;

 private:
  std::shared_ptr<JobStore> store_;
  std::string job_id_;
};

}  // namespace ukes::server
