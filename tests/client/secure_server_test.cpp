// ukes-server behind TLS, bearer tokens and mutual TLS, reached with `ukes --ca --token
// --client-cert --client-key`: unauthenticated calls are refused, each job belongs to the
// principal that submitted it (another gets NOT_FOUND for it), and a server reachable beyond
// loopback refuses to start without TLS and authentication unless told --insecure. The test makes
// its own CA and certificates with openssl.
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdlib>
#include <filesystem>
#include <string>
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
    sign("server", "localhost", "subjectAltName=IP:127.0.0.1,DNS:localhost");
    sign("alice", "alice-lab", "");
    sign("bob", "bob-lab", "");
    write_file(dir_ / "tokens",
               "# principal token\nalice " + kAliceToken + "\nbob " + kBobToken + "\n");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A key and a certificate for `cn` signed by the test CA: NAME.key, NAME.pem.
  void sign(const std::string& name, const std::string& cn, const std::string& extension) {
    const std::string ext_file = (dir_ / (name + ".ext")).string();
    write_file(ext_file, extension + "\n");
    const std::string command =
        "cd " + quoted(dir_.string()) + " && openssl req -newkey rsa:2048 -nodes -keyout " + name +
        ".key -out " + name + ".csr -subj '/CN=" + cn + "' 2>/dev/null && openssl x509 -req -in " +
        name + ".csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1 -out " + name + ".pem" +
        (extension.empty() ? "" : " -extfile " + quoted(ext_file)) + " 2>/dev/null";
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
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

TEST_F(SecureServer, ClientCertificatesAreIdentities) {
  std::vector<std::string> flags = tls_flags();
  flags.insert(flags.end(), {"--tls-client-ca", (dir_ / "ca.pem").string()});
  ServerProcess server(flags);
  const auto as = [&](const std::string& who) {
    return " --client-cert " + file(who + ".pem") + " --client-key " + file(who + ".key");
  };
  EXPECT_NE(ukes(server, "info").code, 0) << "no client certificate, yet served";
  EXPECT_EQ(ukes(server, "info" + as("alice")).code, 0);
  const std::string job = submit(server, "UKES_CLIENT_CERT=" + (dir_ / "alice.pem").string() +
                                             " UKES_CLIENT_KEY=" + (dir_ / "alice.key").string());
  ASSERT_FALSE(job.empty());
  EXPECT_NE(ukes(server, "status " + job + as("bob")).err.find("NOT_FOUND"), std::string::npos);
  EXPECT_EQ(ukes(server, "status " + job + as("alice")).code, 0);
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
