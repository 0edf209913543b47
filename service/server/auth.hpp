// Who is calling: the principal a request acts for, from a bearer token (`authorization: Bearer
// TOKEN` metadata, checked against the server's token file) or from the verified client
// certificate of a mutual-TLS connection. Jobs belong to the principal that submitted them
// (service/server/ukes_service.cpp): another principal gets NOT_FOUND for them.
#pragma once

#include <grpcpp/grpcpp.h>

#include <optional>
#include <string>
#include <vector>

namespace ukes::server {

class Authenticator {
 public:
  // No tokens and no client certificates: every caller is the same anonymous principal "".
  Authenticator() = default;
  // `token_file` (may be empty): lines `NAME TOKEN`, '#' comments; NAME names the principal, the
  // token is at least kMinTokenBytes. Both are printable ASCII (0x21 to 0x7e) and NAME has no ':',
  // which only certificate principals hold. `client_certificates`: connections carry a verified
  // client certificate, whose identity is the principal (certificate_principal below).
  // std::runtime_error naming the line when the file is unreadable or malformed.
  Authenticator(const std::string& token_file, bool client_certificates);

  static constexpr std::size_t kMinTokenBytes = 16;

  bool enabled() const { return !tokens_.empty() || client_certificates_; }

  // The caller's principal, or nothing when it has none (UNAUTHENTICATED).
  std::optional<std::string> principal(const grpc::CallbackServerContext& context) const;

 private:
  struct Token {
    std::string name;
    std::string secret;
  };
  std::vector<Token> tokens_;
  bool client_certificates_ = false;
};

// The principal a client certificate (PEM, the first certificate in it) stands for, from the
// first of these it has, each form with its own prefix so that no two can be equal:
//   "cert:" + subject DN in RFC 2253 form   e.g. cert:CN=alice,O=lab
//   "cert-uri:" + first subjectAltName URI    e.g. cert-uri:spiffe://lab/alice
//   "cert-dns:" + first subjectAltName DNS    e.g. cert-dns:alice.lab
//   "cert-spki:sha256:" + SHA-256 (hex) of the DER SubjectPublicKeyInfo
// Certificates with the same subject DN (a renewed one, say) share a principal: the CA decides;
// ones without a subject are told apart by their names or keys. Nothing when the text holds no
// certificate.
std::optional<std::string> certificate_principal(const std::string& pem);

// Compares in time that depends on the lengths alone, not on where the bytes differ.
bool constant_time_equal(const std::string& a, const std::string& b);

}  // namespace ukes::server
