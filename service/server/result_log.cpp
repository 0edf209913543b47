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
                     std::int64_t stored, std::set<std::int64_t> missing)
    : storage_(std::move(storage)),
      budget_(budget),
      entries_(static_cast<std::size_t>(stored)),
      produced_(stored),
      missing_(std::move(missing)),
      missing_found_(static_cast<std::int64_t>(missing_.size())) {}

ResultLog::~ResultLog() { budget_.release(memory_bytes_); }

bool ResultLog::replayed(const Chunk& chunk, std::int64_t sequence) {
  if (sequence > static_cast<std::int64_t>(entries_.size())) return false;
  if (missing_.count(sequence) > 0) return false;
  // Progress reports carry timings, which differ from run to run; the results must not.
  if (chunk.has_summaries() || chunk.has_trajectory() || chunk.has_statistics()) {
    Chunk stored;
    try {
      // Compared as messages: serializations of equal maps may differ in order.
      if (!stored.ParseFromString(storage_->get(sequence)) ||
          !google::protobuf::util::MessageDifferencer::Equals(stored, chunk))
        ++replay_mismatches_;
    } catch (const CorruptRecordError&) {
      missing_.insert(sequence);  // this chunk replaces it
      ++missing_found_;
      return false;
    }
  }
  return true;
}

std::int64_t ResultLog::append(std::vector<Chunk> chunks, bool in_memory, std::int64_t slice_end) {
  const std::lock_guard lock(mu_);
  const std::int64_t produced_before = produced_;
  const auto size_before = static_cast<std::int64_t>(entries_.size());
  std::vector<Chunk> fresh;
  std::vector<StoredChunk> out;  // what the storage gets: fills of missing chunks, then fresh ones
  for (Chunk& chunk : chunks) {
    chunk.set_sequence(++produced_);
    if (replayed(chunk, produced_)) continue;
    if (produced_ <= size_before)  // missing: filled in the storage, read back from there
      out.push_back({produced_, static_cast<int>(chunk.payload_case()), chunk.SerializeAsString(),
                     slice_end});
    else if (!sealed_)
      fresh.push_back(std::move(chunk));
  }
  const std::size_t fills = out.size();
  // Memory keeps what the budget allows (given back if the storage fails); the storage gets
  // every chunk or only the others.
  std::vector<bool> kept(fresh.size());
  std::int64_t reserved = 0, stored = 0;
  for (std::size_t k = 0; k < fresh.size(); ++k) {
    const auto bytes = static_cast<std::int64_t>(fresh[k].ByteSizeLong());
    const bool fits = budget_.try_reserve(bytes);
    if (!fits && in_memory) budget_.force_reserve(bytes);
    kept[k] = fits || in_memory;
    if (kept[k]) reserved += bytes;
    if (kept[k] && !storage_->keeps_every_chunk()) continue;
    out.push_back({size_before + static_cast<std::int64_t>(k) + 1,
                   static_cast<int>(fresh[k].payload_case()), fresh[k].SerializeAsString(),
                   slice_end});
  }
  for (std::size_t k = fills; k < out.size(); ++k)
    stored += static_cast<std::int64_t>(out[k].data.size());
  bool written = true;
  try {
    storage_->put(out);
  } catch (const DiskFullError&) {
    // The header and JobEnd stay in memory: the job can still be followed to its end.
    if (!in_memory) {
      budget_.release(reserved);
      produced_ = produced_before;
      throw;
    }
    written = false;
    stored = 0;
  } catch (...) {
    budget_.release(reserved);
    produced_ = produced_before;
    throw;
  }
  if (written)
    for (std::size_t k = 0; k < fills; ++k) missing_.erase(out[k].sequence);
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
    if (missing_.count(sequence) > 0) return nullptr;
    if (const auto& kept = entries_[static_cast<std::size_t>(sequence - 1)]) return kept;
  }
  // Stored chunks change only when a missing one is filled: read without holding the lock.
  auto chunk = std::make_shared<Chunk>();
  std::string bytes;
  try {
    bytes = storage_->get(sequence);
  } catch (const CorruptRecordError&) {
    std::function<void()> listener;
    {
      const std::lock_guard lock(mu_);
      if (missing_.insert(sequence).second) ++missing_found_;
      listener = on_missing_;
    }
    if (listener) listener();
    return nullptr;
  }
  if (!chunk->ParseFromString(bytes)) throw std::runtime_error("a stored result chunk is corrupt");
  return chunk;
}

void ResultLog::rewind() {
  const std::lock_guard lock(mu_);
  produced_ = 0;
}

void ResultLog::seal() {
  const std::lock_guard lock(mu_);
  sealed_ = true;
}

std::int64_t ResultLog::missing() const {
  const std::lock_guard lock(mu_);
  return static_cast<std::int64_t>(missing_.size());
}

bool ResultLog::is_missing(std::int64_t sequence) const {
  const std::lock_guard lock(mu_);
  return missing_.count(sequence) > 0;
}

std::int64_t ResultLog::missing_found() const {
  const std::lock_guard lock(mu_);
  return missing_found_;
}

void ResultLog::on_missing(std::function<void()> listener) {
  const std::lock_guard lock(mu_);
  on_missing_ = std::move(listener);
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
