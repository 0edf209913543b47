// A real ukes-server process for end-to-end tests: started on 127.0.0.1 with a free port (it
// writes the port it bound to a file), its JSON log captured to a file, stopped with SIGTERM.
// Everything it writes stays in a private directory of the test's. Header-only; needs
// UKES_BINARY_DIR and gRPC.
#pragma once

#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace ukes::testing {

enum class DataDir {
  kGiven,    // --data-dir data_dir()
  kPrivate,  // no --data-dir: the server makes its own under $TMPDIR = tmpdir()
};

class ServerProcess {
 public:
  // Extra flags are appended to: --port 0 --port-file F [--data-dir D] [--device cpu]. The
  // device is the CPU unless extra_args name one: the tests compare with CPU runs bit for bit.
  explicit ServerProcess(const std::vector<std::string>& extra_args = {},
                         DataDir data_dir = DataDir::kGiven) {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "ukes_server_test_XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = tmpl;
    // A server that does not start (the tests of refused flags want that) throws from here, and
    // no destructor runs: the process, if it still runs, and the directory go now.
    try {
      start(extra_args, data_dir);
    } catch (...) {
      stop();
      remove_directory();
      throw;
    }
  }

  ~ServerProcess() {
    stop();
    remove_directory();
  }

  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  int port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  pid_t pid() const { return pid_; }
  std::filesystem::path dir() const { return dir_; }
  std::filesystem::path data_dir() const { return data_dir_path(); }
  // The server's $TMPDIR.
  std::filesystem::path tmpdir() const { return dir_ / "tmp"; }
  std::filesystem::path log_path() const { return dir_ / "server.log"; }

  // True while the process runs (reaps it when it has exited).
  bool alive() {
    if (pid_ <= 0) return false;
    int status = 0;
    const pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      exit_status_ = status;
      pid_ = -1;
      return false;
    }
    return true;
  }

  // Waits up to `timeout_s` for the process to exit: its wait status, or -1 if it still runs.
  int wait_exit(double timeout_s) {
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(static_cast<int>(timeout_s * 1000));
    while (alive()) {
      if (std::chrono::steady_clock::now() > deadline) return -1;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return exit_status_;
  }

  // SIGTERM, then SIGKILL after 10 s; returns the wait status (or the one already seen).
  int stop() {
    if (pid_ <= 0) return exit_status_;
    kill(pid_, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (alive()) {
      if (std::chrono::steady_clock::now() > deadline) {
        kill(pid_, SIGKILL);
        waitpid(pid_, &exit_status_, 0);
        pid_ = -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return exit_status_;
  }

  std::string log_text() const {
    std::ifstream in(log_path());
    std::ostringstream os;
    os << in.rdbuf();
    return os.str();
  }

  std::shared_ptr<grpc::Channel> channel() const {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(64 << 20);
    return grpc::CreateCustomChannel(address(), grpc::InsecureChannelCredentials(), args);
  }

 private:
  // Spawns the server and waits for the port it bound.
  void start(const std::vector<std::string>& extra_args, DataDir data_dir) {
    std::filesystem::create_directory(tmpdir());
    std::vector<std::string> args = {std::string(UKES_BINARY_DIR) + "/ukes-server", "--port", "0",
                                     "--port-file", (dir_ / "port").string()};
    if (data_dir == DataDir::kGiven) {
      args.push_back("--data-dir");
      args.push_back(data_dir_path().string());
    }
    if (std::find(extra_args.begin(), extra_args.end(), "--device") == extra_args.end())
      args.insert(args.end(), {"--device", "cpu"});
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> env_strings;
    for (char** e = environ; *e != nullptr; ++e)
      if (std::strncmp(*e, "TMPDIR=", 7) != 0) env_strings.emplace_back(*e);
    env_strings.push_back("TMPDIR=" + tmpdir().string());
    std::vector<char*> envp;
    for (auto& e : env_strings) envp.push_back(e.data());
    envp.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    const std::string log = log_path().string();
    posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int rc = posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) throw std::runtime_error("cannot start " + args[0]);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (port_ == 0) {
      std::ifstream in(dir_ / "port");
      if (in >> port_ && port_ > 0) break;
      port_ = 0;
      if (!alive()) throw std::runtime_error("ukes-server exited at start: " + log_text());
      if (std::chrono::steady_clock::now() > deadline)
        throw std::runtime_error("ukes-server did not start: " + log_text());
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  void remove_directory() const {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  std::filesystem::path data_dir_path() const { return dir_ / "data"; }

  std::filesystem::path dir_;
  pid_t pid_ = -1;
  int port_ = 0;
  int exit_status_ = 0;
};

}  // namespace ukes::testing
