// The streaming dump reader: schema, entities, attributes, redirects, encodings, errors with offsets.
#include <doctest/doctest.h>

#include "../error_of.h"
#include "util/error.h"
#include "io/input.h"
#include "wiki/xml_stream.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <vector>

namespace fs = std::filesystem;

namespace {

fs::path write_temp(const std::string& name, const std::string& bytes) {
  auto dir = fs::temp_directory_path() / ("bertkit-wiki-unit-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto path = dir / name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

std::vector<bk::WikiPage> read_all(const std::string& bytes, std::string* base = nullptr) {
  auto path = write_temp("dump.xml", bytes);
  bk::Input input(path.string());
  bk::WikiDumpReader reader(input);
  std::vector<bk::WikiPage> pages;
  bk::WikiPage page;
  while (reader.next(page)) pages.push_back(page);
  if (base) *base = reader.base_url();
  return pages;
}

std::string error_of(const std::string& bytes) {
  const std::string message = bk_test::error_of([&] { read_all(bytes); });
  return message.empty() ? "no error" : message.substr(message.find(':') + 2);  // without the temporary file's name
}

const std::string kDump =
    "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
    "<mediawiki xmlns=\"http://www.mediawiki.org/xml/export-0.10/\" version=\"0.10\" xml:lang=\"en\">\n"
    "  <siteinfo><sitename>W</sitename><base>https://en.wikipedia.org/wiki/Main_Page</base></siteinfo>\n"
    "  <page>\n    <title>AT&amp;T &quot;x&quot;</title>\n    <ns>0</ns>\n    <id>42</id>\n"
    "    <revision>\n      <id>9001</id>\n      <contributor><username>U</username><id>7</id></contributor>\n"
    "      <text xml:space=\"preserve\" bytes=\"30\">a &amp;nbsp; &lt;ref&gt;r&lt;/ref&gt; &#233;</text>\n"
    "    </revision>\n  </page>\n"
    "  <!-- a comment -->\n"
    "  <page>\n    <title>Redirected</title>\n    <ns>0</ns>\n    <id>43</id>\n"
    "    <redirect title=\"AT&amp;T\" />\n    <revision><id>2</id><text xml:space=\"preserve\">#REDIRECT "
    "[[AT&amp;T]]</text></revision>\n  </page>\n"
    "  <page><title>Talk:X</title><ns>1</ns><id>44</id><revision><text/></revision></page>\n"
    "</mediawiki>\n";

std::string utf16(const std::string& ascii_and_e_acute, bool little_endian) {
  // Enough of a UTF-16 encoder for the test: ASCII, U+00E9 and one astral character (U+1F600) per "\x01".
  std::string out = little_endian ? "\xFF\xFE" : "\xFE\xFF";
  auto unit = [&](uint16_t u) {
    char hi = static_cast<char>(u >> 8), lo = static_cast<char>(u & 0xFF);
    out += little_endian ? std::string{lo, hi} : std::string{hi, lo};
  };
  for (size_t i = 0; i < ascii_and_e_acute.size(); ++i) {
    unsigned char c = ascii_and_e_acute[i];
    if (c == 0xC3) unit(0xC0 | (ascii_and_e_acute[++i] & 0x3F));
    else if (c == 0x01) unit(0xD83D), unit(0xDE00);
    else unit(c);
  }
  return out;
}

}  // namespace

TEST_CASE("wiki xml: pages, page ids, namespaces, redirects, entities") {
  std::string base;
  auto pages = read_all(kDump, &base);
  REQUIRE(pages.size() == 3);
  CHECK(base == "https://en.wikipedia.org/wiki/Main_Page");
  CHECK(pages[0].id == 42);  // not the revision's 9001 nor the contributor's 7
  CHECK(pages[0].title == "AT&T \"x\"");
  CHECK(pages[0].ns == 0);
  CHECK_FALSE(pages[0].redirect);
  CHECK(pages[0].text == "a &nbsp; <ref>r</ref> \xC3\xA9");
  CHECK(pages[1].redirect);
  CHECK(pages[1].text == "#REDIRECT [[AT&T]]");
  CHECK(pages[2].ns == 1);
  CHECK(pages[2].text.empty());
}

TEST_CASE("wiki xml: UTF-8 byte-order mark, UTF-16 LE and BE give the same pages") {
  std::string dump = "<mediawiki><page><title>Caf\xC3\xA9 \x01</title><ns>0</ns><id>5</id><revision><text>"
                     "Caf\xC3\xA9 &amp; \x01</text></revision></page></mediawiki>";
  std::string utf8 = dump;
  utf8.replace(utf8.find('\x01'), 1, "\xF0\x9F\x98\x80");
  utf8.replace(utf8.find('\x01'), 1, "\xF0\x9F\x98\x80");
  for (const std::string& bytes : {"\xEF\xBB\xBF" + utf8, utf16(dump, true), utf16(dump, false)}) {
    auto pages = read_all(bytes);
    REQUIRE(pages.size() == 1);
    CHECK(pages[0].title == "Caf\xC3\xA9 \xF0\x9F\x98\x80");
    CHECK(pages[0].text == "Caf\xC3\xA9 & \xF0\x9F\x98\x80");
  }
}

TEST_CASE("wiki xml: errors name the byte offset") {
  CHECK(error_of("") == "empty input");
  CHECK(error_of("  \n") == "empty input");
  CHECK(error_of("hello") == "not XML: byte 0 is 'h' where markup ('<') was expected");
  CHECK(error_of("<html><body/></html>") ==
        "not a MediaWiki XML export: the root element at byte 0 is <html>, not <mediawiki>");
  CHECK(error_of("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><mediawiki/>") ==
        "unsupported encoding \"ISO-8859-1\" declared at byte 0 (wiki-clean reads UTF-8 and UTF-16)");
  CHECK(error_of(std::string("\xFF\xFE\x00\x00<\x00\x00\x00", 8)) ==
        "unsupported encoding: UTF-32 byte-order mark at byte 0 (use UTF-8 or UTF-16)");
  CHECK(error_of("<mediawiki><page><title>a\xC3(</title>") == "invalid UTF-8 at byte 25");
  std::string cut = kDump.substr(0, kDump.find("<page><title>Talk") + 20);
  CHECK(error_of(cut) == "truncated dump: unexpected end of input inside <page> at byte " +
                             std::to_string(cut.size()));
  std::string between = kDump.substr(0, kDump.find("</mediawiki>"));
  CHECK(error_of(between) == "truncated dump: unexpected end of input before </mediawiki> at byte " +
                                 std::to_string(between.size()));
  CHECK(error_of(std::string("\xFF\xFE<\x00m\x00", 6) + std::string("\x00\xDC", 2)) ==
        "invalid UTF-16 at byte 6: unpaired surrogate");
}

TEST_CASE("wiki xml: a page split across read buffers") {
  std::string big(3 << 20, 'x');
  std::string dump = "<mediawiki><page><title>Big</title><ns>0</ns><id>1</id><revision><text>" + big +
                     "&amp;</text></revision></page></mediawiki>";
  auto pages = read_all(dump);
  REQUIRE(pages.size() == 1);
  CHECK(pages[0].text.size() == big.size() + 1);
  CHECK(pages[0].text.back() == '&');
}
