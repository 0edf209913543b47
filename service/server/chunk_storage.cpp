#include "service/server/chunk_storage.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace ukes::server {

namespace {

// After a failed call: DiskFullError for a full disk, which the job's end names as such.
[[noreturn]] void fail(const char* what) {
  if (errno == ENOSPC || errno == EDQUOT) throw DiskFullError();
  throw std::runtime_error(std::string(what) + ": " + std::strerror(errno));
}

}  // namespace

SpillFile::~SpillFile() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(path_.c_str());
  }
}

void SpillFile::put(const std::vector<StoredChunk>& chunks) {
  if (chunks.empty()) return;
  const std::lock_guard lock(mu_);
  if (fd_ < 0) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd_ < 0) fail("cannot create the spill file");
  }
  for (const StoredChunk& c : chunks) {
    std::size_t done = 0;
    while (done < c.data.size()) {
      const ssize_t w = ::pwrite(fd_, c.data.data() + done, c.data.size() - done,
                                 static_cast<off_t>(end_ + static_cast<std::int64_t>(done)));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) fail("cannot write the spill file");
      done += static_cast<std::size_t>(w);
    }
    where_[c.sequence] = {end_, static_cast<std::int64_t>(c.data.size())};
    end_ += static_cast<std::int64_t>(c.data.size());
  }
}

std::string SpillFile::get(std::int64_t sequence) const {
  std::pair<std::int64_t, std::int64_t> at;
  {
    const std::lock_guard lock(mu_);
    const auto it = where_.find(sequence);
    if (it == where_.end()) throw std::runtime_error("a spilled chunk is missing");
    at = it->second;
  }
  // Written once and never moved: read without holding the lock.
  std::string data(static_cast<std::size_t>(at.second), '\0');
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t r = ::pread(fd_, data.data() + done, data.size() - done,
                              static_cast<off_t>(at.first + static_cast<std::int64_t>(done)));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0)
      throw std::runtime_error(std::string("cannot read the spill file: ") + std::strerror(errno));
    done += static_cast<std::size_t>(r);
  }
  return data;
}

std::string StoredChunks::get(std::int64_t sequence) const {
  std::string data = store_->chunk(job_id_, sequence);
  if (data.empty()) throw std::runtime_error("a stored chunk is missing");
  return data;
}

}  // namespace ukes::server
