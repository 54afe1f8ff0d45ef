#include "wiki/wiki_clean.h"

#include "util/error.h"
#include "cli/progress.h"
#include "io/input.h"
#include "io/output.h"
#include "text/documents.h"
#include "util/ordered_parallel.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <exception>

namespace bk {
namespace {

constexpr size_t kBatchBytes = 4 << 20;  // wikitext per parallel batch; bounds memory at ~threads * 4 * this
constexpr size_t kBatchPages = 1024;

struct Batch {
  std::vector<WikiPage> pages;
};

struct BatchResult {
  std::string bytes;                                // jsonl and wikiextractor records
  std::vector<std::vector<std::string>> documents;  // text format: written with write_document
  WikiCleanStats stats;
};

void append_attribute_escaped(std::string_view s, std::string& out) {
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out.push_back(c);
    }
  }
}

// WikiExtractor's url base: the <siteinfo><base> address up to its last '/'.
std::string derive_url_base(const std::string& base) {
  size_t slash = base.rfind('/');
  if (base.empty() || slash == std::string::npos || slash < 8) return "https://en.wikipedia.org/wiki";
  return base.substr(0, slash);
}

}  // namespace

WikiOutputFormat parse_wiki_format(const std::string& name) {
  if (name == "text") return WikiOutputFormat::text;
  if (name == "jsonl") return WikiOutputFormat::jsonl;
  if (name == "wikiextractor") return WikiOutputFormat::wikiextractor;
  usage_fail("--format must be text, jsonl or wikiextractor, got '{}'", name);
}

const char* skip_reason(const WikiPage& page, const WikiCleanConfig& options) {
  if (page.ns != 0) return "namespace";
  if (page.redirect) return "redirect";
  if (!options.keep_disambiguation && is_disambiguation(page.title, page.text)) return "disambiguation";
  return nullptr;
}

bool long_enough(const std::vector<std::string>& paragraphs, size_t min_chars) {
  size_t chars = 0;
  for (const auto& p : paragraphs) chars += p.size() + 1;
  return !paragraphs.empty() && chars - 1 >= min_chars;
}

bool format_article(const WikiPage& page, const std::vector<std::string>& paragraphs, const WikiCleanConfig& options,
                    const std::string& url_base, std::string& out) {
  if (!long_enough(paragraphs, options.min_chars)) return false;
  size_t chars = 0;
  for (const auto& p : paragraphs) chars += p.size() + 1;
  switch (options.format) {
    case WikiOutputFormat::text:
      // The document format of text/documents.h: one paragraph per line, a blank line after the article.
      for (const auto& p : paragraphs) out.append(p).push_back('\n');
      out.push_back('\n');
      break;
    case WikiOutputFormat::jsonl: {
      nlohmann::ordered_json record;
      record["id"] = std::to_string(page.id);
      record["title"] = page.title;
      std::string text;
      text.reserve(chars);
      for (size_t i = 0; i < paragraphs.size(); ++i) {
        if (i) text.push_back('\n');
        text += paragraphs[i];
      }
      record["text"] = std::move(text);
      out += record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      out.push_back('\n');
      break;
    }
    case WikiOutputFormat::wikiextractor:
      // WikiExtractor 3's layout: header, title, blank line, paragraphs, blank line, footer.
      out += "<doc id=\"";
      out += std::to_string(page.id);
      out += "\" url=\"";
      append_attribute_escaped(url_base, out);
      out += "?curid=";
      out += std::to_string(page.id);
      out += "\" title=\"";
      append_attribute_escaped(page.title, out);
      out += "\">\n";
      out += page.title;
      out += "\n\n";
      for (const auto& p : paragraphs) out.append(p).push_back('\n');
      out += "\n</doc>\n";
      break;
  }
  return true;
}

WikiCleanStats run_wiki_clean(const WikiCleanConfig& options) {
  Input input(options.input);
  Output output(options.output, options.force);
  WikiDumpReader reader(input);
  Progress progress(options.quiet);
  const int threads = options.threads == 0 ? hardware_threads() : options.threads;

  WikiCleanStats total;
  std::exception_ptr reader_error;  // raised after the pages before it are written
  bool reader_done = false;
  std::string url_base = options.url_base;

  auto produce = [&](Batch& batch) {
    if (reader_done) return false;
    size_t bytes = 0;
    try {
      while (batch.pages.size() < kBatchPages && bytes < kBatchBytes) {
        WikiPage page;
        if (!reader.next(page)) {
          reader_done = true;
          break;
        }
        bytes += page.text.size();
        batch.pages.push_back(std::move(page));
      }
    } catch (const Error&) {
      reader_error = std::current_exception();
      reader_done = true;
    }
    if (url_base.empty()) url_base = derive_url_base(reader.base_url());
    return !batch.pages.empty();
  };
  auto work = [&](Batch& batch) {
    BatchResult result;
    for (const WikiPage& page : batch.pages) {
      ++result.stats.pages;
      const char* reason = skip_reason(page, options);
      if (reason) {
        std::string_view r = reason;
        if (r == "namespace") ++result.stats.other_namespaces;
        else if (r == "redirect") ++result.stats.redirects;
        else ++result.stats.disambiguations;
        continue;
      }
      auto paragraphs = clean_wikitext(page.text, options.markup);
      bool kept;
      if (options.format == WikiOutputFormat::text) {
        kept = long_enough(paragraphs, options.min_chars);
        if (kept) result.documents.push_back(std::move(paragraphs));
      } else {
        kept = format_article(page, paragraphs, options, url_base, result.bytes);
      }
      ++(kept ? result.stats.articles : result.stats.too_short);
    }
    return result;
  };
  auto consume = [&](BatchResult& result) {
    output.write(result.bytes);
    for (const auto& doc : result.documents) write_document(output, doc);
    total.pages += result.stats.pages;
    total.articles += result.stats.articles;
    total.redirects += result.stats.redirects;
    total.other_namespaces += result.stats.other_namespaces;
    total.disambiguations += result.stats.disambiguations;
    total.too_short += result.stats.too_short;
    if (progress.wants_update())
      progress.update(input.offset(), fmt::format("{} pages, {} articles", total.pages, total.articles));
  };
  ordered_parallel<Batch, BatchResult>(threads, produce, work, consume);
  if (reader_error) {
    if (output.is_stdout()) output.commit();  // the complete pages reach stdout before the error
    std::rethrow_exception(reader_error);
  }
  output.commit();
  progress.finish(input.offset(), fmt::format("{} pages, {} articles ({} redirects, {} disambiguations, {} other "
                                              "namespaces, {} empty or short)",
                                              total.pages, total.articles, total.redirects, total.disambiguations,
                                              total.other_namespaces, total.too_short));
  return total;
}

}  // namespace bk
