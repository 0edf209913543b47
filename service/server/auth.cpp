#include "service/server/auth.hpp"

#include <grpc/grpc_security_constants.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <climits>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "kernels/core/sha256.hpp"

namespace ukes::server {
namespace {

struct OpenSslFree {
  void operator()(BIO* p) const { BIO_free(p); }
  void operator()(X509* p) const { X509_free(p); }
  void operator()(GENERAL_NAMES* p) const { GENERAL_NAMES_free(p); }
  void operator()(unsigned char* p) const { OPENSSL_free(p); }
};
template <typename T>
using Owned = std::unique_ptr<T, OpenSslFree>;

// Bytes 0x21 to 0x7e only: no spaces, control characters or anything beyond ASCII.
bool printable(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x21 && c <= 0x7e; });
}

// The subject in RFC 2253 form, which escapes special and non-ASCII characters.
std::optional<std::string> subject_rfc2253(const X509* cert) {
  const Owned<BIO> out(BIO_new(BIO_s_mem()));
  if (!out || X509_NAME_print_ex(out.get(), X509_get_subject_name(cert), 0, XN_FLAG_RFC2253) < 0)
    return std::nullopt;
  char* data = nullptr;
  const long size = BIO_get_mem_data(out.get(), &data);
  return std::string(data, static_cast<std::size_t>(size));
}

// The first subjectAltName of `type` (GEN_URI, GEN_DNS) that is non-empty printable ASCII.
std::optional<std::string> first_alt_name(const X509* cert, int type) {
  const Owned<GENERAL_NAMES> names(
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr)));
  for (int i = 0; names && i < sk_GENERAL_NAME_num(names.get()); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(names.get(), i);
    if (name->type != type) continue;
    // GEN_URI and GEN_DNS both hold an IA5String.
    const ASN1_IA5STRING* text = name->d.ia5;
    const std::string value(reinterpret_cast<const char*>(ASN1_STRING_get0_data(text)),
                            static_cast<std::size_t>(ASN1_STRING_length(text)));
    if (!value.empty() && printable(value)) return value;
  }
  return std::nullopt;
}

// SHA-256 of the DER SubjectPublicKeyInfo, in hex.
std::optional<std::string> spki_sha256(const X509* cert) {
  unsigned char* der = nullptr;
  const int size = i2d_X509_PUBKEY(X509_get_X509_PUBKEY(cert), &der);
  const Owned<unsigned char> owned(der);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int digest_size = 0;
  if (size <= 0 || EVP_Digest(der, static_cast<std::size_t>(size), digest, &digest_size,
                              EVP_sha256(), nullptr) != 1)
    return std::nullopt;
  return to_hex(std::string_view(reinterpret_cast<const char*>(digest), digest_size));
}

// The principal of the client certificate the TLS handshake verified, if it has one.
std::optional<std::string> peer_certificate_principal(const grpc::CallbackServerContext& context) {
  const auto auth = context.auth_context();
  if (!auth) return std::nullopt;
  const auto pems = auth->FindPropertyValues(GRPC_X509_PEM_CERT_PROPERTY_NAME);
  if (pems.empty()) return std::nullopt;
  return certificate_principal(std::string(pems.front().data(), pems.front().size()));
}

}  // namespace

std::optional<std::string> certificate_principal(const std::string& pem) {
  if (pem.size() > INT_MAX) return std::nullopt;
  const Owned<BIO> in(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  const Owned<X509> cert(in ? PEM_read_bio_X509(in.get(), nullptr, nullptr, nullptr) : nullptr);
  ERR_clear_error();  // a failed parse leaves its reasons queued on this thread
  if (!cert) return std::nullopt;
  const auto prefixed = [](const char* prefix, std::optional<std::string> value) {
    return value ? std::optional<std::string>(prefix + *value) : std::nullopt;
  };
  if (X509_NAME_entry_count(X509_get_subject_name(cert.get())) > 0)
    return prefixed("cert:", subject_rfc2253(cert.get()));
  if (auto uri = first_alt_name(cert.get(), GEN_URI)) return prefixed("cert-uri:", uri);
  if (auto dns = first_alt_name(cert.get(), GEN_DNS)) return prefixed("cert-dns:", dns);
  return prefixed("cert-spki:sha256:", spki_sha256(cert.get()));
}

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
    // ':' is left to certificate principals, so that no name can be taken for one.
    if (!printable(token.name) || token.name.find(':') != std::string::npos)
      throw std::runtime_error(where + "NAME must be printable ASCII without ':'");
    if (!printable(token.secret))
      throw std::runtime_error(where + "tokens must be printable ASCII");
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
    if (auto who = peer_certificate_principal(context)) return who;
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
