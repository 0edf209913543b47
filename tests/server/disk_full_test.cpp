// A spill file that cannot be written (a full disk) fails the job that needed it, cleanly and
// without naming server paths; SubmitJob keeps accepting jobs meanwhile (their headers stay in
// memory), and once the disk has room again jobs run as before. Once, every later SubmitJob got
// INTERNAL with the spill file's path until the failed job expired.
//
// With durable jobs, on a real full file system (a 6 MiB tmpfs): the job whose chunks do not fit
// ends FAILED within seconds naming the disk, keeping what it had committed (once it stayed
// RUNNING forever, and so did its streams and cancel); submits and registrations are refused as
// a full disk (RESOURCE_EXHAUSTED at the service) and change nothing; once room returns they
// succeed without a restart.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/mount.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "service/runspec/model_source.hpp"
#include "service/server/job_manager.hpp"
#include "support/example_models.hpp"

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

// A tmpfs of `mib` MiB mounted on a fresh directory for the test's life; mounting needs root
// (CI runs as root), so elsewhere the test says why it skips.
class SmallDisk {
 public:
  explicit SmallDisk(int mib) {
    const std::string options = "size=" + std::to_string(mib) + "m,mode=0700";
    if (::mount("tmpfs", dir_.path().c_str(), "tmpfs", 0, options.c_str()) == 0)
      mounted_ = true;
    else
      error_ = std::strerror(errno);
  }
  ~SmallDisk() {
    if (mounted_) ::umount2(dir_.path().c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }
  const std::string& error() const { return error_; }
  fs::path path() const { return dir_.path(); }

  // Writes a file of at most `bytes` (until the disk is full); removing it makes room again.
  void fill(const fs::path& file, std::int64_t bytes = std::int64_t{1} << 40) const {
    std::FILE* f = std::fopen(file.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    const std::string block(64 << 10, 'f');
    for (std::int64_t done = 0; done < bytes; done += static_cast<std::int64_t>(block.size()))
      if (std::fwrite(block.data(), 1, block.size(), f) != block.size() || std::fflush(f) != 0)
        break;
    std::fclose(f);
  }

 private:
  TempDir dir_;
  bool mounted_ = false;
  std::string error_;
};

// About 9 MB of trajectories: beyond the 6 MiB disk.
constexpr const char* kLargeSpec = R"({"model": "duffing", "sweep": {"count": 700},
  "integrator": {"method": "rk4", "t_end": 1.0, "dt": 1e-3},
  "output": {"samples": 201, "trajectories": "all"}})";
constexpr const char* kTinySpec = R"({"model": "duffing", "sweep": {"count": 4},
  "integrator": {"method": "rk4", "t_end": 0.1, "dt": 1e-3}, "output": {"samples": 3}})";

TEST(DiskFull, ADurableJobThatCannotStoreItsChunksFailsAndCallsChangeNothingUntilRoomReturns) {
  const SmallDisk disk(6);
  if (!disk.mounted()) GTEST_SKIP() << "cannot mount a tmpfs here: " << disk.error();
  ServerOptions o;
  o.data_dir = (disk.path() / "data").string();
  o.memory_budget_bytes = std::int64_t{64} << 20;
  o.max_concurrent_jobs = 1;
  o.threads = 1;
  o.device = Device::kCpu;
  JobManager jobs(o);
  // What the operator frees later (the failed job's committed chunks stay, as they must).
  disk.fill(disk.path() / "ballast", std::int64_t{2} << 20);

  const auto t0 = std::chrono::steady_clock::now();
  const auto failed = jobs.submit(request(kLargeSpec), "alice");
  EXPECT_EQ(wait_ended(*failed), v1::JOB_STATE_FAILED);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(30));
  EXPECT_NE(failed->message().find("data disk is full"), std::string::npos) << failed->message();
  EXPECT_EQ(failed->message().find(disk.path().string()), std::string::npos) << failed->message();
  EXPECT_GT(failed->log().size(), 2) << "what was committed before the disk filled is kept";
  ASSERT_TRUE(failed->log().get(failed->log().size()) != nullptr);
  EXPECT_TRUE(failed->log().get(failed->log().size())->has_end()) << "its streams end";
  EXPECT_EQ(jobs.cancel(*failed), v1::JOB_STATE_FAILED) << "a cancel answers at once";

  // Whatever room the rollback left, none now.
  disk.fill(disk.path() / "filler");
  EXPECT_THROW(jobs.submit(request(kTinySpec), "alice"), DiskFullError);
  const auto model =
      user_model_from_json(nlohmann::json::parse(example_definition_text("spiral")), "definition");
  EXPECT_THROW(jobs.register_model("alice", model), DiskFullError);
  EXPECT_EQ(jobs.models().find("alice", model_id(*model)), nullptr) << "half-registered";
  // Nothing queued or running: the failed job's runner counts as running until its thread is
  // back from the job, a moment after the job ended, so that moment is waited for.
  const auto patience = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (jobs.running_jobs() > 0 && std::chrono::steady_clock::now() < patience)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(jobs.queued_jobs() + jobs.running_jobs(), 0);

  // Room again, without a restart.
  fs::remove(disk.path() / "filler");
  fs::remove(disk.path() / "ballast");
  const auto later = jobs.submit(request(kTinySpec), "alice");
  EXPECT_EQ(wait_ended(*later), v1::JOB_STATE_SUCCEEDED) << later->message();
  EXPECT_NE(jobs.register_model("alice", model), nullptr);
  jobs.shutdown();
}

}  // namespace
}  // namespace ukes::server
