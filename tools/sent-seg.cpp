// sent-seg: one sentence per line, a blank line after every document.
#include "cli/run_tool.h"
#include "cli/options.h"
#include "seg/sent_seg.h"

namespace {

int sent_seg_main(int argc, char** argv) {
  bk::SentSegConfig config;
  const bk::SentSegConfig defaults;
  bk::Options opts("sent-seg", "[options] [INPUT...|-]",
                   "Split the paragraphs of documents (one paragraph per line, a blank line after each document;\n"
                   "or JSON lines, a document per line, hard-wrapped text) into sentences: one sentence per line, a\n"
                   "blank line after each document, as read by google-research/bert create_pretraining_data.py.\n"
                   "INPUTs are read one after the other, plain or .gz/.bz2/.xz/.zst compressed.");
  opts.add()
    ("output,o", bk::po::value(&config.output)->default_value(defaults.output)->value_name("FILE"),
     "output file (- = stdout); missing directories are created")
    ("force,f", bk::po::bool_switch(&config.force), "overwrite an existing output file")
    ("threads,t", bk::po::value(&config.threads)->default_value(defaults.threads)->value_name("N"),
     "worker threads (0 = all cores)")
    ("lang,l", bk::po::value(&config.segmenter.lang)->default_value(defaults.segmenter.lang)->value_name("LOCALE"),
     "ICU locale for sentence breaks and the abbreviation list (built-in list: en)")
    ("abbreviations,a", bk::po::value(&config.segmenter.abbreviations_file)->value_name("FILE"),
     "file of extra abbreviations: ABBREV [never|number|ambiguous|lowercase] per line")
    ("input-format", bk::choice_value("input-format", bk::kTextFormats, config.document_format.format,
                                      defaults.document_format.format)->value_name("F"),
     "text (a paragraph per line, a blank line after each document), jsonl (a JSON object per line, the "
     "document in --text-field; its newlines end paragraphs) or lines (a document per line)")
    ("text-field", bk::po::value(&config.document_format.text_field)
                       ->default_value(defaults.document_format.text_field)->value_name("NAME"),
     "jsonl: the field holding each document's text")
    ("unwrap", bk::po::bool_switch(&config.document_format.unwrap),
     "join hard-wrapped lines: a blank line ends a paragraph, a line break inside one is a space; with "
     "text, each INPUT is then one document");
  opts.positional("input", -1);
  opts.epilog(
      "Examples:\n"
      "  wiki-clean enwiki-latest-pages-articles.xml.bz2 | sent-seg -t 0 -o sentences.txt\n"
      "  sent-seg -t 0 -o sentences.txt articles.txt.gz\n"
      "  sent-seg --lang de -a my-abbreviations.txt dewiki.txt.gz > de-sentences.txt\n"
      "  sent-seg --input-format jsonl --text-field content -o corpus.txt data/*.jsonl.zst\n"
      "  sent-seg --unwrap -o manuals.txt manuals/*.txt\n"
      "\n"
      "Exit status: 0 success (an empty input gives an empty output), 1 bad input or I/O error,\n"
      "2 usage error, 130 interrupted (129 hangup, 143 terminated); a failed run leaves no output file.\n");
  if (!opts.parse(argc, argv)) return 0;
  config.inputs = opts.positionals();
  config.quiet = opts.quiet();
  bk::run_sent_seg(config);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return bk::run_tool("sent-seg", argc, argv, sent_seg_main); }
