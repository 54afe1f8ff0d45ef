// Pass 1: comments, <nowiki>, and the extension tags whose content is not prose.
#include "wiki/markup_passes.h"

#include <array>
#include <cstring>

namespace bk::detail {
namespace {

// Tags dropped with everything inside them: references, formulas, code, galleries, scores, maps...
constexpr std::string_view kDropWithContent[] = {
    "ref",       "references", "math",     "chem",     "ce",          "gallery",   "timeline", "score",
    "syntaxhighlight", "source", "pre",    "graph",    "imagemap",    "mapframe",  "maplink",  "templatedata",
    "hiero",     "inputbox",   "categorytree", "charinsert", "templatestyles", "section", "indicator",
    "includeonly", "nowiki"};

// The table's own copy of name (so it outlives the parsed tag), or "" when the tag is not one of these.
std::string_view special_tag(std::string_view name) {
  for (auto n : kDropWithContent)
    if (n == name) return n;
  return {};
}

bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }

// Index of the '<' of the first "</name>" (case-insensitive, spaces allowed before '>') at or after from.
size_t find_closing(std::string_view in, size_t from, std::string_view name) {
  while (from < in.size()) {
    const void* hit = std::memchr(in.data() + from, '<', in.size() - from);
    if (!hit) return std::string_view::npos;
    size_t lt = static_cast<const char*>(hit) - in.data();
    from = lt + 1;
    if (lt + 1 >= in.size() || in[lt + 1] != '/') continue;
    size_t i = lt + 2, k = 0;
    while (k < name.size() && i < in.size() && ascii_lower(in[i]) == name[k]) ++i, ++k;
    if (k < name.size()) continue;
    while (i < in.size() && is_blank(in[i])) ++i;
    if (i < in.size() && in[i] == '>') return lt;
  }
  return std::string_view::npos;
}

// Copies nowiki text so that no later pass sees markup in it: the characters that mean something to a pass
// become numeric references, which the last pass turns back into the characters.
void append_protected(std::string_view text, std::string& out) {
  for (char c : text) {
    switch (c) {
      case '[': case ']': case '{': case '}': case '|': case '<': case '>': case '\'': case '=': case '*':
      case '#': case ':': case ';': case '_': case '~': case '!':
        out += "&#";
        out += std::to_string(static_cast<int>(c));
        out += ';';
        break;
      default: out.push_back(c);
    }
  }
}

}  // namespace

bool parse_tag(std::string_view in, size_t pos, Tag& tag, bool allow_newlines) {
  size_t i = pos + 1;
  tag.closing = i < in.size() && in[i] == '/';
  if (tag.closing) ++i;
  if (i >= in.size() || !is_name_start(in[i])) return false;
  size_t name_start = i;
  while (i < in.size() && is_name_char(in[i])) ++i;
  tag.name_size = i - name_start;
  if (tag.name_size >= sizeof(tag.name)) return false;
  tag.name_raw = in.substr(name_start, tag.name_size);
  for (size_t k = 0; k < tag.name_size; ++k) tag.name[k] = ascii_lower(in[name_start + k]);
  if (i < in.size() && !(is_blank(in[i]) || in[i] == '/' || in[i] == '>' || in[i] == '\n')) return false;
  const size_t limit = std::min(in.size(), i + 4096);  // attributes are short; this keeps the scan linear
  for (; i < limit; ++i) {
    char c = in[i];
    if (c == '>') {
      tag.self_closing = in[i - 1] == '/';
      tag.end = i + 1;
      return true;
    }
    if (c == '<' || (c == '\n' && !allow_newlines)) return false;
  }
  return false;
}

void strip_comments_and_extension_tags(std::string_view in, std::string& out) {
  // Once a search for "</name>" failed from some point, every later search fails too: remember that, so
  // a text full of unclosed tags stays linear.
  std::array<std::string_view, 8> unclosed{};
  size_t unclosed_count = 0;
  auto known_unclosed = [&](std::string_view name) {
    for (size_t k = 0; k < unclosed_count; ++k)
      if (unclosed[k] == name) return true;
    return false;
  };

  size_t pos = 0;
  while (pos < in.size()) {
    const void* hit = std::memchr(in.data() + pos, '<', in.size() - pos);
    size_t lt = hit ? static_cast<const char*>(hit) - in.data() : in.size();
    out.append(in.data() + pos, lt - pos);
    if (lt == in.size()) break;
    pos = lt;
    if (in.compare(lt, 4, "<!--") == 0) {
      size_t end = in.find("-->", lt + 4);
      pos = end == std::string_view::npos ? in.size() : end + 3;
      continue;
    }
    Tag tag;
    if (!parse_tag(in, lt, tag, true)) {
      out.push_back('<');
      ++pos;
      continue;
    }
    std::string_view name = special_tag(tag.lower_name());
    bool nowiki = name == "nowiki";
    if (name.empty()) {  // an ordinary HTML tag: the inline pass deals with it
      out.append(in.data() + lt, tag.end - lt);
      pos = tag.end;
      continue;
    }
    pos = tag.end;  // the tag itself always goes
    if (tag.closing || tag.self_closing || known_unclosed(name)) continue;
    size_t close = find_closing(in, tag.end, name);
    if (close == std::string_view::npos) {
      if (unclosed_count < unclosed.size()) unclosed[unclosed_count++] = name;
      continue;
    }
    if (nowiki) append_protected(in.substr(tag.end, close - tag.end), out);
    pos = in.find('>', close) + 1;
  }
}

}  // namespace bk::detail
