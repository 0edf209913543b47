// SHA-256 (OpenSSL's EVP), for content ids and checksums: of one byte string, or of several fields,
// each length-prefixed so that no two field lists hash the same bytes.
#pragma once

#include <bit>
#include <cstdint>
#include <string>
#include <string_view>

struct evp_md_ctx_st;

namespace ukes {

class Sha256 {
 public:
  Sha256();  // throws std::runtime_error when OpenSSL has no SHA-256
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  Sha256& add(std::int64_t v);                                           // 8 bytes, little-endian
  Sha256& add(double v) { return add(std::bit_cast<std::int64_t>(v)); }  // its bits
  Sha256& add(std::string_view bytes);  // its length (as add(int64)), then its bytes
  std::string digest();                 // the 32 raw bytes; once

 private:
  evp_md_ctx_st* ctx_;
};

// Lowercase hexadecimal of `bytes`.
std::string to_hex(std::string_view bytes);

// The SHA-256 of `bytes` alone (no length prefix), in hex.
std::string sha256_hex(std::string_view bytes);

}  // namespace ukes
