// What a starting server removes of what dead servers left (service/server/data_dir.hpp): spill
// files in a --data-dir that no live server holds, and the private directories of servers that
// were killed; what it must leave: a live server's directory. A --data-dir is one server's.
#include "service/server/data_dir.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace ukes::server {
namespace {

namespace fs = std::filesystem;

class DataDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "ukes_data_dir_test_XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
    const char* old = std::getenv("TMPDIR");
    old_tmpdir_ = old != nullptr ? old : "";
    setenv("TMPDIR", root_.c_str(), 1);
  }
  void TearDown() override {
    if (old_tmpdir_.empty()) {
      unsetenv("TMPDIR");
    } else {
      setenv("TMPDIR", old_tmpdir_.c_str(), 1);
    }
    fs::remove_all(root_);
  }
  // A server's private directory as it leaves it, with a spill file in it.
  fs::path private_dir(const std::string& suffix) {
    const fs::path dir = root_ / (std::string(DataDir::kPrivatePrefix) + suffix);
    fs::create_directory(dir);
    std::ofstream(dir / DataDir::kLockFile);
    std::ofstream(dir / "j-1.chunks") << "chunk";
    return dir;
  }

  fs::path root_;
  std::string old_tmpdir_;
};

TEST_F(DataDirTest, DeadServersDirectoriesAreRemovedLiveOnesKept) {
  const fs::path dead = private_dir("dead01");
  const fs::path live = private_dir("live01");
  const int held = ::open((live / DataDir::kLockFile).c_str(), O_RDWR);  // a live server's lock
  ASSERT_EQ(::flock(held, LOCK_EX | LOCK_NB), 0);
  const fs::path foreign = root_ / "someone-elses";
  fs::create_directory(foreign);
  fs::path mine;
  {
    const DataDir dir("");
    mine = dir.path();
    EXPECT_EQ(dir.removed_private_dirs(), 1);
    EXPECT_FALSE(fs::exists(dead));
    EXPECT_TRUE(fs::exists(live / "j-1.chunks"));
    EXPECT_TRUE(fs::exists(foreign));
    EXPECT_TRUE(fs::exists(mine / DataDir::kLockFile));
    const DataDir other("");  // a second server: neither removes the other's
    EXPECT_EQ(other.removed_private_dirs(), 0);
    EXPECT_TRUE(fs::exists(mine));
  }
  EXPECT_FALSE(fs::exists(mine));  // a server's own private directory goes with it
  ::close(held);
}

TEST_F(DataDirTest, AGivenDirectoryIsOneServersAndLosesDeadJobsSpillFiles) {
  const fs::path given = root_ / "data";
  fs::create_directory(given);
  std::ofstream(given / "j-0123.chunks") << "chunk of a job that died with its server";
  std::ofstream(given / "notes.txt") << "not ours";
  {
    const DataDir dir(given.string());
    EXPECT_EQ(dir.removed_spill_files(), 1);
    EXPECT_FALSE(fs::exists(given / "j-0123.chunks"));
    EXPECT_TRUE(fs::exists(given / "notes.txt"));
    try {
      const DataDir again(given.string());
      ADD_FAILURE() << "two servers hold one --data-dir";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("in use by another ukes-server"), std::string::npos);
    }
  }
  EXPECT_TRUE(fs::exists(given));       // a given directory stays
  const DataDir later(given.string());  // free again once its server is gone
}

// A directory the server makes (it will hold every user's jobs) is its owner's alone.
TEST_F(DataDirTest, ADirectoryItMakesIsTheOwnersAlone) {
  const fs::path made = root_ / "new" / "data";
  const DataDir dir(made.string());
  EXPECT_EQ(fs::status(made).permissions(), fs::perms::owner_all);
}

}  // namespace
}  // namespace ukes::server
