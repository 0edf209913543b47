// ukes-server behind TLS, bearer tokens and mutual TLS, reached with `ukes --ca --token
// --client-cert --client-key`: unauthenticated calls are refused, each job belongs to the
// principal that submitted it (another gets NOT_FOUND for it), no two client certificates share a
// principal unless they share a subject, a server reachable beyond loopback refuses to start
// without TLS and authentication unless told --insecure, and one whose key does not match its
// certificate, or whose PEM files hold something else, says which at start. The test makes its own
// CA and certificates with openssl.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "support/server_process.hpp"
#include "tests/client/cli_support.hpp"

namespace ukes {
namespace {

using namespace cli_test;
using testing::ServerProcess;
namespace fs = std::filesystem;

const std::string kAliceToken = "alice-0123456789abcdef";
const std::string kBobToken = "bob-0123456789abcdef01";

class SecureServer : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "ukes_tls_test_XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    const std::string d = quoted(dir_.string());
    const std::string quiet = " 2>/dev/null";
    ASSERT_EQ(std::system(("cd " + d +
                           " && openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out "
                           "ca.pem -days 1 -subj '/CN=ukes test CA'" +
                           quiet)
                              .c_str()),
              0);
    sign("server", "/CN=localhost", "subjectAltName=IP:127.0.0.1,DNS:localhost");
    sign("alice", "/CN=alice-lab", "");
    sign("bob", "/CN=bob-lab", "");
    write_file(dir_ / "tokens",
               "# principal token\nalice " + kAliceToken + "\nbob " + kBobToken + "\n");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A key and a certificate for `subject` (openssl's -subj form, "/" for an empty one) signed by
  // the test CA: NAME.key, NAME.pem.
  void sign(const std::string& name, const std::string& subject, const std::string& extension) {
    const std::string ext_file = (dir_ / (name + ".ext")).string();
    write_file(ext_file, extension + "\n");
    const std::string command =
        "cd " + quoted(dir_.string()) + " && openssl req -newkey rsa:2048 -nodes -keyout " + name +
        ".key -out " + name + ".csr -subj '" + subject + "' 2>/dev/null && openssl x509 -req -in " +
        name + ".csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1 -out " + name + ".pem" +
        (extension.empty() ? "" : " -extfile " + quoted(ext_file)) + " 2>/dev/null";
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
  }
  // `ukes` flags that present NAME.pem and NAME.key.
  std::string as(const std::string& name) const {
    return " --client-cert " + file(name + ".pem") + " --client-key " + file(name + ".key");
  }
  std::string file(const std::string& name) const { return quoted((dir_ / name).string()); }
  std::vector<std::string> tls_flags() const {
    return {"--tls-cert", (dir_ / "server.pem").string(), "--tls-key",
            (dir_ / "server.key").string()};
  }
  // `ukes ARGS --server S --ca ca.pem` with `env`.
  Result ukes(const ServerProcess& server, const std::string& args, const std::string& env = "") {
    return run_ukes(dir_, args + " --server " + server.address() + " --ca " + file("ca.pem"), env);
  }
  std::string submit(const ServerProcess& server, const std::string& env) {
    const Result r = ukes(
        server,
        "submit " + quoted(std::string(UKES_SOURCE_DIR) + "/client/examples/scara_montecarlo.json"),
        env);
    EXPECT_EQ(r.code, 0) << r.err;
    std::string id = r.out;
    while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
    return id.substr(id.find_last_of(" \n") + 1);
  }

  fs::path dir_;
};

TEST_F(SecureServer, TokensAuthenticateAndJobsBelongToTheirSubmitter) {
  std::vector<std::string> flags = tls_flags();
  flags.insert(flags.end(), {"--token-file", (dir_ / "tokens").string()});
  ServerProcess server(flags);

  const Result plain = run_ukes(dir_, "info --server " + server.address());
  EXPECT_NE(plain.code, 0) << "a plain-text client reached a TLS server";
  const Result anonymous = ukes(server, "info");
  EXPECT_NE(anonymous.code, 0);
  EXPECT_NE(anonymous.err.find("UNAUTHENTICATED"), std::string::npos) << anonymous.err;
  const Result wrong = ukes(server, "info --token alice-0123456789abcdeX");
  EXPECT_NE(wrong.err.find("UNAUTHENTICATED"), std::string::npos) << wrong.err;
  EXPECT_EQ(ukes(server, "info --token " + kAliceToken).code, 0);

  const std::string alice = "UKES_TOKEN=" + kAliceToken, bob = "UKES_TOKEN=" + kBobToken;
  const std::string job = submit(server, alice);
  ASSERT_FALSE(job.empty());
  for (const std::string command : {"status ", "cancel ", "attach "}) {
    const Result r = ukes(server, command + job, bob);
    EXPECT_NE(r.code, 0) << command;
    EXPECT_NE(r.err.find("NOT_FOUND"), std::string::npos) << command << r.err;
  }
  const Result fetched = ukes(server, "attach " + job + " --out " + file("alice.json"), alice);
  EXPECT_EQ(fetched.code, 0) << fetched.err;
  EXPECT_TRUE(fs::exists(dir_ / "alice.json"));
  EXPECT_NE(server.log_text().find("\"unauthenticated\""), std::string::npos);
}

// A durable job (--data-dir) keeps its owner across kill -9 and a restart.
TEST_F(SecureServer, JobsKeepTheirOwnerAcrossARestart) {
  std::vector<std::string> flags = tls_flags();
  flags.insert(flags.end(), {"--token-file", (dir_ / "tokens").string(), "--data-dir",
                             (dir_ / "data").string()});
  const std::string alice = "UKES_TOKEN=" + kAliceToken, bob = "UKES_TOKEN=" + kBobToken;
  std::string job;
  {
    ServerProcess first(flags, testing::DataDir::kPrivate);
    job = submit(first, alice);
    ASSERT_FALSE(job.empty());
    ::kill(first.pid(), SIGKILL);
    first.wait_exit(10);
  }
  ServerProcess second(flags, testing::DataDir::kPrivate);
  EXPECT_EQ(ukes(second, "status " + job, alice).code, 0);
  const Result r = ukes(second, "status " + job, bob);
  EXPECT_NE(r.err.find("NOT_FOUND"), std::string::npos) << r.err;
}

// A registered model is its registrant's: another principal neither lists nor runs it, gets the
// same id for the same definition in its own namespace, and cannot delete the first one's; across
// a restart too. `ukes info` shows each its own jobs beside the totals.
TEST_F(SecureServer, RegisteredModelsAndQueueCountsBelongToTheirPrincipal) {
  std::vector<std::string> flags = tls_flags();
  flags.insert(flags.end(), {"--token-file", (dir_ / "tokens").string(), "--data-dir",
                             (dir_ / "data").string(), "--max-concurrent-jobs", "1"});
  const std::string alice = "UKES_TOKEN=" + kAliceToken, bob = "UKES_TOKEN=" + kBobToken;
  const std::string definition =
      quoted(std::string(UKES_SOURCE_DIR) + "/client/examples/models/spiral.json");
  const auto trimmed = [](std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
  };
  std::string id;
  {
    ServerProcess first(flags, testing::DataDir::kPrivate);
    const Result registered = ukes(first, "models register " + definition, alice);
    ASSERT_EQ(registered.code, 0) << registered.err;
    id = trimmed(registered.out);
    ::kill(first.pid(), SIGKILL);
    first.wait_exit(10);
  }
  ServerProcess server(flags, testing::DataDir::kPrivate);
  write_file(dir_ / "by_id.json", R"({"model": ")" + id + R"(", "sweep": {"count": 3}})");
  EXPECT_NE(ukes(server, "models", alice).out.find(id), std::string::npos);
  EXPECT_EQ(ukes(server, "models", bob).out.find(id), std::string::npos) << "bob lists alice's";
  const Result bob_run = ukes(server, "run " + file("by_id.json"), bob);
  EXPECT_NE(bob_run.code, 0);
  EXPECT_NE(bob_run.err.find("no model is registered"), std::string::npos) << bob_run.err;
  const Result bob_delete = ukes(server, "models delete " + id, bob);
  EXPECT_NE(bob_delete.err.find("NOT_FOUND"), std::string::npos) << bob_delete.err;
  const Result alice_run = ukes(server, "run " + file("by_id.json"), alice);
  EXPECT_EQ(alice_run.code, 0) << alice_run.err;
  // Bob's own copy: the same id, his to delete, and alice's stays.
  EXPECT_EQ(trimmed(ukes(server, "models register " + definition, bob).out), id);
  EXPECT_EQ(ukes(server, "models delete " + id, bob).code, 0);
  EXPECT_NE(ukes(server, "models", alice).out.find(id), std::string::npos);

  // Queue counts: alice's two jobs are hers alone; bob sees them only in the totals.
  submit(server, alice);
  submit(server, alice);
  const auto info = [&](const std::string& who) {
    return nlohmann::json::parse(ukes(server, "info --json", who).out);
  };
  const auto mine = info(alice), theirs = info(bob);
  EXPECT_EQ(mine.value("own_queued_jobs", 0) + mine.value("own_running_jobs", 0), 2) << mine;
  EXPECT_EQ(theirs.value("own_queued_jobs", 0) + theirs.value("own_running_jobs", 0), 0) << theirs;
  EXPECT_EQ(theirs.value("queued_jobs", 0) + theirs.value("running_jobs", 0), 2) << theirs;
}

TEST_F(SecureServer, ClientCertificatesAreIdentities) {
  std::vector<std::string> flags = tls_flags();
  flags.insert(flags.end(), {"--tls-client-ca", (dir_ / "ca.pem").string()});
  ServerProcess server(flags);
  EXPECT_NE(ukes(server, "info").code, 0) << "no client certificate, yet served";
  EXPECT_EQ(ukes(server, "info" + as("alice")).code, 0);
  const std::string job = submit(server, "UKES_CLIENT_CERT=" + (dir_ / "alice.pem").string() +
                                             " UKES_CLIENT_KEY=" + (dir_ / "alice.key").string());
  ASSERT_FALSE(job.empty());
  EXPECT_NE(ukes(server, "status " + job + as("bob")).err.find("NOT_FOUND"), std::string::npos);
  EXPECT_EQ(ukes(server, "status " + job + as("alice")).code, 0);
}

// Certificates without a common name, or with one another also has, are each their own principal:
// the subject DN when there is one, else a subjectAltName, else the public key.
TEST_F(SecureServer, NoTwoClientCertificatesShareAPrincipal) {
  sign("carol_a", "/O=lab A/CN=carol", "");
  sign("carol_b", "/O=lab B/CN=carol", "");
  sign("uri", "/", "subjectAltName=URI:spiffe://lab/dave");
  sign("bare1", "/", "");
  sign("bare2", "/", "");
  std::vector<std::string> flags = tls_flags();
  flags.insert(flags.end(), {"--tls-client-ca", (dir_ / "ca.pem").string()});
  ServerProcess server(flags);
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"carol_a", "carol_b"}, {"carol_b", "carol_a"}, {"uri", "bare1"}, {"bare1", "bare2"}};
  for (const auto& [owner, other] : pairs) {
    const std::string job = submit(server, "UKES_CLIENT_CERT=" + file(owner + ".pem") +
                                               " UKES_CLIENT_KEY=" + file(owner + ".key"));
    ASSERT_FALSE(job.empty()) << owner;
    for (const std::string command : {"status ", "cancel "}) {
      const Result r = ukes(server, command + job + as(other));
      EXPECT_NE(r.err.find("NOT_FOUND"), std::string::npos) << owner << " " << other << r.err;
    }
    EXPECT_EQ(ukes(server, "status " + job + as(owner)).code, 0) << owner;
    EXPECT_EQ(ukes(server, "cancel " + job + as(owner)).code, 0) << owner;
  }
}

// A TLS key that does not match its certificate, or a PEM file that holds no certificate or key,
// stops the server at start with a line naming the flag and the file.
TEST_F(SecureServer, MismatchedOrGarbledTlsFilesAreNamedAtStart) {
  write_file(dir_ / "garbage.pem", "not a PEM file\n");
  const std::string server_pem = (dir_ / "server.pem").string();
  const std::string server_key = (dir_ / "server.key").string();
  const std::string alice_key = (dir_ / "alice.key").string();
  const std::string garbage = (dir_ / "garbage.pem").string();
  struct Case {
    std::vector<std::string> flags;
    std::string path, problem;
  };
  const std::vector<Case> cases = {
      {{"--tls-cert", server_pem, "--tls-key", alice_key},
       alice_key,
       "--tls-key: " + alice_key + " does not match the certificate in " + server_pem},
      {{"--tls-cert", garbage, "--tls-key", server_key}, garbage, "--tls-cert: " + garbage},
      {{"--tls-cert", server_key, "--tls-key", server_key}, server_key, "--tls-cert: "},
      {{"--tls-cert", server_pem, "--tls-key", garbage}, garbage, "--tls-key: " + garbage},
      {{"--tls-cert", server_pem, "--tls-key", server_pem}, server_pem, "--tls-key: "},
      {{"--tls-cert", server_pem, "--tls-key", server_key, "--tls-client-ca", garbage},
       garbage,
       "--tls-client-ca: " + garbage},
  };
  for (const Case& c : cases) {
    std::string command = "timeout 60 " + quoted(std::string(UKES_BINARY_DIR) + "/ukes-server") +
                          " --port 0 --device cpu";
    for (const std::string& flag : c.flags) command.append(" ").append(quoted(flag));
    command.append(" </dev/null >/dev/null 2>").append(file("start.err"));
    const int status = std::system(command.c_str());
    const std::string err = read_file(dir_ / "start.err");
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 124)
        << command << "\n"
        << err;
    EXPECT_EQ(err.find("cannot listen"), std::string::npos) << err;
    // The log's JSON lines come before: one line names the file, and it says what is wrong.
    std::istringstream lines(err);
    int naming = 0;
    for (std::string line; std::getline(lines, line);)
      if (line.find(c.path) != std::string::npos) {
        ++naming;
        EXPECT_NE(line.find("ukes-server: " + c.problem), std::string::npos) << line;
      }
    EXPECT_EQ(naming, 1) << command << "\n" << err;
  }
}

TEST_F(SecureServer, BeyondLoopbackOnlyWithTlsAndAuthenticationOrInsecure) {
  const auto refused = [&](const std::vector<std::string>& flags, const std::string& why) {
    try {
      ServerProcess server(flags);
      ADD_FAILURE() << "started with " << why;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  refused({"--listen", "0.0.0.0"}, "--insecure");
  std::vector<std::string> tls_only = tls_flags();
  tls_only.insert(tls_only.end(), {"--listen", "0.0.0.0"});
  refused(tls_only, "--insecure");
  refused({"--token-file", (dir_ / "tokens").string()}, "--token-file needs TLS");

  ServerProcess open({"--listen", "0.0.0.0", "--insecure"});
  EXPECT_EQ(run_ukes(dir_, "info --server " + open.address()).code, 0);
  EXPECT_NE(open.log_text().find("\"insecure\""), std::string::npos) << open.log_text();
}

}  // namespace
}  // namespace ukes
