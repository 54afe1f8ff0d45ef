// wiki-clean: a MediaWiki XML dump (plain, .bz2, .gz, .xz, .zst; UTF-8 or UTF-16) -> plain article text.
#include "cli/run_tool.h"
#include "cli/options.h"
#include "wiki/wiki_clean.h"

int main(int argc, char** argv) {
  return bk::run_tool("wiki-clean", argc, argv, [](int argc, char** argv) {
    namespace po = bk::po;
    bk::WikiCleanConfig cfg;
    const bk::WikiCleanConfig defaults;
    bk::Options opts("wiki-clean", "[options] [INPUT|-]",
                     "Turn a MediaWiki XML export (pages-articles; plain, .bz2, .gz, .xz or .zst) into plain article text:\n"
                     "main-namespace articles only, no redirects or disambiguation pages, markup removed.");
    opts.add()
      ("output,o", po::value(&cfg.output)->default_value(defaults.output), "output file ('-' = stdout)")
      ("force,f", po::bool_switch(&cfg.force), "overwrite an existing output file")
      ("format", po::value(&cfg.format)->default_value(defaults.format),
       "text (a paragraph per line, blank line after each article), jsonl ({\"id\",\"title\",\"text\"}) "
       "or wikiextractor (<doc> blocks)")
      ("threads,t", po::value(&cfg.threads)->default_value(defaults.threads), "worker threads (0 = all cores), "
       "for cleaning and for decoding a .bz2 dump; output is identical for any value")
      ("min-chars", po::value(&cfg.min_chars)->default_value(defaults.min_chars),
       "drop articles whose cleaned text is shorter")
      ("max-node-bytes", po::value(&cfg.max_node_bytes)->default_value(defaults.max_node_bytes),
       "fail on a text run, tag or comment longer than this (bytes); bounds memory on hostile input")
      ("keep-headings", po::bool_switch(&cfg.markup.keep_headings), "keep section headings as their own lines")
      ("keep-lists", po::bool_switch(&cfg.markup.keep_lists), "keep list items (*, #, :, ;) as lines")
      ("keep-disambiguation", po::bool_switch(&cfg.keep_disambiguation), "keep disambiguation pages")
      ("url-base", po::value(&cfg.url_base), "URL prefix for --format wikiextractor (default: from the "
       "dump's <base>, e.g. https://en.wikipedia.org/wiki)");
    opts.positional("input", 1);
    opts.epilog(
        "Exit status: 0 success, 1 bad or truncated input or I/O error, 2 usage error.\n"
        "Example: wiki-clean -t 0 enwiki-latest-pages-articles.xml.bz2 | sent-seg > sentences.txt");
    if (!opts.parse(argc, argv)) return 0;
    auto inputs = opts.positionals();
    if (!inputs.empty()) cfg.input = inputs[0];
    cfg.quiet = opts.quiet();
    bk::run_wiki_clean(cfg);
    return 0;
  });
}
