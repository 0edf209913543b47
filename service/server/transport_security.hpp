// How ukes-server is reached: TLS from the operator's certificate and key (gRPC's own SSL
// credentials), client certificates verified against a CA for mutual TLS, and the rule that a
// server reachable beyond this machine uses TLS and authentication unless --insecure says so.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "service/server/server_options.hpp"

namespace ukes::server {

// Whether `listen` (an address as --listen takes it) can only be reached from this machine.
bool is_loopback(const std::string& listen);

// TLS credentials from o.tls_cert / o.tls_key (and o.tls_client_ca: require and verify client
// certificates), or insecure ones when no certificate is given. std::runtime_error naming the
// flag when a file cannot be read, does not hold PEM certificates (--tls-cert, --tls-client-ca) or
// an unencrypted PEM private key (--tls-key), when the key is not the certificate's, or when the
// flags do not make a secure server where one is required (see above).
std::shared_ptr<grpc::ServerCredentials> server_credentials(const ServerOptions& o);

}  // namespace ukes::server
