// A small streaming reader for MediaWiki XML exports (pages-articles and friends).
//
// It understands just the export schema: <mediawiki> <siteinfo><base/></siteinfo> <page> <title> <ns> <id>
// <redirect/> <revision> ... <text>WIKITEXT</text> </revision> </page> ... </mediawiki>, and yields one WikiPage
// at a time. Memory is one page plus one read buffer, whatever the size of the dump. It is not a validating
// XML parser: unknown elements are skipped, and only what a dump needs is checked (well-formed tags, the root
// element, the encoding, truncation, characters XML forbids), each error naming the file and the byte offset.
//
// A node (a tag, a comment, a CDATA section) is held whole while it is read, and an element's text goes into the
// page as it is read; both are bounded by max_node_bytes (an element's text in all, comments between its runs
// included): hostile input (a run of NUL bytes, /dev/zero, one 10 GB
// text node) fails with an error naming the limit instead of taking all memory. Bytes that cannot appear in XML 1.0 at all (U+0000 to
// U+001F except tab, newline and carriage return) fail at once, naming their byte offset.
#pragma once

#include "io/input.h"
#include "wiki/dump_source.h"

#include <cstdint>
#include <string>
#include <vector>

namespace bk {

struct WikiPage {
  uint64_t id = 0;        // the page id (<page><id>), not a revision's
  std::string title;      // XML references decoded
  int ns = 0;             // namespace number; 0 = articles
  bool redirect = false;  // <redirect title="..."/> present
  std::string text;       // wikitext of the (last) revision, XML references decoded
};

class WikiDumpReader {
 public:
  static constexpr size_t kDefaultMaxNodeBytes = size_t{256} << 20;
  explicit WikiDumpReader(Input& input, size_t max_node_bytes = kDefaultMaxNodeBytes);

  // Reads the next page; false at the end of input after </mediawiki>. Concatenated dumps are read one after the
  // other; anything else after a </mediawiki> (text, another element) is an error. Throws bk::Error on a
  // malformed or truncated dump.
  bool next(WikiPage& page);

  uint64_t input_offset() const { return source_.input_offset(); }  // decompressed bytes read so far
  const std::string& base_url() const { return base_url_; }         // <siteinfo><base>, "" if absent
  WikiDumpEncoding encoding() const { return source_.encoding(); }

 private:
  enum class Kind : unsigned char { root, siteinfo, base, page, title, ns, id, revision, text, other };

  size_t find_char(char c, size_t from);            // index in buf_ or npos at the end of input
  // The next '<' from pos_, or npos at the end of input; the character data before it is taken (take_text) as
  // it is read, so that a long text run is never held whole in buf_.
  size_t find_markup();
  // The character data buf_[pos_, end): decoded into the element being captured (within max_node_bytes), or
  // checked to be whitespace outside the root element; pos_ moves to end.
  void take_text(size_t end);
  size_t find_string(std::string_view s, size_t from);
  bool read_more();
  void compact();
  uint64_t offset_of(size_t index) const { return source_.skipped() + buf_start_ + index; }
  [[noreturn]] void fail_at_end();
  [[noreturn]] void fail_node_too_long(uint64_t at) const;
  void check_declaration(std::string_view declaration, size_t at);
  void start_element(std::string_view name, bool self_closing, size_t at);
  bool end_element(std::string_view name, size_t at, WikiPage& page);  // true when a page is complete
  void end_document();                                                 // after </mediawiki> (or <mediawiki/>)

  WikiDumpSource source_;
  std::string buf_;
  size_t pos_ = 0;
  uint64_t buf_start_ = 0;  // offset of buf_[0] in the UTF-8 stream
  bool eof_ = false, root_seen_ = false, content_seen_ = false;
  size_t max_node_bytes_;
  uint64_t documents_ = 0;  // <mediawiki> documents completed; root_seen_ is false again between documents
  std::vector<Kind> stack_;
  std::string* capture_ = nullptr;  // where the character data of the current element goes, if anywhere
  uint64_t capture_at_ = 0;         // the offset its content starts at, for messages
  std::string scalar_;              // <ns> and <id> text
  bool have_page_id_ = false;
  WikiPage* page_ = nullptr;
  std::string base_url_;
};

}  // namespace bk
