#include "service/server/data_dir.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <system_error>

namespace ukes::server {
namespace {

namespace fs = std::filesystem;

// An exclusive flock on dir/kLockFile, or -1 when another process holds it.
int try_lock(const fs::path& dir) {
  const int fd = ::open((dir / DataDir::kLockFile).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) throw std::runtime_error("cannot create the lock file in " + dir.string());
  if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return fd;
  ::close(fd);
  return -1;
}

// Whether no live process holds dir's lock. A directory without a lock file is taken for dead
// only once a minute old: a server that is starting creates its lock just after its directory.
bool abandoned(const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(dir / DataDir::kLockFile, ec)) {
    const auto age = fs::file_time_type::clock::now() - fs::last_write_time(dir, ec);
    return !ec && age > std::chrono::minutes(1);
  }
  const int fd = ::open((dir / DataDir::kLockFile).c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return false;
  const bool free = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
  ::close(fd);
  return free;
}

}  // namespace

DataDir::DataDir(const std::string& path) {
  const char* tmp = std::getenv("TMPDIR");
  const fs::path tmpdir = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(tmpdir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(kPrivatePrefix, 0) != 0 || !entry.is_directory(ec) || !abandoned(entry.path()))
      continue;
    if (fs::remove_all(entry.path(), ec) > 0 && !ec) ++removed_private_dirs_;
  }
  if (path.empty()) {
    std::string pattern = (tmpdir / (std::string(kPrivatePrefix) + "XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr)
      throw std::runtime_error("cannot create a data directory under " + tmpdir.string());
    path_ = pattern;
    private_ = true;
  } else {
    path_ = path;
    // It holds every user's specs and results: a directory made here is its owner's alone
    // (mkdtemp's private directories are 0700 too).
    if (fs::create_directories(path_))
      fs::permissions(path_, fs::perms::owner_all, fs::perm_options::replace);
  }
  lock_fd_ = try_lock(path_);
  if (lock_fd_ < 0)
    throw std::runtime_error("--data-dir " + path_ + " is in use by another ukes-server");
  for (const auto& entry : fs::directory_iterator(path_, ec))
    if (entry.path().extension() == ".chunks" && fs::remove(entry.path(), ec))
      ++removed_spill_files_;
}

DataDir::~DataDir() {
  std::error_code ec;
  if (private_) fs::remove_all(path_, ec);
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

}  // namespace ukes::server
