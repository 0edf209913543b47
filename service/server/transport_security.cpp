#include "service/server/transport_security.hpp"

#include <arpa/inet.h>

#include <stdexcept>

#include "service/protocol/pem_file.hpp"

namespace ukes::server {

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
  ssl.pem_key_cert_pairs.push_back(
      {read_pem_file(o.tls_key, "--tls-key"), read_pem_file(o.tls_cert, "--tls-cert")});
  if (!o.tls_client_ca.empty())
    ssl.pem_root_certs = read_pem_file(o.tls_client_ca, "--tls-client-ca");
  return grpc::SslServerCredentials(ssl);
}

}  // namespace ukes::server
