// UTF-8 checks and small helpers shared by the text tools.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace bk {

// Offset of the first byte that is not part of well-formed UTF-8 (RFC 3629: no overlongs, no surrogates,
// nothing above U+10FFFF), or npos when `text` is valid. A sequence cut off at the end counts as invalid.
size_t utf8_invalid_offset(std::string_view text);

// Appends the UTF-8 encoding of code point cp (must be a valid scalar value).
void append_utf8(std::string& out, char32_t cp);

// Decodes one code point at text[pos] (text must be valid UTF-8) and advances pos.
char32_t next_code_point(std::string_view text, size_t& pos);

bool is_blank_line(std::string_view line);  // empty or only ASCII spaces/tabs

}  // namespace bk
