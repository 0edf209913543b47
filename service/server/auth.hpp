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
  // token is at least kMinTokenBytes of printable ASCII. `client_certificates`: connections carry
  // a verified client certificate, whose common name is the principal ("cert:NAME").
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

// Compares in time that depends on the lengths alone, not on where the bytes differ.
bool constant_time_equal(const std::string& a, const std::string& b);

}  // namespace ukes::server
