// The passes of the wikitext cleaner (see markup.h for the order and the reasons for it). Each reads `in`
// and appends to `out`; none keeps state between calls.
#pragma once

#include "wiki/markup.h"

#include <string>
#include <string_view>
#include <vector>

namespace bk::detail {

void strip_comments_and_extension_tags(std::string_view in, std::string& out);
void drop_templates_and_tables(std::string_view in, std::string& out);
void unwrap_links(std::string_view in, std::string& out);
void render_lines(std::string_view in, const WikiMarkupOptions& options, std::vector<std::string>& paragraphs);

// One line's inline markup: HTML tags (inner text kept, <br> a space), '' and ''' quotes, __MAGIC__ words,
// character references (no-break spaces become spaces), runs of white space squeezed to one space.
void render_inline(std::string_view line, std::string& out);

// HTML tag at in[pos] ('<'): its lower-cased name (at most 15 chars, else ""), whether it closes or
// closes itself, and the index after its '>'. False if in[pos] does not start a tag on this line.
struct Tag {
  std::string_view name_raw;
  char name[16];
  size_t name_size = 0;
  bool closing = false, self_closing = false;
  size_t end = 0;
  std::string_view lower_name() const { return {name, name_size}; }
};
bool parse_tag(std::string_view in, size_t pos, Tag& tag, bool allow_newlines);

// A set of bytes known at compile time, for the scanners' "copy until one of these" loops.
struct ByteSet {
  bool table[256] = {};
  constexpr explicit ByteSet(std::string_view bytes) {
    for (unsigned char c : bytes) table[c] = true;
  }
};

inline char ascii_lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }
inline bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

}  // namespace bk::detail
