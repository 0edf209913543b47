#include "service/runspec/printable_text.hpp"

#include <algorithm>

namespace ukes {

std::string printable_text(std::string_view text, std::size_t max_bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(std::min(text.size(), max_bytes) + 32);
  std::size_t used = 0;  // input bytes written to `out`
  for (; used < text.size(); ++used) {
    const auto c = static_cast<unsigned char>(text[used]);
    const bool plain = c >= 0x20 && c <= 0x7e && c != '\\';
    const std::size_t width = plain ? 1 : c == '\\' ? 2 : 4;
    if (out.size() + width > max_bytes) break;
    if (plain) {
      out += static_cast<char>(c);
    } else if (c == '\\') {
      out += "\\\\";
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
  }
  if (used < text.size()) out += "...(" + std::to_string(text.size() - used) + " more bytes)";
  return out;
}

}  // namespace ukes
