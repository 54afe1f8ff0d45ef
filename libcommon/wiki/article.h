// What wiki-clean makes of a page: whether it is an article to write, and a cleaned article in each of the
// output formats (the text format itself is written by text/documents.h).
#pragma once

#include "wiki/xml_stream.h"

#include <string>
#include <string_view>
#include <vector>

namespace bk {

enum class WikiOutputFormat { text, jsonl, wikiextractor };

// The format a --format name gives; false (format untouched) when the name is none of text, jsonl, wikiextractor.
bool parse_wiki_format(std::string_view name, WikiOutputFormat& format);

// Why a page is not written ("namespace", "redirect" or "disambiguation"), or nullptr when it is an article to
// clean.
const char* article_skip_reason(const WikiPage& page, bool keep_disambiguation);

// Whether the paragraphs make a non-empty article of at least min_chars bytes (joined by "\n").
bool article_long_enough(const std::vector<std::string>& paragraphs, size_t min_chars);

// Appends one cleaned article in a jsonl or wikiextractor record (or the text format's lines) to out; false
// (nothing appended) when it is dropped because its text is empty or shorter than min_chars.
bool format_article(const WikiPage& page, const std::vector<std::string>& paragraphs, WikiOutputFormat format,
                    size_t min_chars, const std::string& url_base, std::string& out);

// WikiExtractor's url base: the dump's <siteinfo><base> address up to its last '/', else
// https://en.wikipedia.org/wiki.
std::string wiki_url_base(const std::string& base);

}  // namespace bk
