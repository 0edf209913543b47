// The `ukes` client against a real ukes-server: a run on the server writes the same files as the
// same run in-process, spec errors and limits come back as usage errors naming the field, jobs can
// be submitted, watched, cancelled and attached to, a client killed mid-stream or a connection cut
// mid-stream loses nothing, and an unreachable server is a clear failure.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <hdf5.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "service/engine/version.hpp"
#include "support/server_process.hpp"
#include "tests/client/cli_support.hpp"
#include "ukes/v1/ukes.grpc.pb.h"

namespace ukes {
namespace {

namespace fs = std::filesystem;
using namespace cli_test;
using json = nlohmann::json;
using testing::ServerProcess;
using Clock = std::chrono::steady_clock;

std::string example(const char* name) {
  return quoted(std::string(UKES_SOURCE_DIR) + "/client/examples/" + name);
}

// ------------------------------------------------------------------ HDF5 read-back

// Same values, NaN equal to NaN (samples after a failure are NaN).
void expect_same_values(const std::vector<double>& a, const std::vector<double>& b,
                        const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (std::size_t k = 0; k < a.size(); ++k) {
    if (std::isnan(a[k]) && std::isnan(b[k])) continue;
    ASSERT_EQ(a[k], b[k]) << what << "[" << k << "]";
  }
}

void expect_same_trajectories(const fs::path& a, const fs::path& b) {
  H5File fa(a.string()), fb(b.string());
  ASSERT_GE(fa.id, 0) << a;
  ASSERT_GE(fb.id, 0) << b;
  for (const char* name :
       {"t", "system_ids", "q", "qd", "force", "residual", "params", "q0", "qd0", "status"}) {
    const std::vector<double> va = read_dataset(fa.id, name), vb = read_dataset(fb.id, name);
    expect_same_values(va, vb, name);
  }
  EXPECT_FALSE(read_dataset(fa.id, "q").empty());
}

// ------------------------------------------------------------------ results documents

// Systems and ensemble statistics of two results documents are identical (same code, same
// machine: the server's sharding and threads must not change a single bit).
void expect_same_results(const json& a, const json& b) {
  EXPECT_EQ(a.at("model"), b.at("model"));
  const json &sa = a.at("systems"), &sb = b.at("systems");
  ASSERT_EQ(sa.size(), sb.size());
  ASSERT_FALSE(sa.empty());
  for (std::size_t i = 0; i < sa.size(); ++i)
    for (const char* key : {"id", "status", "t", "q", "qd", "residual_max", "force_max",
                            "inconsistency_max", "steps", "rejected"})
      ASSERT_EQ(sa[i].value(key, json()), sb[i].value(key, json())) << "system " << i << " " << key;
  EXPECT_EQ(a.at("ensemble"), b.at("ensemble"));
}

// ------------------------------------------------------------------ a TCP proxy that can be cut

// Forwards 127.0.0.1:port() to a target port; cut() drops every open connection, as a network
// failure would, while new connections keep working; retarget() sends new connections to another
// port (a server restarted elsewhere behind the same address).
class TcpProxy {
 public:
  explicit TcpProxy(int target_port) : target_port_(target_port) {
    listener_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr = loopback(0);
    if (bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        listen(listener_, 16) != 0 || pipe(wake_) != 0)
      throw std::runtime_error("proxy: cannot listen");
    socklen_t len = sizeof addr;
    getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { loop(); });
  }
  ~TcpProxy() {
    stop_ = true;
    wake();
    thread_.join();
    for (auto& [a, b] : pairs_) close_pair(a, b);
    close(listener_);
    close(wake_[0]);
    close(wake_[1]);
  }
  TcpProxy(const TcpProxy&) = delete;
  TcpProxy& operator=(const TcpProxy&) = delete;

  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  void cut() {
    cut_ = true;
    wake();
  }
  void retarget(int port) { target_port_ = port; }

 private:
  static sockaddr_in loopback(int port) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return addr;
  }
  void wake() { [[maybe_unused]] const auto n = write(wake_[1], "x", 1); }
  static void close_pair(int a, int b) {
    shutdown(a, SHUT_RDWR);
    shutdown(b, SHUT_RDWR);
    close(a);
    close(b);
  }

  void accept_one() {
    const int client = accept(listener_, nullptr, nullptr);
    if (client < 0) return;
    const int server = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr = loopback(target_port_);
    if (connect(server, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      close(client);
      close(server);
      return;
    }
    pairs_.emplace_back(client, server);
  }

  // Copies what `from` has to `to`; false when the connection is over.
  static bool forward(int from, int to) {
    char buffer[1 << 16];
    const ssize_t n = read(from, buffer, sizeof buffer);
    if (n <= 0) return false;
    for (ssize_t done = 0; done < n;) {
      const ssize_t w = write(to, buffer + done, static_cast<std::size_t>(n - done));
      if (w <= 0) return false;
      done += w;
    }
    return true;
  }

  void loop() {
    while (!stop_) {
      if (cut_.exchange(false)) {
        for (auto& [a, b] : pairs_) close_pair(a, b);
        pairs_.clear();
      }
      std::vector<pollfd> fds = {{listener_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
      for (auto& [a, b] : pairs_) {
        fds.push_back({a, POLLIN, 0});
        fds.push_back({b, POLLIN, 0});
      }
      if (poll(fds.data(), fds.size(), 1000) <= 0) continue;
      if (fds[1].revents != 0) {
        char drain[64];
        [[maybe_unused]] const auto n = read(wake_[0], drain, sizeof drain);
      }
      std::vector<std::pair<int, int>> alive;
      for (std::size_t k = 0; k < pairs_.size(); ++k) {
        const auto [a, b] = pairs_[k];
        bool ok = true;
        if (fds[2 + 2 * k].revents != 0) ok = forward(a, b);
        if (ok && fds[3 + 2 * k].revents != 0) ok = forward(b, a);
        if (ok)
          alive.emplace_back(a, b);
        else
          close_pair(a, b);
      }
      pairs_ = std::move(alive);
      if (fds[0].revents != 0) accept_one();
    }
  }

  std::atomic<int> target_port_;
  int listener_ = -1;
  int port_ = 0;
  int wake_[2] = {-1, -1};
  std::atomic<bool> stop_{false}, cut_{false};
  std::vector<std::pair<int, int>> pairs_;  // (client, server), owned by the loop thread
  std::thread thread_;
};

// ------------------------------------------------------------------ fixture

// A scratch directory and a server; `ukes` runs in the scratch directory.
class RemoteCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "ukes_remote_cli_XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    base_ = tmpl;
    fs::create_directory(out());
  }
  void TearDown() override {
    if (server_) {
      EXPECT_TRUE(server_->alive()) << "the server died:\n" << server_->log_text();
    }
    server_.reset();
    fs::remove_all(base_);
  }

  void start_server(const std::vector<std::string>& flags = {"--threads", "2"}) {
    server_ = std::make_unique<ServerProcess>(flags);
    stub_ = v1::UkesService::NewStub(server_->channel());
  }
  std::string server() const { return server_->address(); }

  fs::path base() const { return base_; }
  fs::path out() const { return base_ / "out"; }

  // Runs `ukes ARGS` to its end; `env` ("NAME=VALUE ...") is added to its environment.
  Result ukes(const std::string& args, const std::string& env = "") const {
    return run_ukes(base_, args, env);
  }

  // Starts `ukes ARGS` in the background; its output goes to TAG.out / TAG.err.
  pid_t spawn_ukes(const std::string& args, const std::string& tag) const {
    const std::string line = ukes_command_line(base_, args, tag);
    const char* argv[] = {"/bin/sh", "-c", line.c_str(), nullptr};
    pid_t pid = -1;
    EXPECT_EQ(posix_spawn(&pid, "/bin/sh", nullptr, nullptr, const_cast<char**>(argv), environ), 0);
    return pid;
  }

  // Waits for a background `ukes` and returns its exit code (-1: killed or not done in time).
  static int wait_for(pid_t pid, std::chrono::seconds limit = std::chrono::seconds(120)) {
    const auto deadline = Clock::now() + limit;
    int status = 0;
    while (waitpid(pid, &status, WNOHANG) == 0) {
      if (Clock::now() > deadline) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        return -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  // The job id a background `ukes run --server` announced on standard error ("" on time-out);
  // with `server`, the one it announced on that server (a sharded run has one per shard).
  std::string announced_job_id(const std::string& tag, const std::string& server = "") const {
    const std::regex announce("ukes: job (\\S+) on " + server);
    const auto deadline = Clock::now() + std::chrono::seconds(30);
    while (Clock::now() < deadline) {
      std::smatch m;
      const std::string err = read_file(base_ / (tag + ".err"));
      if (std::regex_search(err, m, announce)) return m[1];
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return "";
  }

  // The job, from this test's server or from `other`.
  v1::GetJobResponse get_job(const std::string& id, ServerProcess* other = nullptr) const {
    grpc::ClientContext context;
    v1::GetJobRequest request;
    request.set_job_id(id);
    v1::GetJobResponse response;
    const grpc::Status s =
        other ? v1::UkesService::NewStub(other->channel())->GetJob(&context, request, &response)
              : stub_->GetJob(&context, request, &response);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return response;
  }

  // Waits until the job (on this test's server, or on `other`) has integrated some systems but
  // is still running.
  void wait_mid_run(const std::string& id, ServerProcess* other = nullptr) const {
    const auto deadline = Clock::now() + std::chrono::seconds(30);
    for (;;) {
      const v1::GetJobResponse job = get_job(id, other);
      if (job.state() == v1::JOB_STATE_RUNNING && job.progress().systems_done() > 0) return;
      ASSERT_LE(job.state(), v1::JOB_STATE_RUNNING) << "the job ended too soon to test this";
      ASSERT_LT(Clock::now(), deadline) << "the job did not start";
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  // Polls `ukes status` until its line starts with "job ID STATE"; returns the last line.
  std::string wait_for_state(const std::string& id, const std::string& state) const {
    const auto deadline = Clock::now() + std::chrono::seconds(60);
    std::string line;
    while (Clock::now() < deadline) {
      const Result r = ukes("status " + id + " --server " + server());
      EXPECT_EQ(r.code, 0) << r.err;
      line = r.out;
      if (line.rfind("job " + id + " " + state, 0) == 0) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return line;
  }

  json results(const char* name) const { return json::parse(read_file(out() / name)); }

 private:
  fs::path base_;
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<v1::UkesService::Stub> stub_;
};

// ~1.5 s of work on one thread: long enough to interrupt, short enough for a test.
constexpr const char* kLongDuffing = R"({
  "model": "duffing",
  "sweep": {"count": 1000, "seed": 5, "sampler": "lhs",
            "vary": {"params.m1": {"uniform": [1.5, 2.5]}, "q0[0]": {"normal": [1.0, 0.01]}}},
  "integrator": {"t_end": 20.0, "rtol": 1e-10, "atol": 1e-10},
  "output": {"samples": 51, "trajectories": "first:20"}
})";

// ------------------------------------------------------------------ 1. same files as in-process

TEST_F(RemoteCliTest, SweepOnServerWritesTheSameFilesAsInProcess) {
  start_server();
  // --count shrinks the example on both paths alike.
  const Result local = ukes("run " + example("duffing_sweep.json") +
                            " --count 300 --out out/local.json --h5 " + "out/local.h5");
  ASSERT_EQ(local.code, 0) << local.err;
  const Result remote = ukes("run " + example("duffing_sweep.json") + " --count 300 --server " +
                             server() + " --out out/remote.json --h5 out/remote.h5");
  ASSERT_EQ(remote.code, 0) << remote.err;

  const json a = results("local.json"), b = results("remote.json");
  EXPECT_EQ(a.at("ensemble").at("count"), 300);
  EXPECT_EQ(b.at("ensemble").at("ok"), 300);
  expect_same_results(a, b);
  expect_same_trajectories(out() / "local.h5", out() / "remote.h5");

  // The same summary on standard output, and the job announced on standard error.
  EXPECT_NE(remote.out.find("count 300, ok 300, failed 0"), std::string::npos) << remote.out;
  EXPECT_NE(remote.out.find("wrote out/remote.json"), std::string::npos) << remote.out;
  EXPECT_NE(remote.err.find("(reattach: ukes attach "), std::string::npos) << remote.err;
  EXPECT_NE(remote.err.find(" --server " + server() + ")"), std::string::npos) << remote.err;
}

TEST_F(RemoteCliTest, ExplicitBatchOnServerWritesTheSameFilesAsInProcess) {
  start_server();
  write_file(base() / "batch.json", R"({
    "model": "duffing",
    "params": {"k1": 10.5},
    "systems": [
      {"params": {"m1": 2.1}, "q0": [1.0, 1.0], "qd0": [8.283185307179586, 2.0]},
      {"params": {"A0": 0.5}},
      {"q0": [0.5, 0.25], "qd0": [6.0, 0.0]}
    ],
    "integrator": {"t_end": 3.0, "rtol": 1e-10, "atol": 1e-10},
    "output": {"samples": 21, "trajectories": [2, 0]}
  })");
  const Result local = ukes("run batch.json --out out/local.json --h5 out/local.h5");
  ASSERT_EQ(local.code, 0) << local.err;
  const Result remote =
      ukes("run batch.json --server " + server() + " --out out/remote.json --h5 out/remote.h5");
  ASSERT_EQ(remote.code, 0) << remote.err;
  const json a = results("local.json"), b = results("remote.json");
  ASSERT_EQ(b.at("systems").size(), 3u);
  expect_same_results(a, b);
  expect_same_trajectories(out() / "local.h5", out() / "remote.h5");
}

// ------------------------------------------------------------------ 2. usage and spec errors

TEST_F(RemoteCliTest, BadSpecsAndLimitsOnServerAreUsageErrors) {
  start_server({"--threads", "1", "--max-systems", "1000"});
  write_file(base() / "bad.json", R"({"model": "duffing", "integrator": {"rtol": -1}})");
  const Result bad = ukes("run bad.json --server " + server() + " --out out/r.json");
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.err.rfind("ukes: spec error: integrator.rtol: ", 0), 0u) << bad.err;
  const Result bad_submit = ukes("submit bad.json --server " + server());
  EXPECT_EQ(bad_submit.code, 2);
  EXPECT_NE(bad_submit.err.find("integrator.rtol"), std::string::npos) << bad_submit.err;
  EXPECT_TRUE(bad_submit.out.empty()) << bad_submit.out;

  // The server's limit, reached through --count.
  const Result big = ukes("run " + example("duffing_sweep.json") + " --count 5000 --server " +
                          server() + " --out out/r.json");
  EXPECT_EQ(big.code, 2);
  EXPECT_EQ(big.err.rfind("ukes: limit exceeded: sweep.count", 0), 0u) << big.err;

  // --count needs a sweep; --threads is the server's business.
  write_file(base() / "single.json", R"({"model": "duffing"})");
  for (const std::string& where : std::vector<std::string>{"", " --server " + server()}) {
    const Result no_sweep = ukes("run single.json --count 10" + where);
    EXPECT_EQ(no_sweep.code, 2) << where;
    EXPECT_NE(no_sweep.err.find("--count"), std::string::npos) << no_sweep.err;
  }
  const Result threads = ukes("run single.json --threads 2 --server " + server());
  EXPECT_EQ(threads.code, 2);
  EXPECT_NE(threads.err.find("--threads"), std::string::npos) << threads.err;
  EXPECT_TRUE(fs::is_empty(out()));
}

// ------------------------------------------------------------------ 3. submit/status/cancel/attach

TEST_F(RemoteCliTest, SubmitStatusCancelAndAttach) {
  start_server({"--threads", "1", "--max-concurrent-jobs", "1"});
  const Result info = ukes("info --json --server " + server());
  ASSERT_EQ(info.code, 0) << info.err;
  EXPECT_EQ(json::parse(info.out).at("max_concurrent_jobs"), 1);
  EXPECT_EQ(json::parse(info.out).at("version"), version());
  const Result info_text = ukes("info --server " + server());
  ASSERT_EQ(info_text.code, 0) << info_text.err;
  EXPECT_EQ(info_text.out.rfind("server " + server() + ": ukes " + version() + "\n", 0), 0u)
      << info_text.out;

  // A long job occupies the only worker; the next one waits in the queue.
  const Result long_job =
      ukes("submit " + example("scara_montecarlo.json") + " --count 100000 --server " + server());
  ASSERT_EQ(long_job.code, 0) << long_job.err;
  const std::string running_id = long_job.out.substr(0, long_job.out.find('\n'));
  ASSERT_EQ(long_job.out, running_id + "\n");  // the id alone
  const Result next = ukes("submit " + example("duffing_sweep.json") + " --server " + server());
  ASSERT_EQ(next.code, 0) << next.err;
  const std::string queued_id = next.out.substr(0, next.out.find('\n'));
  EXPECT_NE(queued_id, running_id);

  const std::string running_line = wait_for_state(running_id, "running");
  EXPECT_EQ(running_line.rfind("job " + running_id + " running: ", 0), 0u) << running_line;
  EXPECT_NE(running_line.find(" / 100000 systems ("), std::string::npos) << running_line;
  const Result queued = ukes("status " + queued_id + " --server " + server());
  ASSERT_EQ(queued.code, 0) << queued.err;
  EXPECT_EQ(queued.out.rfind("job " + queued_id + " queued (queue position 1): ", 0), 0u)
      << queued.out;

  // A queued job ends at once; a running one promptly.
  const Result cancel_queued = ukes("cancel " + queued_id + " --server " + server());
  ASSERT_EQ(cancel_queued.code, 0) << cancel_queued.err;
  EXPECT_EQ(cancel_queued.out, "job " + queued_id + ": cancelled\n");
  const Result cancel_running = ukes("cancel " + running_id + " --server " + server());
  ASSERT_EQ(cancel_running.code, 0) << cancel_running.err;
  EXPECT_EQ(cancel_running.out.rfind("job " + running_id + ": ", 0), 0u) << cancel_running.out;
  const std::string cancelled_line = wait_for_state(running_id, "cancelled");
  EXPECT_EQ(cancelled_line.rfind("job " + running_id + " cancelled", 0), 0u) << cancelled_line;
  const Result as_json = ukes("status " + running_id + " --json --server " + server());
  ASSERT_EQ(as_json.code, 0) << as_json.err;
  EXPECT_EQ(json::parse(as_json.out).at("state"), "JOB_STATE_CANCELLED");
  EXPECT_EQ(json::parse(as_json.out).at("job_id"), running_id);

  // Attaching to a cancelled job: its end is reported, no files are written.
  const Result attach_cancelled =
      ukes("attach " + running_id + " --server " + server() + " --out out/cancelled.json");
  EXPECT_EQ(attach_cancelled.code, 1);
  EXPECT_NE(attach_cancelled.err.find("ukes: job " + running_id + " cancelled"), std::string::npos)
      << attach_cancelled.err;
  EXPECT_FALSE(fs::exists(out() / "cancelled.json"));

  // A short job, attached to after it finished, gives what `run --server` gives.
  const Result short_job =
      ukes("submit " + example("duffing_sweep.json") + " --count 100 --server " + server());
  ASSERT_EQ(short_job.code, 0) << short_job.err;
  const std::string short_id = short_job.out.substr(0, short_job.out.find('\n'));
  const std::string done_line = wait_for_state(short_id, "succeeded");
  EXPECT_EQ(done_line.rfind("job " + short_id + " succeeded: 100 / 100 systems (100.0%)", 0), 0u)
      << done_line;
  const Result attached = ukes("attach " + short_id + " --server " + server() +
                               " --out out/attached.json --h5 out/attached.h5");
  ASSERT_EQ(attached.code, 0) << attached.err;
  EXPECT_NE(attached.out.find("count 100, ok 100, failed 0"), std::string::npos) << attached.out;
  const Result ran = ukes("run " + example("duffing_sweep.json") + " --count 100 --server " +
                          server() + " --out out/ran.json --h5 out/ran.h5");
  ASSERT_EQ(ran.code, 0) << ran.err;
  expect_same_results(results("attached.json"), results("ran.json"));
  expect_same_trajectories(out() / "attached.h5", out() / "ran.h5");

  // Unknown jobs.
  const Result unknown = ukes("status j-nosuch --server " + server());
  EXPECT_EQ(unknown.code, 1);
  EXPECT_EQ(unknown.err.rfind("ukes: server error (NOT_FOUND): ", 0), 0u) << unknown.err;
}

// A full queue is not the user's error: `submit` and `run --server` wait for a place (they
// once exited 2 at once), while a limit or a bad spec still fails at once.
TEST_F(RemoteCliTest, AFullQueueIsWaitedOut) {
  start_server({"--threads", "1", "--max-concurrent-jobs", "1", "--max-queued-jobs", "1"});
  write_file(base() / "endless.json", R"({"model": "duffing",
    "integrator": {"method": "rk4", "dt": 1e-12, "max_steps": 1000000000000000}})");
  write_file(base() / "small.json", R"({"model": "duffing", "output": {"samples": 5}})");
  // One endless job runs, another fills the queue.
  const Result endless = ukes("submit endless.json --server " + server());
  ASSERT_EQ(endless.code, 0) << endless.err;
  const std::string endless_id = endless.out.substr(0, endless.out.find('\n'));
  const Result queued = ukes("submit endless.json --server " + server());
  ASSERT_EQ(queued.code, 0) << queued.err;
  const std::string queued_id = queued.out.substr(0, queued.out.find('\n'));
  const pid_t submit = spawn_ukes("submit small.json --server " + server(), "submit");
  const pid_t run = spawn_ukes("run small.json --server " + server() + " --out out/r.json", "run");
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  for (const std::string tag : {"submit", "run"})
    EXPECT_NE(read_file(base() / (tag + ".err")).find("waiting to try again"), std::string::npos)
        << tag;
  for (const std::string& id : {queued_id, endless_id}) {
    const Result cancelled = ukes("cancel " + id + " --server " + server());
    ASSERT_EQ(cancelled.code, 0) << cancelled.err;
  }
  // One of the two gets the worker first; the other waits for it, then runs.
  EXPECT_EQ(wait_for(submit, std::chrono::seconds(60)), 0) << read_file(base() / "submit.err");
  EXPECT_EQ(read_file(base() / "submit.out").size(), endless.out.size());  // a job id
  EXPECT_EQ(wait_for(run, std::chrono::seconds(60)), 0) << read_file(base() / "run.err");
  EXPECT_TRUE(fs::exists(out() / "r.json"));
}

TEST_F(RemoteCliTest, JobsThatDoNotSucceedWriteNothing) {
  start_server({"--threads", "1"});
  write_file(base() / "long.json", kLongDuffing);
  // Past its time limit the job ends DEADLINE_EXCEEDED: reported, exit 1, no file.
  const Result late = ukes("submit long.json --timeout 0.2 --server " + server());
  ASSERT_EQ(late.code, 0) << late.err;
  const std::string late_id = late.out.substr(0, late.out.find('\n'));
  const Result attached = ukes("attach " + late_id + " --server " + server() + " --out out/r.json");
  EXPECT_EQ(attached.code, 1);
  EXPECT_NE(attached.err.find("ukes: job " + late_id + " deadline_exceeded"), std::string::npos)
      << attached.err;
  EXPECT_TRUE(attached.out.empty()) << attached.out;

  // Without per-system summaries there is nothing to write results files from.
  const Result bare = ukes("submit " + example("duffing_sweep.json") +
                           " --count 50 --no-summaries --server " + server());
  ASSERT_EQ(bare.code, 0) << bare.err;
  const std::string bare_id = bare.out.substr(0, bare.out.find('\n'));
  const Result no_files = ukes("attach " + bare_id + " --server " + server() + " --out out/r.json");
  EXPECT_EQ(no_files.code, 2);
  EXPECT_NE(no_files.err.find("--no-summaries"), std::string::npos) << no_files.err;
  // ... but the ensemble statistics arrive, and are summarized.
  const Result summary = ukes("attach " + bare_id + " --server " + server());
  ASSERT_EQ(summary.code, 0) << summary.err;
  EXPECT_NE(summary.out.find("count 50, ok 50, failed 0"), std::string::npos) << summary.out;
  EXPECT_TRUE(fs::is_empty(out()));
}

// ------------------------------------------------------------------ 4. killed client, cut stream

TEST_F(RemoteCliTest, AttachAfterTheClientWasKilledMidStream) {
  start_server({"--threads", "1"});
  write_file(base() / "long.json", kLongDuffing);
  const pid_t client = spawn_ukes("run long.json --server " + server(), "killed");
  const std::string id = announced_job_id("killed");
  ASSERT_FALSE(id.empty()) << read_file(base() / "killed.err");
  wait_mid_run(id);
  kill(client, SIGKILL);
  EXPECT_EQ(wait_for(client), -1);

  const Result attached = ukes("attach " + id + " --server " + server() +
                               " --out out/attached.json --h5 out/attached.h5");
  ASSERT_EQ(attached.code, 0) << attached.err;
  const Result local = ukes("run long.json --out out/local.json --h5 out/local.h5");
  ASSERT_EQ(local.code, 0) << local.err;
  expect_same_results(results("attached.json"), results("local.json"));
  expect_same_trajectories(out() / "attached.h5", out() / "local.h5");
}

TEST_F(RemoteCliTest, ACutConnectionIsResumedWithoutLoss) {
  start_server({"--threads", "1"});
  TcpProxy proxy(std::stoi(server().substr(server().rfind(':') + 1)));
  write_file(base() / "long.json", kLongDuffing);
  const pid_t client = spawn_ukes(
      "run long.json --server " + proxy.address() + " --out out/remote.json --h5 out/remote.h5",
      "resumed");
  const std::string id = announced_job_id("resumed");
  ASSERT_FALSE(id.empty()) << read_file(base() / "resumed.err");
  wait_mid_run(id);
  proxy.cut();
  ASSERT_EQ(wait_for(client), 0) << read_file(base() / "resumed.err");
  const std::string err = read_file(base() / "resumed.err");
  EXPECT_NE(err.find("reconnecting to resume after chunk "), std::string::npos) << err;

  const Result local = ukes("run long.json --out out/local.json --h5 out/local.h5");
  ASSERT_EQ(local.code, 0) << local.err;
  expect_same_results(results("remote.json"), results("local.json"));
  expect_same_trajectories(out() / "remote.h5", out() / "local.h5");
}

// ------------------------------------------------------------------ 5. sharded over servers

TEST_F(RemoteCliTest, ShardsOverSeveralServersWriteTheSameFilesAsOneRun) {
  start_server({"--threads", "1"});
  ServerProcess second({"--threads", "1"}), third({"--threads", "2"});
  write_file(base() / "sweep.json", R"({
    "model": "duffing",
    "sweep": {"count": 211, "seed": 5, "sampler": "sobol",
              "vary": {"params.m1": {"uniform": [1.5, 2.5]}, "q0[0]": {"normal": [1.0, 0.01]}}},
    "integrator": {"t_end": 1.0},
    "output": {"samples": 11, "trajectories": [210, 0, 105, 33]}
  })");
  const Result local = ukes("run sweep.json --out out/local.json --h5 out/local.h5");
  ASSERT_EQ(local.code, 0) << local.err;
  const std::string two = server() + "," + second.address();
  const std::string three = two + "," + third.address();
  for (const std::string& servers : {two, three, two + " --shards 7", server() + " --shards 3"}) {
    SCOPED_TRACE(servers);
    const Result sharded =
        ukes("run sweep.json --server " + servers + " --out out/sharded.json --h5 out/sharded.h5");
    ASSERT_EQ(sharded.code, 0) << sharded.err;
    expect_same_results(results("local.json"), results("sharded.json"));
    expect_same_trajectories(out() / "local.h5", out() / "sharded.h5");
    EXPECT_NE(sharded.out.find("count 211, ok 211, failed 0"), std::string::npos) << sharded.out;
    EXPECT_EQ(sharded.err.find("will hold no trajectories"), std::string::npos) << sharded.err;
  }
}

TEST_F(RemoteCliTest, AShardWhoseStreamBreaksResumesOnItsOwn) {
  start_server({"--threads", "1"});
  ServerProcess second({"--threads", "1"});
  TcpProxy proxy(second.port());
  write_file(base() / "long.json", kLongDuffing);
  // Twice the systems, so that each shard takes as long as the long job.
  const pid_t client =
      spawn_ukes("run long.json --count 2000 --server " + server() + "," + proxy.address() +
                     " --out out/sharded.json --h5 out/sharded.h5",
                 "sharded");
  // The second shard's job is the one announced on the proxy.
  const std::string id = announced_job_id("sharded", proxy.address());
  ASSERT_FALSE(id.empty()) << read_file(base() / "sharded.err");
  wait_mid_run(id, &second);
  proxy.cut();
  ASSERT_EQ(wait_for(client), 0) << read_file(base() / "sharded.err");
  EXPECT_NE(read_file(base() / "sharded.err").find("reconnecting to resume after chunk "),
            std::string::npos);
  const Result local = ukes("run long.json --count 2000 --out out/local.json --h5 out/local.h5");
  ASSERT_EQ(local.code, 0) << local.err;
  expect_same_results(results("sharded.json"), results("local.json"));
  expect_same_trajectories(out() / "sharded.h5", out() / "local.h5");
}

TEST_F(RemoteCliTest, AShardWhoseServerIsKilledFinishesOnTheRestartedServer) {
  start_server({"--threads", "1"});
  auto second = std::make_unique<ServerProcess>(std::vector<std::string>{"--threads", "1"});
  TcpProxy proxy(second->port());
  write_file(base() / "long.json", kLongDuffing);
  const pid_t client = spawn_ukes("run long.json --count 2000 --server " + server() + "," +
                                      proxy.address() + " --out out/sharded.json",
                                  "killed");
  const std::string id = announced_job_id("killed", proxy.address());
  ASSERT_FALSE(id.empty()) << read_file(base() / "killed.err");
  wait_mid_run(id, second.get());  // some slices of the shard stored, the rest to come
  // kill -9, and a new server on the same job store behind the same address.
  kill(second->pid(), SIGKILL);
  second->wait_exit(10);  // gone, and its lock on the data directory with it
  proxy.cut();
  ServerProcess restarted({"--threads", "1", "--data-dir", second->data_dir().string()},
                          testing::DataDir::kPrivate);
  proxy.retarget(restarted.port());
  ASSERT_EQ(wait_for(client), 0) << read_file(base() / "killed.err");
  const Result local = ukes("run long.json --count 2000 --out out/local.json");
  ASSERT_EQ(local.code, 0) << local.err;
  expect_same_results(results("sharded.json"), results("local.json"));
}

TEST_F(RemoteCliTest, AFailedShardCancelsTheOthers) {
  start_server({"--threads", "1"});
  ServerProcess small({"--threads", "1", "--max-systems", "100"});
  write_file(base() / "long.json", kLongDuffing);
  // 2000 systems a shard: the small server refuses its shard, the other's is cancelled.
  const Result r = ukes("run long.json --count 4000 --server " + server() + "," + small.address() +
                        " --out out/never.json");
  EXPECT_EQ(r.code, 2) << r.err;  // a limit: the user's to change
  EXPECT_NE(r.err.find("limit exceeded"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("shard 2 of 2 (systems 2000..3999 on " + small.address() + ") failed"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(out() / "never.json"));
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.err, m, std::regex("ukes: job (\\S+) on " + server()))) << r.err;
  EXPECT_EQ(get_job(m[1]).state(), v1::JOB_STATE_CANCELLED);
}

TEST_F(RemoteCliTest, EachAddressOfANameIsAServer) {
  start_server({"--threads", "1"});
  write_file(base() / "sweep.json", R"({"model": "duffing", "sweep": {"count": 50, "seed": 2},
                                        "output": {"trajectories": [49, 0]}})");
  const Result local = ukes("run sweep.json --out out/local.json");
  ASSERT_EQ(local.code, 0) << local.err;
  const std::string port = server().substr(server().rfind(':') + 1);
  const Result each =
      ukes("run sweep.json --server localhost:" + port + " --each-address --out out/each.json");
  ASSERT_EQ(each.code, 0) << each.err;
  EXPECT_NE(each.err.find(" on ipv4:127.0.0.1:" + port + " "), std::string::npos) << each.err;
  expect_same_results(results("local.json"), results("each.json"));
  const Result nowhere = ukes("run sweep.json --server no-such-host.invalid:1 --each-address");
  EXPECT_EQ(nowhere.code, 1);
  EXPECT_NE(nowhere.err.find("cannot resolve 'no-such-host.invalid:1'"), std::string::npos)
      << nowhere.err;
}

TEST_F(RemoteCliTest, ShardingUsageErrors) {
  start_server();
  write_file(base() / "shard.json", R"({"model": "duffing", "sweep": {"count": 4},
                                        "shard": {"first": 0, "count": 2}})");
  const Result twice = ukes("run shard.json --server " + server() + "," + server());
  EXPECT_EQ(twice.code, 2);
  EXPECT_NE(twice.err.find("the spec is a shard already"), std::string::npos) << twice.err;
  write_file(base() / "bad.json", R"({"model": "duffing", "sweep": {"count": 4},
                                      "integrator": {"rtol": -1}})");
  const Result bad = ukes("run bad.json --server " + server() + "," + server());
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("integrator.rtol"), std::string::npos) << bad.err;
  const Result local = ukes("run bad.json --shards 2");
  EXPECT_EQ(local.code, 2);
  EXPECT_NE(local.err.find("--shards needs --server"), std::string::npos) << local.err;
}

// ------------------------------------------------------------------ 6. no server

// A loopback port that nobody listens on (bound, then released).
int unused_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

TEST_F(RemoteCliTest, UnreachableServerIsAFailureWithAClearMessage) {
  const std::string nowhere = "127.0.0.1:" + std::to_string(unused_port());
  write_file(base() / "spec.json", R"({"model": "duffing"})");
  const Result run = ukes("run spec.json --server " + nowhere + " --out out/r.json");
  EXPECT_EQ(run.code, 1);
  EXPECT_EQ(run.err.rfind("ukes: cannot reach server " + nowhere + ": ", 0), 0u) << run.err;
  EXPECT_TRUE(fs::is_empty(out()));

  // The other commands find the server through UKES_SERVER.
  for (const char* command :
       {"info", "status j-1", "cancel j-1", "attach j-1", "submit spec.json"}) {
    const Result r = ukes(command, "UKES_SERVER=" + nowhere);
    EXPECT_EQ(r.code, 1) << command;
    EXPECT_EQ(r.err.rfind("ukes: cannot reach server " + nowhere + ": ", 0), 0u)
        << command << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << command << ": " << r.out;
  }
}

}  // namespace
}  // namespace ukes
