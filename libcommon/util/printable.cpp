#include "util/printable.h"

#include <fmt/format.h>

namespace bk {
namespace {

// Length of the well-formed UTF-8 sequence at text[pos] (RFC 3629), 0 if the bytes there are not one.
size_t sequence_at(std::string_view text, size_t pos, char32_t& cp) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  unsigned char lead = byte(pos);
  size_t length;
  char32_t min;
  if (lead < 0x80) {
    cp = lead;
    return 1;
  } else if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2, min = 0x80, cp = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3, min = 0x800, cp = lead & 0x0F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4, min = 0x10000, cp = lead & 0x07;
  } else {
    return 0;
  }
  if (pos + length > text.size()) return 0;
  for (size_t i = 1; i < length; ++i) {
    if ((byte(pos + i) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(pos + i) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return length;
}

// Code points a terminal or a reader would not show as themselves.
bool needs_escape(char32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) || cp == 0x2028 || cp == 0x2029 || (cp >= 0x202A && cp <= 0x202E) ||
         (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200E || cp == 0x200F || cp == 0xFEFF;
}

}  // namespace

std::string printable_excerpt(std::string_view text, size_t max_bytes) {
  std::string out;
  std::string piece;
  for (size_t pos = 0; pos < text.size();) {
    char32_t cp = 0;
    size_t length = sequence_at(text, pos, cp);
    piece.clear();
    if (length == 0) {
      piece = fmt::format("\\x{:02x}", static_cast<unsigned char>(text[pos]));
      length = 1;
    } else if (cp == '\\') {
      piece = "\\\\";
    } else if (cp == '\n') {
      piece = "\\n";
    } else if (cp == '\t') {
      piece = "\\t";
    } else if (cp == '\r') {
      piece = "\\r";
    } else if (cp < 0x20 || cp == 0x7F) {
      piece = fmt::format("\\x{:02x}", static_cast<unsigned>(cp));
    } else if (needs_escape(cp)) {
      piece = fmt::format("\\u{:04x}", static_cast<unsigned>(cp));
    } else {
      piece = text.substr(pos, length);
    }
    if (out.size() + piece.size() > max_bytes) {
      out += fmt::format("... ({} bytes)", text.size());
      return out;
    }
    out += piece;
    pos += length;
  }
  return out;
}

}  // namespace bk
