// A --data-dir across a server killed with SIGKILL: held by one live server at a time, free again
// once its server is dead, and cleared of the dead jobs' spill files by the next server
// (service/server/data_dir.hpp). Jobs themselves live in memory and do not survive (README.md).
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/server_process.hpp"

namespace ukes {
namespace {

namespace fs = std::filesystem;
using testing::ServerProcess;

TEST(Restart, ADataDirOutlivesAKilledServerAndLosesItsSpillFiles) {
  std::string tmpl = (fs::temp_directory_path() / "ukes_restart_test_XXXXXX").string();
  ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
  const fs::path data = fs::path(tmpl) / "data";
  const std::vector<std::string> flags = {"--data-dir", data.string()};
  {
    ServerProcess first(flags, testing::DataDir::kPrivate);
    try {
      ServerProcess second(flags, testing::DataDir::kPrivate);
      ADD_FAILURE() << "two servers started on one --data-dir";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("in use by another ukes-server"), std::string::npos)
          << e.what();
    }
    ::kill(first.pid(), SIGKILL);
    first.wait_exit(10);
  }
  std::ofstream(data / "j-00112233445566778899aabbccddeeff.chunks") << "a dead job's chunks";
  ServerProcess next(flags, testing::DataDir::kPrivate);
  EXPECT_FALSE(fs::exists(data / "j-00112233445566778899aabbccddeeff.chunks"));
  EXPECT_NE(next.log_text().find("\"orphans_removed\""), std::string::npos) << next.log_text();
  next.stop();
  fs::remove_all(tmpl);
}

}  // namespace
}  // namespace ukes
