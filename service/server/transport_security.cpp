#include "service/server/transport_security.hpp"

#include <arpa/inet.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <algorithm>
#include <climits>
#include <memory>
#include <stdexcept>
#include <vector>

#include "service/protocol/pem_file.hpp"

namespace ukes::server {
namespace {

struct OpenSslFree {
  void operator()(BIO* p) const { BIO_free(p); }
  void operator()(X509* p) const { X509_free(p); }
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
template <typename T>
using Owned = std::unique_ptr<T, OpenSslFree>;

Owned<BIO> memory_bio(const std::string& text) {
  return Owned<BIO>(
      BIO_new_mem_buf(text.data(), static_cast<int>(std::min<std::size_t>(text.size(), INT_MAX))));
}

// gRPC takes unencrypted keys only: an encrypted one fails here rather than prompting on the
// terminal.
int no_passphrase(char*, int, int, void*) { return -1; }

// The certificates in `pem` (the file `path`, given as `flag`), in order; std::runtime_error when
// there is none or one does not parse.
std::vector<Owned<X509>> read_certificates(const std::string& pem, const std::string& flag,
                                           const std::string& path) {
  const Owned<BIO> in = memory_bio(pem);
  std::vector<Owned<X509>> certificates;
  while (Owned<X509> c{in ? PEM_read_bio_X509(in.get(), nullptr, no_passphrase, nullptr) : nullptr})
    certificates.push_back(std::move(c));
  // Reading ends at the text's end (no further PEM block) or at a block that does not parse.
  const unsigned long error = ERR_peek_last_error();
  const bool at_end =
      ERR_GET_LIB(error) == ERR_LIB_PEM && ERR_GET_REASON(error) == PEM_R_NO_START_LINE;
  ERR_clear_error();
  if (!at_end)
    throw std::runtime_error(flag + ": " + path + " holds a PEM certificate that does not parse");
  if (certificates.empty())
    throw std::runtime_error(flag + ": " + path + " holds no PEM certificate");
  return certificates;
}

// std::runtime_error naming the file when the key does not parse or is not the key of the first
// certificate (the server's own; any others are its chain).
void check_key_pair(const std::string& cert_pem, const std::string& key_pem,
                    const ServerOptions& o) {
  const std::vector<Owned<X509>> chain = read_certificates(cert_pem, "--tls-cert", o.tls_cert);
  const Owned<BIO> in = memory_bio(key_pem);
  const Owned<EVP_PKEY> key(in ? PEM_read_bio_PrivateKey(in.get(), nullptr, no_passphrase, nullptr)
                               : nullptr);
  const bool matches = key && X509_check_private_key(chain.front().get(), key.get()) == 1;
  ERR_clear_error();
  if (!key)
    throw std::runtime_error("--tls-key: " + o.tls_key + " holds no unencrypted PEM private key");
  if (!matches)
    throw std::runtime_error("--tls-key: " + o.tls_key + " does not match the certificate in " +
                             o.tls_cert);
}

}  // namespace

bool is_loopback(const std::string& listen) {
  if (listen == "localhost") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, listen.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  return inet_pton(AF_INET6, listen.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

std::shared_ptr<grpc::ServerCredentials> server_credentials(const ServerOptions& o) {
  const bool tls = !o.tls_cert.empty() || !o.tls_key.empty();
  if (tls && (o.tls_cert.empty() || o.tls_key.empty()))
    throw std::runtime_error("--tls-cert and --tls-key go together");
  if (!tls && !o.tls_client_ca.empty())
    throw std::runtime_error("--tls-client-ca needs --tls-cert and --tls-key");
  // Tokens travel in request metadata: never in plain text.
  if (!tls && !o.token_file.empty())
    throw std::runtime_error("--token-file needs TLS (--tls-cert)");
  const bool authenticated = !o.token_file.empty() || !o.tls_client_ca.empty();
  if (!is_loopback(o.listen) && !(tls && authenticated) && !o.insecure)
    throw std::runtime_error(
        "--listen " + o.listen +
        " is reachable from other machines: give --tls-cert, --tls-key and --token-file (or "
        "--tls-client-ca), or say --insecure");
  if (!tls) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions ssl(
      o.tls_client_ca.empty() ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                              : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  // gRPC would refuse these only when the server starts listening, without saying why.
  const std::string cert = read_pem_file(o.tls_cert, "--tls-cert");
  const std::string key = read_pem_file(o.tls_key, "--tls-key");
  check_key_pair(cert, key, o);
  ssl.pem_key_cert_pairs.push_back({key, cert});
  if (!o.tls_client_ca.empty()) {
    ssl.pem_root_certs = read_pem_file(o.tls_client_ca, "--tls-client-ca");
    read_certificates(ssl.pem_root_certs, "--tls-client-ca", o.tls_client_ca);
  }
  return grpc::SslServerCredentials(ssl);
}

}  // namespace ukes::server
