#include "wiki/xml_stream.h"

#include "util/error.h"
#include "util/printable.h"
#include "wiki/entities.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include <fmt/format.h>

namespace bk {
namespace {

constexpr size_t kReadSize = 1 << 20;
constexpr size_t npos = std::string::npos;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

// Value of attribute `name` in the inside of a tag or declaration, "" when absent.
std::string_view attribute(std::string_view tag, std::string_view name) {
  for (size_t at = tag.find(name); at != npos; at = tag.find(name, at + 1)) {
    if (at > 0 && !is_space(tag[at - 1])) continue;
    size_t i = at + name.size();
    while (i < tag.size() && is_space(tag[i])) ++i;
    if (i >= tag.size() || tag[i] != '=') continue;
    ++i;
    while (i < tag.size() && is_space(tag[i])) ++i;
    if (i >= tag.size() || (tag[i] != '"' && tag[i] != '\'')) continue;
    size_t close = tag.find(tag[i], i + 1);
    if (close == npos) return {};
    return tag.substr(i + 1, close - i - 1);
  }
  return {};
}

template <typename T>
bool parse_integer(std::string_view s, T& value) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  bool negative = !s.empty() && s.front() == '-';
  if (negative) s.remove_prefix(1);
  if (s.empty() || s.size() > 18) return false;
  T v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = static_cast<T>(v * 10 + (c - '0'));
  }
  value = negative ? static_cast<T>(0 - v) : v;
  return true;
}

}  // namespace

WikiDumpReader::WikiDumpReader(Input& input, size_t max_node_bytes)
    : source_(input), max_node_bytes_(max_node_bytes) {
  buf_.reserve(2 * kReadSize);
}

void WikiDumpReader::fail_node_too_long(uint64_t at) const {
  fail("{}: a node at byte {} is longer than --max-node-bytes {} (not a real dump, or raise the limit)",
       source_.name(), at, max_node_bytes_);
}

bool WikiDumpReader::read_more() {
  if (eof_) return false;
  // Everything from pos_ on is the node being read; the buffer only grows past a read while a node is open.
  if (buf_.size() - pos_ > max_node_bytes_) fail_node_too_long(offset_of(pos_));
  size_t from = buf_.size();
  if (source_.read(buf_, kReadSize) == 0) eof_ = true;
  for (size_t i = from; i < buf_.size(); ++i) {
    auto c = static_cast<unsigned char>(buf_[i]);
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r')
      fail("{}: byte {} is {}, a control character XML does not allow (not a text dump?)", source_.name(),
           offset_of(i), c == 0 ? "NUL" : fmt::format("0x{:02x}", c));
  }
  return !eof_;
}

void WikiDumpReader::compact() {
  // Only called between tokens, when nothing holds an index into buf_.
  if (pos_ >= kReadSize || pos_ == buf_.size()) {
    buf_.erase(0, pos_);
    buf_start_ += pos_;
    pos_ = 0;
  }
}

size_t WikiDumpReader::find_char(char c, size_t from) {
  for (;;) {
    if (from < buf_.size()) {
      const void* hit = std::memchr(buf_.data() + from, c, buf_.size() - from);
      if (hit) return static_cast<const char*>(hit) - buf_.data();
      from = buf_.size();
    }
    if (!read_more()) return npos;
  }
}

size_t WikiDumpReader::find_string(std::string_view s, size_t from) {
  for (;;) {
    size_t hit = buf_.find(s, from);
    if (hit != npos) return hit;
    from = buf_.size() >= s.size() ? std::max(from, buf_.size() - s.size() + 1) : from;
    if (!read_more()) return npos;
  }
}

void WikiDumpReader::fail_at_end() {
  const std::string& name = source_.name();
  uint64_t at = source_.input_offset();
  if (!content_seen_) fail("{}: empty input", name);
  if (!root_seen_) fail("{}: not a MediaWiki XML export: no <mediawiki> element before the end at byte {}", name, at);
  if (std::find(stack_.begin(), stack_.end(), Kind::page) != stack_.end())
    fail("{}: truncated dump: unexpected end of input inside <page> at byte {}", name, at);
  fail("{}: truncated dump: unexpected end of input before </mediawiki> at byte {}", name, at);
}

void WikiDumpReader::check_declaration(std::string_view declaration, size_t at) {
  if (declaration.substr(0, 5) != "<?xml") return;
  std::string encoding = lower(attribute(declaration, "encoding"));
  bool utf16 = source_.encoding() != WikiDumpEncoding::utf8;
  bool ok = encoding.empty() || encoding == "utf-8" || encoding == "utf8" ||
            (utf16 && (encoding == "utf-16" || encoding == "utf-16le" || encoding == "utf-16be"));
  if (!ok)
    fail("{}: unsupported encoding \"{}\" declared at byte {} (wiki-clean reads UTF-8 and UTF-16)", source_.name(),
         printable_excerpt(attribute(declaration, "encoding")), offset_of(at));
}

void WikiDumpReader::start_element(std::string_view name, bool self_closing, size_t at) {
  if (!root_seen_) {
    if (name != "mediawiki" && documents_ > 0)
      fail("{}: unexpected <{}> at byte {} after </mediawiki> (only another <mediawiki> document may follow)",
           source_.name(), printable_excerpt(name), offset_of(at));
    if (name != "mediawiki")
      fail("{}: not a MediaWiki XML export: the root element at byte {} is <{}>, not <mediawiki>", source_.name(),
           offset_of(at), printable_excerpt(name));
    root_seen_ = true;
    if (!self_closing) stack_.push_back(Kind::root);
    else end_document();
    return;
  }
  Kind parent = stack_.empty() ? Kind::other : stack_.back();
  Kind kind = Kind::other;
  switch (parent) {
    case Kind::root:
      if (name == "page") kind = Kind::page;
      else if (name == "siteinfo") kind = Kind::siteinfo;
      break;
    case Kind::siteinfo:
      if (name == "base") kind = Kind::base;
      break;
    case Kind::page:
      if (name == "title") kind = Kind::title;
      else if (name == "ns") kind = Kind::ns;
      else if (name == "id") kind = Kind::id;
      else if (name == "revision") kind = Kind::revision;
      else if (name == "redirect") page_->redirect = true;
      break;
    case Kind::revision:
      if (name == "text") kind = Kind::text;
      break;
    default:
      break;
  }
  if (kind == Kind::page) {
    *page_ = WikiPage{};
    have_page_id_ = false;
  }
  if (self_closing) {
    if (kind == Kind::text) page_->text.clear();
    return;
  }
  stack_.push_back(kind);
  switch (kind) {
    case Kind::base: base_url_.clear(), capture_ = &base_url_; break;
    case Kind::title: page_->title.clear(), capture_ = &page_->title; break;
    case Kind::ns:
    case Kind::id: scalar_.clear(), capture_ = &scalar_; break;
    case Kind::text: page_->text.clear(), capture_ = &page_->text; break;
    default: break;
  }
  capture_at_ = offset_of(pos_);  // the element's content starts after its tag
}

bool WikiDumpReader::end_element(std::string_view name, size_t at, WikiPage& page) {
  if (stack_.empty())
    fail("{}: malformed XML: unexpected </{}> at byte {}", source_.name(), printable_excerpt(name), offset_of(at));
  Kind kind = stack_.back();
  stack_.pop_back();
  capture_ = nullptr;
  switch (kind) {
    case Kind::ns:
      if (!parse_integer(scalar_, page.ns))
        fail("{}: malformed <ns> \"{}\" at byte {}", source_.name(), printable_excerpt(scalar_), offset_of(at));
      break;
    case Kind::id:
      if (!have_page_id_ && !parse_integer(scalar_, page.id))
        fail("{}: malformed page <id> \"{}\" at byte {}", source_.name(), printable_excerpt(scalar_), offset_of(at));
      have_page_id_ = true;
      break;
    case Kind::page: return true;
    case Kind::root: end_document(); break;
    default: break;
  }
  return false;
}

void WikiDumpReader::end_document() {
  // Concatenated dumps (cat a.xml b.xml) are read as one: after </mediawiki> only whitespace, comments, XML
  // declarations and another <mediawiki> document may follow, and the end of input there is a clean end.
  root_seen_ = false;
  ++documents_;
}

void WikiDumpReader::take_text(size_t end) {
  if (!root_seen_) {
    for (size_t i = pos_; i < end; ++i) {
      if (is_space(buf_[i])) continue;
      if (documents_ > 0)
        fail("{}: unexpected text after </mediawiki> at byte {} (only another <mediawiki> document may follow)",
             source_.name(), offset_of(i));
      fail("{}: not XML: byte {} is '{}' where markup ('<') was expected", source_.name(), offset_of(i),
           printable_excerpt(std::string_view(buf_).substr(i, 1)));
    }
  } else if (capture_ && end > pos_) {
    // Checked before it grows (decoding never lengthens text), and grown by doubling up to the limit, never past it.
    const size_t need = capture_->size() + (end - pos_);
    if (need > max_node_bytes_) fail_node_too_long(capture_at_);
    if (need > capture_->capacity())
      capture_->reserve(std::min(max_node_bytes_, std::max(need, 2 * capture_->capacity())));
    append_xml_decoded(std::string_view(buf_).substr(pos_, end - pos_), *capture_);
  }
  pos_ = end;
}

size_t WikiDumpReader::find_markup() {
  for (;;) {
    const void* hit = std::memchr(buf_.data() + pos_, '<', buf_.size() - pos_);
    if (hit) return static_cast<size_t>(static_cast<const char*>(hit) - buf_.data());
    // Character data so far: taken now, but for a reference ("&#x20AC", "&am") that the next read may complete.
    // XML's references are &#xHHHHHHHH; at the longest (entities.cpp reads at most 8 digits), so only the last
    // kLongestReferencePrefix bytes can hold the start of one.
    constexpr size_t kLongestReferencePrefix = 11;  // "&#x" and 8 hex digits, without the ';'
    size_t end = buf_.size();
    const size_t tail = std::max(pos_, buf_.size() - std::min(buf_.size(), kLongestReferencePrefix));
    size_t amp = npos;
    for (size_t k = buf_.size(); k-- > tail;)
      if (buf_[k] == '&') {
        amp = k;
        break;
      }
    if (amp != npos &&
        std::all_of(buf_.begin() + static_cast<std::ptrdiff_t>(amp) + 1, buf_.end(),
                    [](char c) { return c == '#' || std::isalnum(static_cast<unsigned char>(c)); }))
      end = amp;
    take_text(end);
    compact();
    if (!read_more()) return npos;
  }
}

bool WikiDumpReader::next(WikiPage& page) {
  page_ = &page;
  for (;;) {
    compact();
    const size_t lt = find_markup();
    take_text(lt == npos ? buf_.size() : lt);
    if (lt == npos) {
      pos_ = buf_.size();
      if (!root_seen_ && documents_ > 0) return false;  // the end, after a complete document
      fail_at_end();
    }
    content_seen_ = true;
    pos_ = lt;
    while (buf_.size() < lt + 9 && read_more()) {
    }
    std::string_view head = std::string_view(buf_).substr(lt);
    if (head.substr(0, 4) == "<!--") {
      size_t end = find_string("-->", lt + 4);
      if (end == npos) fail_at_end();
      pos_ = end + 3;
      continue;
    }
    if (head.substr(0, 9) == "<![CDATA[") {
      size_t end = find_string("]]>", lt + 9);
      if (end == npos) fail_at_end();
      if (capture_) capture_->append(buf_, lt + 9, end - lt - 9);
      pos_ = end + 3;
      continue;
    }
    if (head.substr(0, 2) == "<?") {
      size_t end = find_string("?>", lt + 2);
      if (end == npos) fail_at_end();
      if (!root_seen_) check_declaration(std::string_view(buf_).substr(lt, end - lt), lt);
      pos_ = end + 2;
      continue;
    }
    bool declaration = head.substr(0, 2) == "<!";  // <!DOCTYPE ...>; head dies when buf_ grows below
    size_t gt = find_char('>', lt + 1);
    if (gt == npos) fail_at_end();
    pos_ = gt + 1;
    if (declaration) continue;
    std::string_view tag = std::string_view(buf_).substr(lt + 1, gt - lt - 1);
    bool closing = !tag.empty() && tag.front() == '/';
    if (closing) tag.remove_prefix(1);
    bool self_closing = !tag.empty() && tag.back() == '/';
    if (self_closing) tag.remove_suffix(1);
    size_t name_end = 0;
    while (name_end < tag.size() && !is_space(tag[name_end]) && tag[name_end] != '/') ++name_end;
    std::string_view name = tag.substr(0, name_end);
    if (name.empty())
      fail("{}: malformed XML: bad tag at byte {}", source_.name(), offset_of(lt));
    if (closing) {
      if (!root_seen_ && documents_ > 0)
        fail("{}: unexpected </{}> at byte {} after </mediawiki>", source_.name(), printable_excerpt(name), offset_of(lt));
      if (!root_seen_)
        fail("{}: not a MediaWiki XML export: </{}> at byte {} before any element", source_.name(), printable_excerpt(name),
             offset_of(lt));
      if (end_element(name, lt, page)) return true;
    } else {
      start_element(name, self_closing, lt);
    }
  }
}

}  // namespace bk
