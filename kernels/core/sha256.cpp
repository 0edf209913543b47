#include "kernels/core/sha256.hpp"

#include <openssl/evp.h>

#include <stdexcept>

namespace ukes {

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (ctx_ == nullptr || EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr) != 1) {
    EVP_MD_CTX_free(ctx_);
    throw std::runtime_error("SHA-256 is not available");
  }
}

Sha256::~Sha256() { EVP_MD_CTX_free(ctx_); }

Sha256& Sha256::add(std::int64_t v) {
  unsigned char le[8];
  for (int k = 0; k < 8; ++k)
    le[k] = static_cast<unsigned char>(static_cast<std::uint64_t>(v) >> (8 * k));
  EVP_DigestUpdate(ctx_, le, sizeof le);
  return *this;
}

Sha256& Sha256::add(std::string_view bytes) {
  add(static_cast<std::int64_t>(bytes.size()));
  EVP_DigestUpdate(ctx_, bytes.data(), bytes.size());
  return *this;
}

std::string Sha256::digest() {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned size = 0;
  EVP_DigestFinal_ex(ctx_, out, &size);
  return std::string(reinterpret_cast<const char*>(out), size);
}

std::string to_hex(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * bytes.size());
  for (const char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    hex += kHex[b >> 4];
    hex += kHex[b & 0xf];
  }
  return hex;
}

std::string sha256_hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &size, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("SHA-256 failed");
  return to_hex(std::string_view(reinterpret_cast<const char*>(digest), size));
}

}  // namespace ukes
