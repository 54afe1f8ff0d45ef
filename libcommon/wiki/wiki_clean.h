// wiki-clean as a library call: options in, a MediaWiki dump read, articles cleaned in parallel and written
// in input order in one of three formats.
#pragma once

#include "wiki/markup.h"
#include "wiki/xml_stream.h"

#include <cstdint>
#include <string>
#include <vector>

namespace bk {

enum class WikiOutputFormat { text, jsonl, wikiextractor };

struct WikiCleanConfig {
  std::string input = "-";
  std::string output = "-";
  bool force = false;
  WikiOutputFormat format = WikiOutputFormat::text;
  int threads = 1;  // 0 = all hardware threads
  size_t min_chars = 0;  // articles whose cleaned text (paragraphs joined by "\n") is shorter are dropped
  bool keep_disambiguation = false;
  WikiMarkupOptions markup;
  std::string url_base;  // "" = from the dump's <siteinfo><base>, else https://en.wikipedia.org/wiki
  bool quiet = false;
};

WikiOutputFormat parse_wiki_format(const std::string& name);  // throws UsageError

struct WikiCleanStats {
  uint64_t pages = 0, articles = 0, redirects = 0, other_namespaces = 0, disambiguations = 0, too_short = 0;
};

// Why a page is not written, or nullptr when it is an article to clean.
const char* skip_reason(const WikiPage& page, const WikiCleanConfig& options);

// Whether the paragraphs make a non-empty article of at least min_chars bytes (joined by "\n").
bool long_enough(const std::vector<std::string>& paragraphs, size_t min_chars);

// Appends one cleaned article in the chosen format to out; false (nothing appended) when it is dropped
// because its text is empty or shorter than min_chars.
bool format_article(const WikiPage& page, const std::vector<std::string>& paragraphs, const WikiCleanConfig& options,
                    const std::string& url_base, std::string& out);

// The whole tool. Throws bk::Error (after writing every complete page to stdout, or leaving no file with -o).
WikiCleanStats run_wiki_clean(const WikiCleanConfig& options);

}  // namespace bk
