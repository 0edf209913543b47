#include "service/server/result_log.hpp"

#include <google/protobuf/util/message_differencer.h>

#include <stdexcept>

namespace ukes::server {

bool MemoryBudget::try_reserve(std::int64_t bytes) {
  std::int64_t used = used_.load();
  while (used + bytes <= limit_)
    if (used_.compare_exchange_weak(used, used + bytes)) return true;
  return false;
}

ResultLog::ResultLog(std::string spill_path, MemoryBudget& budget)
    : ResultLog(std::make_unique<SpillFile>(std::move(spill_path)), budget) {}

ResultLog::ResultLog(std::unique_ptr<ChunkStorage> storage, MemoryBudget& budget,
                     std::int64_t stored)
    : storage_(std::move(storage)),
      budget_(budget),
      entries_(static_cast<std::size_t>(stored)),
      produced_(stored > 0 ? 1 : 0) {}

ResultLog::~ResultLog() { budget_.release(memory_bytes_); }

bool ResultLog::replayed(const Chunk& chunk, std::int64_t sequence) {
  if (sequence > static_cast<std::int64_t>(entries_.size())) return false;
  // Progress reports carry timings, which differ from run to run; the results must not.
  if (chunk.has_summaries() || chunk.has_trajectory() || chunk.has_statistics()) {
    Chunk stored;
    // Compared as messages: serializations of equal maps may differ in order.
    if (!stored.ParseFromString(storage_->get(sequence)) ||
        !google::protobuf::util::MessageDifferencer::Equals(stored, chunk))
      ++replay_mismatches_;
  }
  return true;
}

std::int64_t ResultLog::append(std::vector<Chunk> chunks, bool in_memory) {
  const std::lock_guard lock(mu_);
  const std::int64_t produced_before = produced_;
  std::vector<Chunk> fresh;
  for (Chunk& chunk : chunks) {
    chunk.set_sequence(++produced_);
    if (!replayed(chunk, produced_)) fresh.push_back(std::move(chunk));
  }
  if (fresh.empty()) return produced_;
  // Memory keeps what the budget allows (given back if the storage fails); the storage gets
  // every chunk or only the others.
  std::vector<bool> kept(fresh.size());
  std::vector<StoredChunk> out;
  std::int64_t reserved = 0, stored = 0;
  auto sequence = static_cast<std::int64_t>(entries_.size());
  for (std::size_t k = 0; k < fresh.size(); ++k) {
    ++sequence;
    const auto bytes = static_cast<std::int64_t>(fresh[k].ByteSizeLong());
    const bool fits = budget_.try_reserve(bytes);
    if (!fits && in_memory) budget_.force_reserve(bytes);
    kept[k] = fits || in_memory;
    if (kept[k]) reserved += bytes;
    if (kept[k] && !storage_->keeps_every_chunk()) continue;
    out.push_back(
        {sequence, static_cast<int>(fresh[k].payload_case()), fresh[k].SerializeAsString()});
    stored += static_cast<std::int64_t>(out.back().data.size());
  }
  try {
    storage_->put(out);
  } catch (...) {
    budget_.release(reserved);
    produced_ = produced_before;
    throw;
  }
  stored_bytes_ += stored;
  memory_bytes_ += reserved;
  for (std::size_t k = 0; k < fresh.size(); ++k)
    entries_.push_back(kept[k] ? std::make_shared<const Chunk>(std::move(fresh[k])) : nullptr);
  return produced_;
}

std::int64_t ResultLog::append(Chunk chunk, bool in_memory) {
  std::vector<Chunk> one;
  one.push_back(std::move(chunk));
  return append(std::move(one), in_memory);
}

std::int64_t ResultLog::size() const {
  const std::lock_guard lock(mu_);
  return static_cast<std::int64_t>(entries_.size());
}

std::shared_ptr<const ResultLog::Chunk> ResultLog::get(std::int64_t sequence) const {
  {
    const std::lock_guard lock(mu_);
    if (sequence < 1 || sequence > static_cast<std::int64_t>(entries_.size())) return nullptr;
    if (const auto& kept = entries_[static_cast<std::size_t>(sequence - 1)]) return kept;
  }
  // Stored chunks are written once and never change: read without holding the lock.
  auto chunk = std::make_shared<Chunk>();
  if (!chunk->ParseFromString(storage_->get(sequence)))
    throw std::runtime_error("a stored result chunk is corrupt");
  return chunk;
}

std::int64_t ResultLog::memory_bytes() const {
  const std::lock_guard lock(mu_);
  return memory_bytes_;
}

std::int64_t ResultLog::spilled_bytes() const {
  const std::lock_guard lock(mu_);
  return stored_bytes_;
}

std::int64_t ResultLog::replay_mismatches() const {
  const std::lock_guard lock(mu_);
  return replay_mismatches_;
}

}  // namespace ukes::server
