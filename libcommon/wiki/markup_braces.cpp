// Pass 2: templates, parser functions, template parameters and tables, all nested to any depth; and the
// disambiguation check, which reads template names.
#include "wiki/markup_passes.h"

#include <cstring>
#include <string>
#include <vector>

namespace bk {
namespace detail {
namespace {

enum class Frame : unsigned char { template_, parameter, table };

struct Open {
  Frame kind;
  size_t out_start;  // out.size() when the opener was met: closing truncates back to it
};

bool at_line_start(std::string_view in, size_t pos) {
  // "{|" and "|}" count only at the start of a line, after optional blanks and ':' indentation.
  while (pos > 0) {
    char c = in[pos - 1];
    if (c == '\n') return true;
    if (!is_blank(c) && c != ':') return false;
    --pos;
  }
  return true;
}

constexpr ByteSet kStops("{}|");

}  // namespace

void drop_templates_and_tables(std::string_view in, std::string& out) {
  std::vector<Open> stack;
  size_t open_templates = 0;  // frames on the stack that are not tables
  auto push = [&](Frame kind) {
    stack.push_back({kind, out.size()});
    if (kind != Frame::table) ++open_templates;
  };
  auto pop_to = [&](size_t k) {  // closes stack[k] and everything above it
    out.resize(stack[k].out_start);
    for (size_t j = k; j < stack.size(); ++j)
      if (stack[j].kind != Frame::table) --open_templates;
    stack.resize(k);
  };
  size_t pos = 0;
  const size_t n = in.size();
  while (pos < n) {
    size_t next = pos;
    while (next < n && !kStops.table[static_cast<unsigned char>(in[next])]) ++next;
    out.append(in.data() + pos, next - pos);
    if (next == n) break;
    pos = next;
    char c = in[pos];
    char c1 = pos + 1 < n ? in[pos + 1] : '\0';
    char c2 = pos + 2 < n ? in[pos + 2] : '\0';
    if (c == '{' && c1 == '{') {
      bool parameter = c2 == '{';
      push(parameter ? Frame::parameter : Frame::template_);
      pos += parameter ? 3 : 2;
    } else if (c == '{' && c1 == '|' && at_line_start(in, pos)) {
      push(Frame::table);
      pos += 2;
    } else if (c == '}' && c1 == '}' && c2 == '}' && !stack.empty() && stack.back().kind == Frame::parameter) {
      pop_to(stack.size() - 1);
      pos += 3;
    } else if (c == '}' && c1 == '}') {
      // Closes the nearest template (tables left open inside it go with it); a stray "}}" is dropped.
      if (open_templates > 0) {
        size_t k = stack.size() - 1;
        while (stack[k].kind == Frame::table) --k;
        pop_to(k);
      }
      pos += 2;
    } else if (c == '|' && c1 == '}' && !stack.empty() && stack.back().kind == Frame::table &&
               at_line_start(in, pos)) {
      pop_to(stack.size() - 1);
      pos += 2;
    } else {
      out.push_back(c);
      ++pos;
    }
  }
  // Openers never closed were dropped when met; their text stays.
}

}  // namespace detail

namespace {

constexpr std::string_view kDisambiguationTemplates[] = {
    "disambiguation", "disambig", "dab", "disamb", "dis", "hndis", "hndisambig", "geodis", "numberdis",
    "letter-number combination disambiguation", "set index", "set index article", "sia", "shipindex",
    "ship index", "mountainindex", "mountain index", "roadindex", "road index", "sportindex", "sport index",
    "surname", "given name", "hospital disambiguation", "school disambiguation", "mathematical disambiguation",
    "airport disambiguation", "call sign disambiguation", "species latin name disambiguation",
    "place name disambiguation", "human name disambiguation", "disambiguation cleanup", "dab cleanup",
    "molecular formula index", "chemistry index", "plant common name", "animal common name"};

// Lower-cased, '_' as ' ', trimmed template name starting at in[pos] (just after "{{").
std::string template_name(std::string_view in, size_t pos) {
  std::string name;
  for (size_t i = pos; i < in.size() && name.size() < 64; ++i) {
    char c = in[i];
    if (c == '|' || c == '}' || c == '\n' || c == '{') break;
    name.push_back(c == '_' ? ' ' : detail::ascii_lower(c));
  }
  while (!name.empty() && name.back() == ' ') name.pop_back();
  size_t lead = name.find_first_not_of(' ');
  name.erase(0, lead == std::string::npos ? name.size() : lead);
  if (name.rfind("template:", 0) == 0) name.erase(0, 9);
  return name;
}

}  // namespace

bool is_disambiguation(std::string_view title, std::string_view wikitext) {
  constexpr std::string_view suffix = "(disambiguation)";
  if (title.size() >= suffix.size() && title.substr(title.size() - suffix.size()) == suffix) return true;
  if (wikitext.find("__DISAMBIG__") != std::string_view::npos) return true;
  for (size_t at = wikitext.find("{{"); at != std::string_view::npos; at = wikitext.find("{{", at + 2)) {
    std::string name = template_name(wikitext, at + 2);
    if (name.empty()) continue;
    for (auto t : kDisambiguationTemplates)
      if (name == t) return true;
    constexpr std::string_view dis = " disambiguation";
    if (name.size() > dis.size() && name.compare(name.size() - dis.size(), dis.size(), dis) == 0) return true;
  }
  return false;
}

}  // namespace bk
