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

// The escaped form of the character at text[pos] (empty when it stands as it is); sets its length in bytes.
std::string escaped_at(std::string_view text, size_t pos, size_t& length, bool escape_backslash) {
  char32_t cp = 0;
  length = sequence_at(text, pos, cp);
  if (length == 0) {
    length = 1;
    return fmt::format("\\x{:02x}", static_cast<unsigned char>(text[pos]));
  }
  if (cp == '\\') return escape_backslash ? "\\\\" : "";
  if (cp == '\n') return "\\n";
  if (cp == '\t') return "\\t";
  if (cp == '\r') return "\\r";
  if (cp < 0x20 || cp == 0x7F) return fmt::format("\\x{:02x}", static_cast<unsigned>(cp));
  if (needs_escape(cp)) return fmt::format("\\u{:04x}", static_cast<unsigned>(cp));
  return "";
}

// A cut at or before `at` that does not split a UTF-8 sequence.
size_t boundary_before(std::string_view text, size_t at) {
  while (at > 0 && at < text.size() && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) --at;
  return at;
}

}  // namespace

std::string one_line(std::string_view message, size_t max_bytes) {
  std::string out;
  for (size_t pos = 0, length = 0; pos < message.size(); pos += length) {
    const std::string piece = escaped_at(message, pos, length, false);
    if (piece.empty()) out.append(message.substr(pos, length));
    else out += piece;
  }
  if (out.size() <= max_bytes) return out;
  const size_t head = boundary_before(out, max_bytes / 2);
  const size_t tail = boundary_before(out, out.size() - max_bytes / 2);
  return fmt::format("{} [... {} bytes ...] {}", out.substr(0, head), tail - head, out.substr(tail));
}

std::string printable_excerpt(std::string_view text, size_t max_bytes) {
  std::string out;
  for (size_t pos = 0, length = 0; pos < text.size(); pos += length) {
    std::string piece = escaped_at(text, pos, length, true);
    if (piece.empty()) piece = text.substr(pos, length);
    if (out.size() + piece.size() > max_bytes) {
      out += fmt::format("... ({} bytes)", text.size());
      return out;
    }
    out += piece;
  }
  return out;
}

}  // namespace bk
