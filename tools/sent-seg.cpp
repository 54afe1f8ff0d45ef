// sent-seg: one sentence per line, a blank line after every document.
#include "cli/run_tool.h"
#include "cli/options.h"
#include "seg/sent_seg.h"

namespace {

int sent_seg_main(int argc, char** argv) {
  bk::SentSegConfig config;
  const bk::SentSegConfig defaults;
  bk::Options opts("sent-seg", "[options] [INPUT|-]",
                   "Split the paragraphs of documents (one paragraph per line, a blank line after each document)\n"
                   "into sentences: one sentence per line, a blank line after each document, as read by\n"
                   "google-research/bert create_pretraining_data.py. INPUT may be gzip or bzip2 compressed.");
  opts.add()
    ("output,o", bk::po::value(&config.output)->default_value(defaults.output)->value_name("FILE"),
     "output file (- = stdout); missing directories are created")
    ("force,f", bk::po::bool_switch(&config.force), "overwrite an existing output file")
    ("threads,t", bk::po::value(&config.threads)->default_value(defaults.threads)->value_name("N"),
     "worker threads (0 = all cores)")
    ("lang,l", bk::po::value(&config.segmenter.lang)->default_value(defaults.segmenter.lang)->value_name("LOCALE"),
     "ICU locale for sentence breaks and the abbreviation list (built-in list: en)")
    ("abbreviations,a", bk::po::value(&config.segmenter.abbreviations_file)->value_name("FILE"),
     "file of extra abbreviations: ABBREV [never|number|ambiguous|lowercase] per line");
  opts.positional("input", 1);
  opts.epilog(
      "Examples:\n"
      "  wiki-clean enwiki-latest-pages-articles.xml.bz2 | sent-seg -t 0 -o sentences.txt\n"
      "  sent-seg -t 0 -o sentences.txt articles.txt.gz\n"
      "  sent-seg --lang de -a my-abbreviations.txt dewiki.txt.gz > de-sentences.txt\n"
      "\n"
      "Exit status: 0 success (an empty input gives an empty output), 1 bad input or I/O error,\n"
      "2 usage error, 130 interrupted (129 hangup, 143 terminated); a failed run leaves no output file.\n");
  if (!opts.parse(argc, argv)) return 0;
  auto inputs = opts.positionals();
  if (!inputs.empty()) config.input = inputs[0];
  config.quiet = opts.quiet();
  bk::run_sent_seg(config);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return bk::run_tool("sent-seg", argc, argv, sent_seg_main); }
