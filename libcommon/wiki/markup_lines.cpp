// Pass 4: lines into paragraphs (headings, lists, sections without prose) and inline markup.
#include "wiki/markup_passes.h"

#include "wiki/entities.h"

#include <algorithm>
#include <cstring>

namespace bk::detail {
namespace {

// Sections that hold references, links and lists rather than prose; dropped with their subsections.
constexpr std::string_view kNoProseSections[] = {
    "references", "notes", "footnotes", "citations", "sources", "bibliography", "further reading",
    "external links", "see also", "notes and references", "references and notes", "notes and citations",
    "works cited", "general references", "cited sources", "reference notes", "explanatory notes",
    "general and cited references", "sources and further reading", "external links and references",
    "related pages", "gallery", "footnotes and references", "citations and notes"};

// Tags that separate text like a block does: replaced by a space so words on either side stay apart.
constexpr std::string_view kBlockTags[] = {"br", "hr", "p", "div", "li", "td", "th", "tr", "dd", "dt",
                                           "blockquote", "center", "table", "caption", "ul", "ol", "dl",
                                           "h1", "h2", "h3", "h4", "h5", "h6", "poem"};
// Tags removed with their text kept.
constexpr std::string_view kInlineTags[] = {
    "a", "b", "i", "u", "s", "em", "strong", "big", "small", "sub", "sup", "span", "font", "code", "tt", "kbd",
    "samp", "var", "cite", "q", "dfn", "abbr", "del", "ins", "strike", "mark", "time", "bdi", "bdo", "data",
    "ruby", "rb", "rt", "rp", "rtc", "tbody", "thead", "tfoot", "onlyinclude", "noinclude", "includeonly",
    "nowiki", "ref", "references", "section", "wbr", "small", "abbr"};

template <size_t N>
bool contains(const std::string_view (&list)[N], std::string_view s) {
  for (auto x : list)
    if (x == s) return true;
  return false;
}

// Code points written as spaces (no-break and fixed-width spaces) or dropped (invisible marks).
enum class Special { none, space, drop };
Special classify(std::string_view utf8) {
  if (utf8 == "\xC2\xA0" || utf8 == "\xE2\x80\xAF" || utf8 == "\xE2\x80\x87" || utf8 == "\xE2\x80\x89" ||
      utf8 == "\xE2\x80\x8A" || utf8 == "\xE2\x80\x88" || utf8 == "\xE3\x80\x80")
    return Special::space;
  if (utf8 == "\xC2\xAD" || utf8 == "\xE2\x80\x8B" || utf8 == "\xE2\x80\x8C" || utf8 == "\xE2\x80\x8D" ||
      utf8 == "\xE2\x80\x8E" || utf8 == "\xE2\x80\x8F" || utf8 == "\xEF\xBB\xBF")
    return Special::drop;
  return Special::none;
}

// Bytes that need a look in render_inline; everything else is copied in runs.
constexpr ByteSet kSpecials("<'&_ \t\r\xC2\xE2\xE3\xEF");

struct Writer {
  std::string& out;
  bool pending_space = false;
  void space() { pending_space = !out.empty(); }
  void flush_space() {
    if (pending_space && !out.empty() && out.back() != ' ') out.push_back(' ');
    pending_space = false;
  }
  void text(std::string_view s) {
    flush_space();
    out.append(s);
  }
  void ch(char c) {
    flush_space();
    out.push_back(c);
  }
};

bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }

}  // namespace

void render_inline(std::string_view line, std::string& out) {
  Writer w{out};
  if (!out.empty()) w.pending_space = true;  // a new source line continues the paragraph after a space
  std::string decoded;
  const size_t n = line.size();
  size_t pos = 0;
  while (pos < n) {
    size_t run = pos;
    if (line[pos] != ' ') {
      // Copy up to the next special byte; a lone space between words is ordinary here.
      for (;;) {
        while (run < n && !kSpecials.table[static_cast<unsigned char>(line[run])]) ++run;
        if (run + 1 < n && line[run] == ' ' && !kSpecials.table[static_cast<unsigned char>(line[run + 1])]) {
          run += 2;
          continue;
        }
        break;
      }
    }
    if (run > pos) w.text(line.substr(pos, run - pos));
    pos = run;
    if (pos == n) break;
    char c = line[pos];
    if (c == ' ' || c == '\t' || c == '\r') {
      w.space();
      ++pos;
    } else if (c == '<') {
      Tag tag;
      if (parse_tag(line, pos, tag, false) &&
          (contains(kBlockTags, tag.lower_name()) || contains(kInlineTags, tag.lower_name()))) {
        if (contains(kBlockTags, tag.lower_name())) w.space();
        pos = tag.end;
      } else {
        w.ch('<');
        ++pos;
      }
    } else if (c == '\'') {
      size_t end = pos;
      while (end < n && line[end] == '\'') ++end;
      size_t count = end - pos;
      // '' italic, ''' bold, ''''' both; a fourth quote is a literal apostrophe before bold, more than five
      // are literal apostrophes before bold italic.
      size_t literal = count == 1 ? 1 : count == 4 ? 1 : count > 5 ? count - 5 : 0;
      for (size_t k = 0; k < literal; ++k) w.ch('\'');
      pos = end;
    } else if (c == '&') {
      decoded.clear();
      size_t after = pos;
      if (decode_html_entity(line, after, decoded)) {
        // &#10; and friends: a reference to a control character is white space, never a line break.
        Special s = decoded.size() == 1 && static_cast<unsigned char>(decoded[0]) < 0x20 ? Special::space
                                                                                       : classify(decoded);
        if (s == Special::space) w.space();
        else if (s == Special::none) w.text(decoded);
        pos = after;
      } else {
        w.ch('&');
        ++pos;
      }
    } else if (c == '_') {
      // __TOC__, __NOTOC__, __DISAMBIG__ ...: behaviour switches, not text.
      size_t end = pos + 2;
      if (pos + 1 < n && line[pos + 1] == '_') {
        while (end < n && is_upper(line[end])) ++end;
        if (end > pos + 2 && end + 1 < n && line[end] == '_' && line[end + 1] == '_') {
          pos = end + 2;
          continue;
        }
      }
      w.ch('_');
      ++pos;
    } else {
      // A lead byte that may start a no-break space, soft hyphen or invisible mark.
      size_t len = static_cast<unsigned char>(c) == 0xC2 ? 2 : 3;
      Special s = pos + len <= n ? classify(line.substr(pos, len)) : Special::none;
      if (s == Special::space) {
        w.space();
        pos += len;
      } else if (s == Special::drop) {
        pos += len;
      } else {
        w.ch(c);
        ++pos;
      }
    }
  }
}

namespace {

// Repairs what removed templates and references leave behind: "()" and "(; )", "( text", "word ,".
// Works in place: the write index never passes the read index.
void tidy(std::string& text) {
  char* d = text.data();
  const size_t n = text.size();
  size_t w = 0;
  for (size_t i = 0; i < n; ++i) {
    char c = d[i];
    if (c == '(') {
      size_t j = i + 1;
      while (j < n && (d[j] == ' ' || d[j] == ',' || d[j] == ';')) ++j;
      if (j < n && d[j] == ')') {  // nothing left inside
        i = j;
        char next = i + 1 < n ? d[i + 1] : ' ';
        if (w > 0 && d[w - 1] == ' ' && (next == ' ' || next == ',' || next == '.' || next == ';')) --w;
        continue;
      }
      d[w++] = '(';
      i = j - 1;  // skip the blanks and separators right after '('
      continue;
    }
    if (c == ' ') {
      char next = i + 1 < n ? d[i + 1] : '\0';
      if (w == 0 || next == ' ' || next == '\0' || next == ',' || next == ';' || next == ')' ||
          (next == '.' && (i + 2 >= n || d[i + 2] == ' ')))
        continue;
    }
    d[w++] = c;
  }
  while (w > 0 && d[w - 1] == ' ') --w;
  text.resize(w);
}

bool has_word_char(std::string_view s) {
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (u >= 0x80 || (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z')) return true;
  }
  return false;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (is_blank(s.front()))) s.remove_prefix(1);
  while (!s.empty() && (is_blank(s.back()))) s.remove_suffix(1);
  return s;
}

// "== Title ==" -> level 2 and "Title"; 0 when the line is not a heading.
int heading_level(std::string_view line, std::string_view& title) {
  size_t lead = 0, trail = 0;
  while (lead < line.size() && line[lead] == '=') ++lead;
  while (trail < line.size() - lead && line[line.size() - 1 - trail] == '=') ++trail;
  size_t level = std::min({lead, trail, size_t(6)});
  if (level == 0 || line.size() <= 2 * level) return 0;
  title = trim(line.substr(level, line.size() - 2 * level));
  return static_cast<int>(level);
}

}  // namespace

void render_lines(std::string_view in, const WikiMarkupOptions& options, std::vector<std::string>& paragraphs) {
  std::string paragraph;
  auto flush = [&] {
    tidy(paragraph);
    if (has_word_char(paragraph)) paragraphs.push_back(std::move(paragraph));
    paragraph.clear();
  };
  int skip_level = 0;  // inside a dropped section of this level (0 = not skipping)
  size_t pos = 0;
  while (pos < in.size()) {
    const void* nl = std::memchr(in.data() + pos, '\n', in.size() - pos);
    size_t end = nl ? static_cast<const char*>(nl) - in.data() : in.size();
    std::string_view line = trim(in.substr(pos, end - pos));
    pos = end + 1;
    std::string_view title;
    if (!line.empty() && line.front() == '=') {
      if (int level = heading_level(line, title)) {
        flush();
        if (skip_level && level > skip_level) continue;
        skip_level = 0;
        std::string rendered;
        render_inline(title, rendered);
        tidy(rendered);
        std::string key;
        for (char c : rendered) key.push_back(ascii_lower(c));
        while (!key.empty() && (key.back() == ':' || key.back() == '.')) key.pop_back();
        if (contains(kNoProseSections, key)) {
          skip_level = level;
        } else if (options.keep_headings && has_word_char(rendered)) {
          paragraphs.push_back(std::move(rendered));
        }
        continue;
      }
    }
    if (skip_level) continue;
    if (line.empty()) {
      flush();
      continue;
    }
    char first = line.front();
    if (first == '*' || first == '#' || first == ':' || first == ';') {
      flush();
      if (options.keep_lists) {
        size_t k = 0;
        while (k < line.size() && (line[k] == '*' || line[k] == '#' || line[k] == ':' || line[k] == ';')) ++k;
        render_inline(line.substr(k), paragraph);
        flush();
      }
      continue;
    }
    if (line.size() >= 4 && line.substr(0, 4) == "----") {
      flush();
      continue;
    }
    render_inline(line, paragraph);
  }
  flush();
}

}  // namespace bk::detail
