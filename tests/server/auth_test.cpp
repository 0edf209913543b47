// The token file, the comparison behind bearer-token authentication and the principals of client
// certificates (service/server/auth.hpp); the end-to-end behaviour is
// tests/client/secure_server_test.cpp's. Certificates are made with the openssl command.
#include "service/server/auth.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace ukes::server {
namespace {

// A token file holding `text`, removed with this object.
struct TokenFile {
  explicit TokenFile(const std::string& text)
      : path(std::filesystem::temp_directory_path() /
             ("ukes_tokens_" + std::to_string(std::hash<std::string>()(text)))) {
    std::ofstream(path) << text;
  }
  ~TokenFile() { std::filesystem::remove(path); }
  std::filesystem::path path;
};

std::string refusal(const std::string& text) {
  const TokenFile file(text);
  try {
    Authenticator auth(file.path.string(), false);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(Auth, TokenFilesAreCheckedLineByLine) {
  EXPECT_EQ(refusal("# who token\n\nalice 0123456789abcdef\n"), "");
  EXPECT_NE(refusal("alice\n").find("line 1: expected `NAME TOKEN`"), std::string::npos);
  EXPECT_NE(refusal("a 0123456789abcdef extra\n").find("line 1"), std::string::npos);
  EXPECT_NE(refusal("# c\nalice short\n").find("line 2: tokens must be at least 16"),
            std::string::npos);
  EXPECT_NE(refusal("a 0123456789abcdef\na 0123456789abcdeX\n").find("line 2: duplicate"),
            std::string::npos);
  EXPECT_NE(refusal("a 0123456789abcdef\nb 0123456789abcdef\n").find("duplicate"),
            std::string::npos);
  EXPECT_NE(refusal("# nothing\n").find("no tokens"), std::string::npos);
  EXPECT_NE(refusal("").find("no tokens"), std::string::npos);
  EXPECT_THROW(Authenticator("/nonexistent/tokens", false), std::runtime_error);
  EXPECT_FALSE(Authenticator().enabled());
  EXPECT_TRUE(Authenticator("", true).enabled());
}

// Names and tokens are printable ASCII (0x21 to 0x7e); names have no ':', which would let them
// pass for certificate principals.
TEST(Auth, TokenFilesHoldPrintableAsciiOnly) {
  EXPECT_NE(refusal("alice 0123456789abcdef\x7f\n").find("line 1: tokens must be printable ASCII"),
            std::string::npos);
  EXPECT_NE(refusal("a 0123456789abcdef\nbob 0123456789abcd\xc3\xa9\n")
                .find("line 2: tokens must be printable ASCII"),
            std::string::npos);
  EXPECT_NE(refusal("alice 0123456789\x01"
                    "abcdef\n")
                .find("line 1: tokens must be printable"),
            std::string::npos);
  EXPECT_NE(refusal("al\x01ice 0123456789abcdef\n").find("line 1: NAME must be printable ASCII"),
            std::string::npos);
  EXPECT_NE(refusal("# c\n\xc3\xa9va 0123456789abcdef\n").find("line 2: NAME must be printable"),
            std::string::npos);
  EXPECT_NE(refusal("cert:CN=alice 0123456789abcdef\n")
                .find("line 1: NAME must be printable "
                      "ASCII without ':'"),
            std::string::npos);
  EXPECT_EQ(refusal("alice-1 0123456789abcdef~!\r\n"), "");
}

// Self-signed certificates made with the openssl command in a scratch directory, removed with
// this object.
class Certificates {
 public:
  Certificates() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "ukes_certs_XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = tmpl;
  }
  ~Certificates() { std::filesystem::remove_all(dir_); }

  // The PEM text of a new certificate NAME.pem, with a new key, for `subject` (openssl's -subj
  // form; "/" for an empty subject) and the extension `extension` ("" for none).
  std::string make(const std::string& name, const std::string& subject,
                   const std::string& extension = "") {
    run("openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 "
        "-keyout " +
        name + ".key -out " + name + ".pem -subj '" + subject + "'" +
        (extension.empty() ? "" : " -addext '" + extension + "'"));
    std::ifstream in(dir_ / (name + ".pem"));
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }
  // SHA-256 (hex) of NAME.pem's DER SubjectPublicKeyInfo, as openssl computes it.
  std::string spki_sha256(const std::string& name) {
    return run("openssl x509 -in " + name +
               ".pem -pubkey -noout | openssl pkey -pubin -outform "
               "DER | openssl dgst -sha256 -r | cut -c1-64");
  }

 private:
  // Runs `command` in the directory: its standard output, less the final newline.
  std::string run(const std::string& command) {
    const std::string line = "cd '" + dir_.string() + "' && { " + command + "; } 2>/dev/null";
    FILE* pipe = popen(line.c_str(), "r");
    if (pipe == nullptr) throw std::runtime_error("popen failed");
    std::string out;
    char buffer[256];
    while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) out += buffer;
    if (pclose(pipe) != 0) throw std::runtime_error("failed: " + command);
    if (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  }

  std::filesystem::path dir_;
};

TEST(Auth, CertificatePrincipalIsTheSubjectDn) {
  Certificates certs;
  EXPECT_EQ(certificate_principal(certs.make("cn", "/CN=alice")), "cert:CN=alice");
  // RFC 2253: most significant last, special characters escaped.
  EXPECT_EQ(certificate_principal(certs.make("dn", "/C=DE/O=lab, inc/OU=group/CN=alice")),
            "cert:CN=alice,OU=group,O=lab\\, inc,C=DE");
  // The same common name in two organisations: two principals.
  EXPECT_NE(certificate_principal(certs.make("a", "/O=lab A/CN=carol")),
            certificate_principal(certs.make("b", "/O=lab B/CN=carol")));
  // No common name: the rest of the subject.
  EXPECT_EQ(certificate_principal(certs.make("o", "/O=lab/OU=group")), "cert:OU=group,O=lab");
  // A certificate renewed for the same subject, with a new key, is the same principal; the subject
  // comes before any subjectAltName.
  EXPECT_EQ(certificate_principal(certs.make("r1", "/O=lab/CN=alice")),
            certificate_principal(certs.make("r2", "/O=lab/CN=alice", "subjectAltName=DNS:x.lab")));
}

TEST(Auth, CertificatesWithoutASubjectAreToldApartByNameOrKey) {
  Certificates certs;
  // A URI comes before a DNS name, whatever their order in the extension.
  EXPECT_EQ(certificate_principal(
                certs.make("uri", "/", "subjectAltName=DNS:alice.lab,URI:spiffe://lab/alice")),
            "cert-uri:spiffe://lab/alice");
  EXPECT_EQ(certificate_principal(certs.make("dns", "/", "subjectAltName=DNS:alice.lab")),
            "cert-dns:alice.lab");
  const std::string bare = certs.make("bare", "/");
  const std::string other = certs.make("other", "/");
  EXPECT_EQ(certificate_principal(bare), "cert-spki:sha256:" + certs.spki_sha256("bare"));
  EXPECT_EQ(certificate_principal(bare), certificate_principal(bare));
  EXPECT_NE(certificate_principal(bare), certificate_principal(other));
  // An email address alone names no principal: the key does.
  const std::string mail = certs.make("mail", "/", "subjectAltName=email:a@lab");
  EXPECT_EQ(certificate_principal(mail), "cert-spki:sha256:" + certs.spki_sha256("mail"));
}

TEST(Auth, TextWithoutACertificateHasNoPrincipal) {
  EXPECT_EQ(certificate_principal(""), std::nullopt);
  EXPECT_EQ(certificate_principal("not a certificate\n"), std::nullopt);
  EXPECT_EQ(certificate_principal("-----BEGIN CERTIFICATE-----\nbm90IGRlcg==\n"
                                  "-----END CERTIFICATE-----\n"),
            std::nullopt);
  Certificates certs;
  const std::string pem = certs.make("cut", "/CN=alice");
  EXPECT_EQ(certificate_principal(pem.substr(0, pem.size() / 2)), std::nullopt);
}

TEST(Auth, ConstantTimeEqualIsEquality) {
  EXPECT_TRUE(constant_time_equal("", ""));
  EXPECT_TRUE(constant_time_equal("secret-token", "secret-token"));
  EXPECT_FALSE(constant_time_equal("secret-token", "secret-tokeX"));
  EXPECT_FALSE(constant_time_equal("secret-token", "secret-token-longer"));
  EXPECT_FALSE(constant_time_equal("secret", ""));
  EXPECT_FALSE(constant_time_equal(std::string("a\0b", 3), std::string("a\0c", 3)));
}

}  // namespace
}  // namespace ukes::server
