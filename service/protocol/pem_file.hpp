// A PEM file's text for gRPC's TLS credentials, on the server (certificate, key, client CA) and in
// the clients (CA, client certificate and key).
#pragma once

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace ukes {

// std::runtime_error naming `flag` when the file cannot be read or is empty.
inline std::string read_pem_file(const std::string& path, const char* flag) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in || text.str().empty())
    throw std::runtime_error(std::string(flag) + ": cannot read " + path);
  return text.str();
}

}  // namespace ukes
