#include "service/server/result_log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace ukes::server {

bool MemoryBudget::try_reserve(std::int64_t bytes) {
  std::int64_t used = used_.load();
  while (used + bytes <= limit_)
    if (used_.compare_exchange_weak(used, used + bytes)) return true;
  return false;
}

ResultLog::ResultLog(std::string spill_path, MemoryBudget& budget)
    : spill_path_(std::move(spill_path)), budget_(budget) {}

ResultLog::~ResultLog() {
  budget_.release(memory_bytes_);
  if (spill_fd_ >= 0) {
    ::close(spill_fd_);
    ::unlink(spill_path_.c_str());
  }
}

std::int64_t ResultLog::append(Chunk chunk, bool in_memory) {
  const std::lock_guard lock(mu_);
  const auto sequence = static_cast<std::int64_t>(entries_.size()) + 1;
  chunk.set_sequence(sequence);
  const auto bytes = static_cast<std::int64_t>(chunk.ByteSizeLong());
  Entry e;
  const bool fits = budget_.try_reserve(bytes);
  if (fits || in_memory) {
    if (!fits) budget_.force_reserve(bytes);
    memory_bytes_ += bytes;
    e.chunk = std::make_shared<const Chunk>(std::move(chunk));
  } else {
    if (spill_fd_ < 0) {
      spill_fd_ = ::open(spill_path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      if (spill_fd_ < 0)
        throw std::runtime_error(std::string("cannot create the spill file: ") +
                                 std::strerror(errno));
    }
    const std::string data = chunk.SerializeAsString();
    std::size_t done = 0;
    while (done < data.size()) {
      const ssize_t w = ::pwrite(spill_fd_, data.data() + done, data.size() - done,
                                 static_cast<off_t>(spill_end_ + static_cast<std::int64_t>(done)));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0)
        throw std::runtime_error(std::string("cannot write the spill file: ") +
                                 std::strerror(errno));
      done += static_cast<std::size_t>(w);
    }
    e.offset = spill_end_;
    e.length = static_cast<std::int64_t>(data.size());
    spill_end_ += e.length;
  }
  entries_.push_back(std::move(e));
  return sequence;
}

std::int64_t ResultLog::size() const {
  const std::lock_guard lock(mu_);
  return static_cast<std::int64_t>(entries_.size());
}

std::shared_ptr<const ResultLog::Chunk> ResultLog::get(std::int64_t sequence) const {
  Entry e;
  {
    const std::lock_guard lock(mu_);
    if (sequence < 1 || sequence > static_cast<std::int64_t>(entries_.size())) return nullptr;
    e = entries_[static_cast<std::size_t>(sequence - 1)];
  }
  if (e.chunk) return e.chunk;
  // Spilled chunks are written once and never moved: read without holding the lock.
  std::string data(static_cast<std::size_t>(e.length), '\0');
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t r = ::pread(spill_fd_, data.data() + done, data.size() - done,
                              static_cast<off_t>(e.offset + static_cast<std::int64_t>(done)));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0)
      throw std::runtime_error(std::string("cannot read the spill file: ") + std::strerror(errno));
    done += static_cast<std::size_t>(r);
  }
  auto chunk = std::make_shared<Chunk>();
  if (!chunk->ParseFromString(data)) throw std::runtime_error("the spill file is corrupt");
  return chunk;
}

std::int64_t ResultLog::memory_bytes() const {
  const std::lock_guard lock(mu_);
  return memory_bytes_;
}

std::int64_t ResultLog::spilled_bytes() const {
  const std::lock_guard lock(mu_);
  return spill_end_;
}

}  // namespace ukes::server
