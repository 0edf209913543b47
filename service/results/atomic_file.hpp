// Files that appear whole or not at all: written to a temporary next to the target (same
// directory, so the final rename is atomic) and renamed onto it by commit(); a PendingFile that is
// destroyed without commit() removes its temporary.
#pragma once

#include <string>
#include <string_view>

namespace ukes {

class PendingFile {
 public:
  PendingFile() = default;
  // Chooses a fresh temporary name next to `path`; nothing is created yet.
  explicit PendingFile(std::string path);
  PendingFile(PendingFile&& other) noexcept;
  PendingFile& operator=(PendingFile&& other) noexcept;
  PendingFile(const PendingFile&) = delete;
  PendingFile& operator=(const PendingFile&) = delete;
  ~PendingFile();

  const std::string& path() const { return path_; }
  const std::string& temp_path() const { return temp_; }
  bool pending() const { return !temp_.empty(); }
  // Renames the temporary onto path(); throws std::runtime_error (and removes the temporary).
  void commit();
  // Removes the temporary.
  void discard() noexcept;
  // Forgets the temporary without removing it (it was never ours).
  void release() noexcept { temp_.clear(); }

 private:
  std::string path_;
  std::string temp_;
};

// A PendingFile for `path` whose temporary exists (created exclusively, empty): write it by name.
PendingFile create_pending_file(const std::string& path);

// Flushes a written file to disk; throws std::runtime_error.
void sync_file(const std::string& path);

// Writes `content` to a PendingFile for `path` (created exclusively, flushed to disk).
PendingFile stage_text_file(const std::string& path, std::string_view content);

// Throws std::runtime_error unless a file can be created at `path` (its directory exists and is
// writable, and `path` is not a directory): lets a caller fail before a long run.
void check_writable(const std::string& path);

}  // namespace ukes
