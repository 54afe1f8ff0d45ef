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
      ("output,o", po::value(&cfg.output)->default_value(defaults.output)->value_name("FILE"),
       "output file ('-' = stdout); missing directories are created")
      ("force,f", po::bool_switch(&cfg.force), "overwrite an existing output file")
      ("format", po::value(&cfg.format)->default_value(defaults.format)->value_name("FORMAT"),
       "text (a paragraph per line, blank line after each article), jsonl ({\"id\",\"title\",\"text\"}) "
       "or wikiextractor (<doc> blocks)")
      ("threads,t", po::value(&cfg.threads)->default_value(defaults.threads)->value_name("N"), "worker threads (0 = all cores), "
       "for cleaning and for decoding a .bz2 dump; output is identical for any value")
      ("min-chars", po::value(&cfg.min_chars)->default_value(defaults.min_chars)->value_name("N"),
       "drop articles whose cleaned text is shorter")
      ("max-node-bytes", po::value(&cfg.max_node_bytes)->default_value(defaults.max_node_bytes)->value_name("BYTES"),
       "fail on a text run, tag or comment longer than this (bytes); bounds memory on hostile input")
      ("keep-headings", po::bool_switch(&cfg.markup.keep_headings), "keep section headings as their own lines")
      ("keep-lists", po::bool_switch(&cfg.markup.keep_lists), "keep list items (*, #, :, ;) as lines")
      ("keep-disambiguation", po::bool_switch(&cfg.keep_disambiguation), "keep disambiguation pages")
      ("url-base", po::value(&cfg.url_base)->value_name("URL"), "URL prefix for --format wikiextractor (default: from the "
       "dump's <base>, e.g. https://en.wikipedia.org/wiki)");
    opts.positional("input", 1);
    opts.epilog(
        "With no INPUT the dump is read from stdin, unless stdin is a terminal: that is refused (name '-' to read\n"
        "the terminal anyway). On a terminal, a progress line shows the share of the dump's file read so far.\n"
        "\n"
        "Examples:\n"
        "  wiki-clean -t 0 -o articles.txt enwiki-latest-pages-articles.xml.bz2\n"
        "  wiki-clean -t 0 enwiki-latest-pages-articles.xml.bz2 | sent-seg -t 0 -o sentences.txt\n"
        "  bzcat dump.xml.bz2 | wiki-clean --format jsonl - > articles.jsonl\n"
        "\n"
        "Exit status: 0 success, 1 bad or truncated input or I/O error, 2 usage error, 130 interrupted\n"
        "(129 hangup, 143 terminated); a failed run leaves no output file.");
    if (!opts.parse(argc, argv)) return 0;
    auto inputs = opts.positionals();
    if (!inputs.empty()) cfg.input = inputs[0];
    cfg.quiet = opts.quiet();
    bk::run_wiki_clean(cfg);
    return 0;
  });
}
