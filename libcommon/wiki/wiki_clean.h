// wiki-clean as a library call: a MediaWiki dump read, articles cleaned in parallel (wiki/markup.h) and written
// in input order in one of three formats (wiki/article.h).
#pragma once

#include "wiki/markup.h"
#include "wiki/xml_stream.h"

#include <cstdint>
#include <string>

namespace bk {

struct WikiCleanConfig {
  std::string input;  // "-" = stdin; "" = stdin as well, but refused when stdin is a terminal (no input named)
  std::string output = "-";
  bool force = false;
  std::string format = "text";  // text, jsonl or wikiextractor (wiki/article.h)
  int threads = 1;  // 0 = all hardware threads
  size_t min_chars = 0;  // articles whose cleaned text (paragraphs joined by "\n") is shorter are dropped
  size_t max_node_bytes = WikiDumpReader::kDefaultMaxNodeBytes;  // the longest node (text run, tag, comment) read whole; more fails
  bool keep_disambiguation = false;
  WikiMarkupOptions markup;
  std::string url_base;  // "" = from the dump's <siteinfo><base>, else https://en.wikipedia.org/wiki
  bool quiet = false;

  // bk::UsageError naming the flag for a value no run can use.
  void validate() const;
};

struct WikiCleanStats {
  uint64_t pages = 0, articles = 0, redirects = 0, other_namespaces = 0, disambiguations = 0, too_short = 0;
};

// The whole tool: validates the config, then runs. Throws bk::Error (after writing every complete page to
// stdout, or leaving no file with -o).
WikiCleanStats run_wiki_clean(const WikiCleanConfig& config);

}  // namespace bk
