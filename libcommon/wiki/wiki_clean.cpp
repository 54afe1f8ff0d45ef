#include "wiki/wiki_clean.h"

#include "wiki/article.h"
#include "wiki/xml_stream.h"
#include "io/output_over_input.h"
#include "util/error.h"
#include "io/progress.h"
#include "io/input.h"
#include "io/output.h"
#include "text/documents.h"
#include "util/ordered_parallel.h"

#include <fmt/format.h>

#include <exception>
#include <unistd.h>

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

}  // namespace

void WikiCleanConfig::validate() const {
  WikiOutputFormat parsed;
  if (!parse_wiki_format(format, parsed))
    usage_fail("--format must be text, jsonl or wikiextractor, got '{}'", format);
  if (threads < 0) usage_fail("--threads must be 0 (all cores) or positive, got {}", threads);
  if (max_node_bytes < 1) usage_fail("--max-node-bytes must be positive, got {}", max_node_bytes);
  input_or_stdin(input, "a dump file");
  refuse_output_over_inputs("-o", output, OutputKind::file, {input});
}

WikiCleanStats run_wiki_clean(const WikiCleanConfig& config) {
  config.validate();
  WikiOutputFormat format = WikiOutputFormat::text;
  parse_wiki_format(config.format, format);
  const int threads = worker_threads(config.threads);
  Input input(input_or_stdin(config.input, "a dump file"), threads);  // a .bz2 dump decodes on `threads` workers too (io/bzip2_parallel.h)
  Output output(config.output, config.force);
  WikiDumpReader reader(input, config.max_node_bytes);
  Progress progress(config.quiet);
  // The share of the dump's file (compressed, as it is on disk) consumed so far; none for a pipe.
  progress.set_total(input.raw_size());

  WikiCleanStats total;
  std::exception_ptr reader_error;  // raised after the pages before it are written
  bool reader_done = false;
  std::string url_base = config.url_base;

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
    if (url_base.empty()) url_base = wiki_url_base(reader.base_url());
    return !batch.pages.empty();
  };
  auto work = [&](Batch& batch) {
    BatchResult result;
    for (const WikiPage& page : batch.pages) {
      ++result.stats.pages;
      const char* reason = article_skip_reason(page, config.keep_disambiguation);
      if (reason) {
        std::string_view r = reason;
        if (r == "namespace") ++result.stats.other_namespaces;
        else if (r == "redirect") ++result.stats.redirects;
        else ++result.stats.disambiguations;
        continue;
      }
      auto paragraphs = clean_wikitext(page.text, config.markup);
      bool kept;
      if (format == WikiOutputFormat::text) {
        kept = article_long_enough(paragraphs, config.min_chars);
        if (kept) result.documents.push_back(std::move(paragraphs));
      } else {
        kept = format_article(page, paragraphs, format, config.min_chars, url_base, result.bytes);
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
      progress.update(input.raw_offset(), fmt::format("{} pages, {} articles", total.pages, total.articles));
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
