// A spill file that cannot be written (a full disk) fails the job that needed it, cleanly and
// without naming server paths; SubmitJob keeps accepting jobs meanwhile (their headers stay in
// memory), and once the disk has room again jobs run as before. Once, every later SubmitJob got
// INTERNAL with the spill file's path until the failed job expired.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "service/server/job_manager.hpp"

namespace ukes::server {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    std::string pattern = fs::temp_directory_path().string() + "/ukes_disk_full_XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

v1::SubmitJobRequest request(const std::string& spec) {
  v1::SubmitJobRequest r;
  r.set_spec_json(spec);
  return r;
}

v1::JobState wait_ended(const Job& job) {
  const auto t0 = std::chrono::steady_clock::now();
  while (!job.ended() && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60))
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return job.state();
}

// About 2.5 MB of trajectories: far beyond a 256 KiB budget.
constexpr const char* kSpillingSpec = R"({"model": "duffing", "sweep": {"count": 200},
  "integrator": {"method": "rk4", "t_end": 1.0, "dt": 1e-3},
  "output": {"samples": 201, "trajectories": "all"}})";
// Its header (with 200 KiB of description) needs more than the budget the failed job left.
const std::string kSmallSpec =
    R"({"model": "duffing", "description": ")" + std::string(200 << 10, 'd') + R"(",
  "integrator": {"method": "rk4", "t_end": 0.1, "dt": 1e-3}, "output": {"samples": 11}})";

TEST(DiskFull, TheJobThatCannotSpillFailsAndSubmitKeepsWorking) {
  const TempDir dir;
  // The server's private directory goes there (TMPDIR restored when the test ends).
  const char* tmpdir = std::getenv("TMPDIR");
  const std::string old_tmpdir = tmpdir != nullptr ? tmpdir : "";
  setenv("TMPDIR", dir.path().c_str(), 1);
  const std::unique_ptr<const char, void (*)(const char*)> restore(old_tmpdir.c_str(),
                                                                   [](const char* old) {
                                                                     if (*old != '\0')
                                                                       setenv("TMPDIR", old, 1);
                                                                     else
                                                                       unsetenv("TMPDIR");
                                                                   });
  ServerOptions o;  // no data_dir: memory-only jobs, which spill to a file
  o.memory_budget_bytes = std::int64_t{256} << 10;
  o.max_concurrent_jobs = 1;
  o.threads = 1;
  o.device = Device::kCpu;
  JobManager jobs(o);
  const fs::path data = jobs.data_dir();
  // No spill file can be created from now on: the data directory is a regular file.
  fs::remove_all(data);
  std::ofstream(data) << "not a directory\n";

  const auto failed = jobs.submit(request(kSpillingSpec));
  EXPECT_EQ(wait_ended(*failed), v1::JOB_STATE_FAILED);
  EXPECT_NE(failed->message().find("spill file"), std::string::npos) << failed->message();
  EXPECT_EQ(failed->message().find(dir.path().string()), std::string::npos) << failed->message();
  EXPECT_GT(failed->log().size(), 2) << "what was computed before the failure is kept";

  // Accepted while the disk is still full (the header needs no spill file).
  const auto accepted = jobs.submit(request(kSmallSpec));
  ASSERT_GE(accepted->log().size(), 1);
  EXPECT_TRUE(accepted->log().get(1)->has_header());
  wait_ended(*accepted);

  // Room again: jobs run as before.
  fs::remove(data);
  fs::create_directories(data);
  const auto later = jobs.submit(request(kSpillingSpec));
  EXPECT_EQ(wait_ended(*later), v1::JOB_STATE_SUCCEEDED) << later->message();
  jobs.shutdown();
}

}  // namespace
}  // namespace ukes::server
