// wordpiece: BERT WordPiece tokenization (google-research/bert rules) and its inverse.
#include "cli/run_tool.h"
#include "cli/options.h"
#include "tok/wordpiece.h"
#include "tok/wordpiece_trainer.h"
#include "text/utf8.h"
#include "util/ordered_parallel.h"

#include <cstdio>
#include <cstring>
#include <string>

namespace {

constexpr const char* kSynopsis = "encode|decode|train [options] [INPUT|-]";
constexpr const char* kDescription =
    "BERT WordPiece tokenization, identical to google-research/bert's FullTokenizer.\n"
    "  encode  one output line per input line: WordPiece tokens (or ids) joined by single spaces\n"
    "  decode  lines of ids back to text (case, accents and original spacing are not recovered)\n"
    "  train   learn a vocabulary (vocab.txt) from text";

void add_common(bk::Options& opts, std::string& vocab, std::string& output, bool& force) {
  opts.add()("vocab", bk::po::value<std::string>(&vocab)->required()->value_name("FILE"),
             "the vocabulary, one token per line (id = line number)")
            ("output,o", bk::po::value<std::string>(&output)->default_value("-")->value_name("FILE"),
             "write here instead of stdout")
            ("force,f", bk::po::bool_switch(&force), "replace an existing output file");
}

std::string one_input(const bk::Options& opts) {
  auto inputs = opts.positionals();
  if (inputs.size() > 1) bk::usage_fail("expected at most one INPUT, got {}", inputs.size());
  return inputs.empty() ? "-" : inputs.front();
}

struct EncodeOptions {
  bk::WordpieceEncodeConfig config;
  std::string format = "tokens";
  bk::Options opts{"wordpiece encode", "[options] [INPUT|-]",
                   "Tokenize each line of INPUT (default stdin) into WordPiece tokens or ids."};
  EncodeOptions() {
    add_common(opts, config.vocab_path, config.output, config.force);
    opts.add()("cased", bk::po::bool_switch(&config.cased), "keep case and accents (default: lower-case, strip accents)")
              ("format", bk::po::value<std::string>(&format)->default_value("tokens")->value_name("tokens|ids"),
               "print token strings or vocabulary ids")
              ("threads,t", bk::po::value<int>(&config.threads)->default_value(1)->value_name("N"),
               "worker threads, 0 = all cores (output is the same for every N)");
    opts.positional("input", -1);
  }
};

struct DecodeOptions {
  bk::WordpieceDecodeConfig config;
  bk::Options opts{"wordpiece decode", "[options] [INPUT|-]",
                   "Turn lines of WordPiece ids back into text: tokens joined by spaces, \"##\" pieces glued on."};
  DecodeOptions() {
    add_common(opts, config.vocab_path, config.output, config.force);
    opts.positional("input", -1);
  }
};

struct TrainOptions {
  bk::WordpieceTrainConfig config;
  std::string special_tokens = "[PAD],[UNK],[CLS],[SEP],[MASK]";
  std::string initial_alphabet;
  bool cased = false;
  bk::Options opts{"wordpiece train", "[options] [INPUT...|-]",
                   "Learn a WordPiece vocabulary from text, as Hugging Face's BertWordPieceTokenizer.train does, with\n"
                   "words split by the same rules as encode. The result is one token per line, read by --vocab."};
  TrainOptions() {
    opts.add()("vocab-size", bk::po::value(&config.train.vocab_size)->default_value(30000)->value_name("N"),
               "size of the vocabulary, special tokens included")
              ("min-frequency", bk::po::value(&config.train.min_frequency)->default_value(2)->value_name("N"),
               "stop merging when the best pair is seen fewer times")
              ("limit-alphabet", bk::po::value(&config.train.limit_alphabet)->default_value(1000)->value_name("N"),
               "keep at most N distinct characters, the most frequent")
              ("initial-alphabet", bk::po::value(&initial_alphabet)->value_name("CHARS"),
               "characters always kept in the alphabet")
              ("special-tokens", bk::po::value(&special_tokens)->default_value(special_tokens)->value_name("LIST"),
               "comma-separated tokens placed first (ids 0, 1, ...)")
              ("wordpieces-prefix", bk::po::value(&config.train.prefix)->default_value("##")->value_name("P"),
               "prefix of continuation pieces")
              ("cased", bk::po::bool_switch(&cased), "keep case and accents (default: lower-case, strip accents)")
              ("output,o", bk::po::value<std::string>(&config.output)->default_value("-")->value_name("FILE"),
               "write the vocabulary here instead of stdout")
              ("force,f", bk::po::bool_switch(&config.force), "replace an existing output file")
              ("threads,t", bk::po::value<int>(&config.train.threads)->default_value(1)->value_name("N"),
               "counting threads, 0 = all cores (output is the same for every N)");
    opts.positional("input", -1);
  }
};

int run_train(int argc, char** argv) {
  TrainOptions o;
  if (!o.opts.parse(argc, argv)) return 0;
  auto& t = o.config.train;
  t.lower_case = !o.cased;
  t.special_tokens.clear();
  for (size_t start = 0; start <= o.special_tokens.size();) {
    size_t comma = o.special_tokens.find(',', start);
    if (comma == std::string::npos) comma = o.special_tokens.size();
    if (comma > start) t.special_tokens.push_back(o.special_tokens.substr(start, comma - start));
    start = comma + 1;
  }
  if (bk::utf8_invalid_offset(o.initial_alphabet) != std::string_view::npos) bk::usage_fail("--initial-alphabet is not UTF-8");
  for (size_t pos = 0; pos < o.initial_alphabet.size();) {
    size_t begin = pos;
    bk::next_code_point(o.initial_alphabet, pos);
    t.initial_alphabet.push_back(o.initial_alphabet.substr(begin, pos - begin));
  }
  if (t.vocab_size < 1) bk::usage_fail("--vocab-size must be positive");
  if (t.threads < 0) bk::usage_fail("--threads must be 0 (all cores) or positive, got {}", t.threads);
  if (t.threads == 0) t.threads = bk::hardware_threads();
  o.config.inputs = o.opts.positionals();
  o.config.quiet = o.opts.quiet();
  bk::run_wordpiece_train(o.config);
  return 0;
}

int run_encode(int argc, char** argv) {
  EncodeOptions o;
  if (!o.opts.parse(argc, argv)) return 0;
  if (o.format == "ids") o.config.format = bk::WordpieceOutputFormat::Ids;
  else if (o.format != "tokens") bk::usage_fail("--format must be tokens or ids, got '{}'", o.format);
  if (o.config.threads < 0) bk::usage_fail("--threads must be 0 (all cores) or positive, got {}", o.config.threads);
  if (o.config.threads == 0) o.config.threads = bk::hardware_threads();
  o.config.input = one_input(o.opts);
  o.config.quiet = o.opts.quiet();
  bk::run_wordpiece_encode(o.config);
  return 0;
}

int run_decode(int argc, char** argv) {
  DecodeOptions o;
  if (!o.opts.parse(argc, argv)) return 0;
  o.config.input = one_input(o.opts);
  o.config.quiet = o.opts.quiet();
  bk::run_wordpiece_decode(o.config);
  return 0;
}

// `wordpiece --help`: the overview plus both subcommands' options.
int run_top(int argc, char** argv) {
  bk::Options top("wordpiece", kSynopsis, kDescription);
  if (!top.parse(argc, argv)) {
    if (argc > 1 && (std::strcmp(argv[1], "--version") == 0)) return 0;
    std::printf("\n%s\n%s\n%s", EncodeOptions().opts.help_text().c_str(), DecodeOptions().opts.help_text().c_str(),
                TrainOptions().opts.help_text().c_str());
    return 0;
  }
  bk::usage_fail("missing subcommand (encode, decode or train)");
}

}  // namespace

int main(int argc, char** argv) {
  return bk::run_tool("wordpiece", argc, argv, [](int argc, char** argv) {
    if (argc < 2 || argv[1][0] == '-') return run_top(argc, argv);
    std::string command = argv[1];
    // Subcommands see argv from their own name on, so their --help shows "wordpiece encode".
    if (command == "encode") return run_encode(argc - 1, argv + 1);
    if (command == "decode") return run_decode(argc - 1, argv + 1);
    if (command == "train") return run_train(argc - 1, argv + 1);
    bk::usage_fail("unknown subcommand '{}' (expected encode, decode or train)", command);
  });
}
