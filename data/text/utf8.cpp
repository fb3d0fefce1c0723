#include "data/text/utf8.h"

#include <cstdint>
#include <cstring>

namespace tn {

size_t invalid_utf8_at(std::string_view text) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  const size_t size = text.size();
  size_t pos = 0;
  while (pos < size) {
    // ASCII fast path: eight bytes at a time while none has its high bit set.
    while (pos + 8 <= size) {
      uint64_t word = 0;
      std::memcpy(&word, bytes + pos, sizeof word);
      if (word & 0x8080808080808080ULL) break;
      pos += 8;
    }
    if (pos >= size) break;
    const unsigned char lead = bytes[pos];
    if (lead < 0x80) {
      ++pos;
      continue;
    }
    size_t length = 0;
    unsigned char low = 0x80, high = 0xBF;  // allowed range of the second byte
    if (lead >= 0xC2 && lead <= 0xDF) {
      length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3;
      if (lead == 0xE0) low = 0xA0;   // no overlong forms
      if (lead == 0xED) high = 0x9F;  // no surrogates
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4;
      if (lead == 0xF0) low = 0x90;   // no overlong forms
      if (lead == 0xF4) high = 0x8F;  // nothing above U+10FFFF
    } else {
      return pos;
    }
    if (pos + length > size) return pos;
    if (bytes[pos + 1] < low || bytes[pos + 1] > high) return pos;
    for (size_t k = 2; k < length; ++k)
      if (bytes[pos + k] < 0x80 || bytes[pos + k] > 0xBF) return pos;
    pos += length;
  }
  return std::string_view::npos;
}

}  // namespace tn
