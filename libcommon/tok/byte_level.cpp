#include "tok/byte_level.h"

#include "util/utf8.h"

#include <array>

namespace bk {
namespace {

constexpr bool stands_for_itself(int b) { return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE); }

struct Tables {
  std::array<char32_t, 256> char_of{};
  std::array<std::string, 256> utf8_of;
  std::array<int16_t, 512> byte_of{};  // every alphabet code point is below U+0200
  Tables() {
    byte_of.fill(-1);
    char32_t next = 0x100;
    for (int b = 0; b < 256; ++b) {
      char_of[b] = stands_for_itself(b) ? static_cast<char32_t>(b) : next++;
      append_utf8(utf8_of[b], char_of[b]);
      byte_of[char_of[b]] = static_cast<int16_t>(b);
    }
  }
};

const Tables& tables() {
  static const Tables t;
  return t;
}

// Length of the well-formed UTF-8 sequence at bytes[pos], or the length of its maximal subpart (>= 1) as a
// negative number when it is ill-formed.
int sequence_length(std::string_view bytes, size_t pos) {
  const auto at = [&](size_t i) { return static_cast<uint8_t>(bytes[i]); };
  const uint8_t lead = at(pos);
  if (lead < 0x80) return 1;
  int need;
  uint8_t low = 0x80, high = 0xBF;  // the range of the first continuation byte (RFC 3629, table 3-7)
  if (lead >= 0xC2 && lead <= 0xDF) need = 1;
  else if (lead >= 0xE0 && lead <= 0xEF) {
    need = 2;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    need = 3;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return -1;
  }
  for (int k = 1; k <= need; ++k) {
    if (pos + k >= bytes.size()) return -k;
    const uint8_t c = at(pos + k);
    const bool ok = k == 1 ? (c >= low && c <= high) : (c >= 0x80 && c <= 0xBF);
    if (!ok) return -k;
  }
  return need + 1;
}

}  // namespace

char32_t byte_level_char(uint8_t b) { return tables().char_of[b]; }

int byte_level_byte(char32_t c) { return c < 512 ? tables().byte_of[c] : -1; }

void append_byte_level(std::string& out, std::string_view bytes) {
  const Tables& t = tables();
  for (char c : bytes) out += t.utf8_of[static_cast<uint8_t>(c)];
}

bool append_bytes_of_byte_level(std::string& out, std::string_view token) {
  const size_t mark = out.size();
  for (size_t pos = 0; pos < token.size();) {
    const int b = byte_level_byte(next_code_point(token, pos));
    if (b < 0) {
      out.resize(mark);
      return false;
    }
    out.push_back(static_cast<char>(b));
  }
  return true;
}

void append_utf8_lossy(std::string& out, std::string_view bytes) {
  for (size_t pos = 0; pos < bytes.size();) {
    const int n = sequence_length(bytes, pos);
    if (n > 0) {
      out.append(bytes.substr(pos, n));
      pos += n;
    } else {
      out += "\xEF\xBF\xBD";
      pos += -n;
    }
  }
}

}  // namespace bk
