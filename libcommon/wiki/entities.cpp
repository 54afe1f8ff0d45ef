#include "wiki/entities.h"

#include "util/utf8.h"

#include <algorithm>
#include <cstring>

namespace bk {
namespace {

struct NamedEntity {
  const char* name;
  char32_t first, second;
};

constexpr NamedEntity kNamed[] = {
#include "wiki/entity_table.inc"
};
constexpr size_t kLongestName = 32;  // "CounterClockwiseContourIntegral" is 31

void append_code_point(std::string& out, uint32_t cp) {
  if (cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) cp = 0xFFFD;
  append_utf8(out, static_cast<char32_t>(cp));
}

// "&#...;" at text[pos]: decimal or hex digits, at most 8 of them so the value cannot overflow.
bool decode_numeric(std::string_view text, size_t& pos, std::string& out) {
  size_t i = pos + 2;
  bool hex = i < text.size() && (text[i] == 'x' || text[i] == 'X');
  if (hex) ++i;
  uint32_t value = 0;
  size_t digits_start = i;
  for (; i < text.size() && i - digits_start < 8; ++i) {
    char c = text[i];
    if (c >= '0' && c <= '9') value = value * (hex ? 16 : 10) + uint32_t(c - '0');
    else if (hex && c >= 'a' && c <= 'f') value = value * 16 + uint32_t(c - 'a' + 10);
    else if (hex && c >= 'A' && c <= 'F') value = value * 16 + uint32_t(c - 'A' + 10);
    else break;
  }
  if (i == digits_start || i >= text.size() || text[i] != ';') return false;
  append_code_point(out, value);
  pos = i + 1;
  return true;
}

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

}  // namespace

bool decode_html_entity(std::string_view text, size_t& pos, std::string& out) {
  if (pos + 2 >= text.size()) return false;
  if (text[pos + 1] == '#') return decode_numeric(text, pos, out);
  size_t end = pos + 1;
  while (end < text.size() && end - pos <= kLongestName && is_name_char(text[end])) ++end;
  if (end >= text.size() || text[end] != ';' || end == pos + 1) return false;
  std::string_view name = text.substr(pos + 1, end - pos - 1);
  auto it = std::lower_bound(std::begin(kNamed), std::end(kNamed), name,
                             [](const NamedEntity& e, std::string_view n) { return std::string_view(e.name) < n; });
  if (it == std::end(kNamed) || std::string_view(it->name) != name) return false;
  append_utf8(out, it->first);
  if (it->second) append_utf8(out, it->second);
  pos = end + 1;
  return true;
}

bool decode_xml_entity(std::string_view text, size_t& pos, std::string& out) {
  if (pos + 2 >= text.size()) return false;
  if (text[pos + 1] == '#') return decode_numeric(text, pos, out);
  std::string_view rest = text.substr(pos + 1, 5);
  auto take = [&](std::string_view name, char c) {
    if (rest.size() > name.size() && rest.substr(0, name.size()) == name && rest[name.size()] == ';') {
      out.push_back(c);
      pos += name.size() + 2;
      return true;
    }
    return false;
  };
  return take("amp", '&') || take("lt", '<') || take("gt", '>') || take("quot", '"') || take("apos", '\'');
}

namespace {
template <bool (*Decode)(std::string_view, size_t&, std::string&)>
void append_decoded(std::string_view text, std::string& out) {
  size_t pos = 0;
  while (pos < text.size()) {
    const void* amp = std::memchr(text.data() + pos, '&', text.size() - pos);
    size_t next = amp ? static_cast<const char*>(amp) - text.data() : text.size();
    out.append(text.data() + pos, next - pos);
    pos = next;
    if (pos == text.size()) break;
    if (!Decode(text, pos, out)) out.push_back(text[pos++]);
  }
}
}  // namespace

void append_html_decoded(std::string_view text, std::string& out) { append_decoded<decode_html_entity>(text, out); }
void append_xml_decoded(std::string_view text, std::string& out) { append_decoded<decode_xml_entity>(text, out); }

}  // namespace bk
