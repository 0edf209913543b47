#include "service/results/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>
#include <stdexcept>

namespace ukes {

namespace {

std::string directory_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string base_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string temp_name(const std::string& path) {
  static std::atomic<unsigned> counter{0};
  static const unsigned salt = std::random_device{}();
  const std::string dir = directory_of(path);
  return (dir == "/" ? std::string() : dir) + "/." + base_of(path) + ".tmp-" +
         std::to_string(::getpid()) + "-" + std::to_string(salt) + "-" + std::to_string(counter++);
}

std::string errno_text(int err) { return std::strerror(err); }

}  // namespace

PendingFile::PendingFile(std::string path) : path_(std::move(path)), temp_(temp_name(path_)) {}

PendingFile::PendingFile(PendingFile&& other) noexcept
    : path_(std::move(other.path_)), temp_(std::move(other.temp_)) {
  other.temp_.clear();
}

PendingFile& PendingFile::operator=(PendingFile&& other) noexcept {
  if (this != &other) {
    discard();
    path_ = std::move(other.path_);
    temp_ = std::move(other.temp_);
    other.temp_.clear();
  }
  return *this;
}

PendingFile::~PendingFile() { discard(); }

void PendingFile::commit() {
  if (temp_.empty()) throw std::runtime_error(path_ + ": nothing to commit");
  if (std::rename(temp_.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    discard();
    throw std::runtime_error(path_ + ": cannot write: " + errno_text(err));
  }
  temp_.clear();
}

void PendingFile::discard() noexcept {
  if (!temp_.empty()) {
    ::unlink(temp_.c_str());
    temp_.clear();
  }
}

PendingFile create_pending_file(const std::string& path) {
  PendingFile f(path);
  const int fd = ::open(f.temp_path().c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) {
    const int err = errno;
    f.release();  // not ours: a file of that name that we did not create must stay
    throw std::runtime_error(path + ": cannot write: " + errno_text(err));
  }
  ::close(fd);
  return f;
}

void sync_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(path + ": cannot sync: " + errno_text(errno));
  const int err = ::fsync(fd) != 0 ? errno : 0;
  ::close(fd);
  if (err != 0) throw std::runtime_error(path + ": cannot sync: " + errno_text(err));
}

PendingFile stage_text_file(const std::string& path, std::string_view content) {
  PendingFile f = create_pending_file(path);
  const int fd = ::open(f.temp_path().c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(path + ": cannot write: " + errno_text(errno));
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t w = ::write(fd, content.data() + done, content.size() - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      throw std::runtime_error(path + ": cannot write: " + errno_text(err));
    }
    done += static_cast<std::size_t>(w);
  }
  const int sync_err = ::fsync(fd) != 0 ? errno : 0;
  const int close_err = ::close(fd) != 0 ? errno : 0;
  if (sync_err != 0 || close_err != 0)
    throw std::runtime_error(path +
                             ": cannot write: " + errno_text(sync_err != 0 ? sync_err : close_err));
  return f;
}

void check_writable(const std::string& path) {
  if (path.empty()) throw std::runtime_error("empty output path");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw std::runtime_error(path + ": is a directory");
  const std::string dir = directory_of(path);
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw std::runtime_error(path + ": directory " + dir + " does not exist");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw std::runtime_error(path + ": directory " + dir + " is not writable");
}

}  // namespace ukes
