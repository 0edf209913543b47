#include "service/server/auth.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace ukes::server {

bool constant_time_equal(const std::string& a, const std::string& b) {
  // Every byte of the longer string is read, so the time says nothing about the content.
  const std::size_t n = a.size() > b.size() ? a.size() : b.size();
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (std::size_t i = 0; i < n; ++i) {
    const auto x = static_cast<unsigned char>(i < a.size() ? a[i] : 0);
    const auto y = static_cast<unsigned char>(i < b.size() ? b[i] : 0);
    diff = static_cast<unsigned char>(diff | (x ^ y));
  }
  return diff == 0;
}

Authenticator::Authenticator(const std::string& token_file, bool client_certificates)
    : client_certificates_(client_certificates) {
  if (token_file.empty()) return;
  std::ifstream in(token_file);
  if (!in) throw std::runtime_error("--token-file: cannot read " + token_file);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::istringstream words(line);
    Token token;
    if (!(words >> token.name) || token.name.front() == '#') continue;
    std::string extra;
    const std::string where = "--token-file line " + std::to_string(number) + ": ";
    if (!(words >> token.secret) || (words >> extra))
      throw std::runtime_error(where + "expected `NAME TOKEN`");
    if (token.secret.size() < kMinTokenBytes)
      throw std::runtime_error(where + "tokens must be at least " + std::to_string(kMinTokenBytes) +
                               " characters");
    for (const Token& other : tokens_)
      if (other.name == token.name || other.secret == token.secret)
        throw std::runtime_error(where + "duplicate name or token");
    tokens_.push_back(std::move(token));
  }
  if (tokens_.empty()) throw std::runtime_error("--token-file: no tokens in " + token_file);
}

std::optional<std::string> Authenticator::principal(
    const grpc::CallbackServerContext& context) const {
  if (!enabled()) return std::string();
  if (client_certificates_) {
    // The TLS handshake already refused connections without a certificate the CA signed.
    const auto auth = context.auth_context();
    if (auth) {
      const auto names = auth->FindPropertyValues("x509_common_name");
      if (!names.empty()) return "cert:" + std::string(names.front().data(), names.front().size());
    }
    if (tokens_.empty()) return std::nullopt;
  }
  const auto& metadata = context.client_metadata();
  const auto it = metadata.find("authorization");
  if (it == metadata.end()) return std::nullopt;
  const std::string value(it->second.data(), it->second.size());
  static const std::string kBearer = "Bearer ";
  if (value.compare(0, kBearer.size(), kBearer) != 0) return std::nullopt;
  const std::string presented = value.substr(kBearer.size());
  std::optional<std::string> found;
  for (const Token& token : tokens_)  // all of them, whichever matches
    if (constant_time_equal(presented, token.secret)) found = token.name;
  return found;
}

}  // namespace ukes::server
