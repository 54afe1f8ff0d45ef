// Pass 3: internal links [[...]] (nested, as in image captions) and external links [url label].
#include "wiki/markup_passes.h"

#include <vector>

namespace bk::detail {
namespace {

constexpr size_t npos = std::string_view::npos;

struct OpenLink {
  size_t in_start;   // index in `in` just after "[["
  size_t out_start;  // out.size() when "[[" was met
  size_t pipe_in = npos, pipe_out = npos;  // the first '|' at this link's own level
};

// Namespaces whose links are not shown in the running text.
constexpr std::string_view kHiddenNamespaces[] = {"file", "image", "media", "category"};

// Interwiki prefixes that are shown inline (with their label) even though they are short like a language code.
constexpr std::string_view kInlineInterwiki[] = {"w", "s", "n", "q", "b", "v", "m", "c", "d", "mw", "wikt",
                                                 "meta", "commons", "species", "wikipedia", "wp", "en"};

constexpr std::string_view kLongLanguageCodes[] = {
    "simple", "zh-yue", "zh-min-nan", "zh-classical", "be-x-old", "be-tarask", "roa-rup", "roa-tara", "bat-smg",
    "fiu-vro", "nds-nl", "map-bms", "cbk-zam", "als", "arz", "ast", "azb", "bar", "bcl", "bpy", "bug", "ceb",
    "ckb", "diq", "dsb", "eml", "ext", "frp", "frr", "fur", "gan", "glk", "gom", "hak", "hif", "hsb", "ilo",
    "jbo", "kaa", "kab", "kbd", "koi", "krc", "ksh", "lad", "lbe", "lez", "lij", "lmo", "lrc", "ltg", "mai",
    "mdf", "mhr", "min", "mrj", "mwl", "myv", "mzn", "nah", "nap", "nds", "new", "nov", "nrm", "nso", "olo",
    "pag", "pam", "pap", "pcd", "pdc", "pfl", "pih", "pms", "pnb", "pnt", "rmy", "rue", "sah", "scn", "sco",
    "sgs", "srn", "stq", "szl", "tcy", "tet", "tpi", "tyv", "udm", "vec", "vep", "vls", "war", "wuu", "xal",
    "xmf", "yue", "zea"};

template <size_t N>
bool contains(const std::string_view (&list)[N], std::string_view s) {
  for (auto x : list)
    if (x == s) return true;
  return false;
}

// Whether a link with this target is left out of the text: files, images, categories, and interlanguage
// links (language-code prefix, no leading ':').
bool hidden_target(std::string_view target) {
  while (!target.empty() && is_blank(target.front())) target.remove_prefix(1);
  if (!target.empty() && target.front() == ':') {
    // [[:Category:X]] and [[:File:X]] are ordinary links to those pages.
    return false;
  }
  size_t colon = target.find(':');
  if (colon == npos || colon == 0 || colon > 16) return false;
  char prefix[16];
  size_t len = 0;
  for (size_t i = 0; i < colon; ++i) {
    char c = target[i];
    if (is_blank(c) && (len == 0 || i + 1 == colon)) continue;
    prefix[len++] = ascii_lower(c == '_' ? ' ' : c);
  }
  while (len > 0 && prefix[len - 1] == ' ') --len;
  std::string_view p(prefix, len);
  if (contains(kHiddenNamespaces, p)) return true;
  if (contains(kInlineInterwiki, p)) return false;
  // Interlanguage links are written in lower case in articles: [[de:Anarchismus]].
  bool lower_letters = len >= 2;
  for (size_t i = 0; i < colon; ++i)
    if (!(target[i] >= 'a' && target[i] <= 'z')) lower_letters = false;
  return (lower_letters && colon <= 3) || contains(kLongLanguageCodes, p);
}

bool starts_url(std::string_view in, size_t pos) {
  static constexpr std::string_view schemes[] = {"http://", "https://", "ftp://", "ftps://", "//", "mailto:",
                                                 "news:", "irc://", "ircs://", "gopher://", "sftp://", "git://",
                                                 "ssh://", "svn://", "telnet://", "nntp://", "urn:", "tel:",
                                                 "geo:", "magnet:", "xmpp:", "sip:", "sips:", "worldwind://"};
  std::string_view rest = in.substr(pos, 12);
  for (auto s : schemes) {
    if (rest.size() < s.size()) continue;
    bool same = true;
    for (size_t i = 0; i < s.size() && same; ++i) same = ascii_lower(rest[i]) == s[i];
    if (same) return true;
  }
  return false;
}

// The text shown for [[target|]] (the "pipe trick"): no namespace, no trailing "(...)".
void append_pipe_trick(std::string_view target, std::string& out) {
  if (size_t colon = target.find(':'); colon != npos) target.remove_prefix(colon + 1);
  if (size_t paren = target.rfind(" ("); paren != npos && target.back() == ')') target = target.substr(0, paren);
  out.append(target);
}

constexpr ByteSet kStops("[]|");

}  // namespace

void unwrap_links(std::string_view in, std::string& out) {
  std::vector<OpenLink> stack;
  const size_t n = in.size();
  size_t pos = 0;
  while (pos < n) {
    size_t next = pos;
    while (next < n && !kStops.table[static_cast<unsigned char>(in[next])]) ++next;
    out.append(in.data() + pos, next - pos);
    if (next == n) break;
    pos = next;
    char c = in[pos];
    char c1 = pos + 1 < n ? in[pos + 1] : '\0';
    if (c == '[' && c1 == '[') {
      // Real links nest two or three deep (captions); far deeper is junk, dropped so erase() stays cheap.
      if (stack.size() < 64) stack.push_back({pos + 2, out.size()});
      pos += 2;
    } else if (c == ']' && c1 == ']') {
      pos += 2;
      if (stack.empty()) continue;  // a stray "]]" is dropped
      OpenLink link = stack.back();
      stack.pop_back();
      size_t target_end = link.pipe_in != npos ? link.pipe_in : pos - 2;
      std::string_view target = in.substr(link.in_start, target_end - link.in_start);
      if (hidden_target(target)) {
        out.resize(link.out_start);
      } else if (link.pipe_in != npos) {
        out.erase(link.out_start, link.pipe_out + 1 - link.out_start);
        bool empty_label = out.find_first_not_of(" \t", link.out_start) == npos;
        if (empty_label) {
          out.resize(link.out_start);
          append_pipe_trick(target, out);
        }
      } else if (out.size() > link.out_start && out[link.out_start] == ':') {
        out.erase(link.out_start, 1);
      }
    } else if (c == '|') {
      if (!stack.empty() && stack.back().pipe_in == npos) {
        stack.back().pipe_in = pos;
        stack.back().pipe_out = out.size();
      }
      out.push_back('|');
      ++pos;
    } else if (c == '[' && starts_url(in, pos + 1)) {
      // [url label]: the label, or nothing when there is none. No ']' on the line: plain text.
      size_t close = pos + 1;
      while (close < n && in[close] != ']' && in[close] != '\n' && in[close] != '[') ++close;
      if (close < n && in[close] == ']') {
        std::string_view inner = in.substr(pos + 1, close - pos - 1);
        size_t space = inner.find_first_of(" \t");
        if (space != npos) out.append(inner.substr(space + 1));
        pos = close + 1;
      } else {
        out.push_back('[');
        ++pos;
      }
    } else {
      out.push_back(c);
      ++pos;
    }
  }
}

}  // namespace bk::detail
