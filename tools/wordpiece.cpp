// wordpiece: BERT WordPiece tokenization (google-research/bert rules) and its inverse.
#include "cli/run_tool.h"
#include "cli/subcommands.h"
#include "cli/options.h"
#include "tok/wordpiece.h"

#include <string>

namespace {

namespace po = bk::po;

constexpr const char* kSynopsis = "encode|decode|train [options] [INPUT|-]";
constexpr const char* kDescription =
    "BERT WordPiece tokenization, identical to google-research/bert's FullTokenizer.\n"
    "  encode  one output line per input line: WordPiece tokens (or ids) joined by single spaces\n"
    "  decode  lines of ids back to text (case, accents and original spacing are not recovered)\n"
    "  train   learn a vocabulary (vocab.txt) from text";

constexpr const char* kExitStatus =
    "Exit status: 0 success, 1 data or I/O error (no output file is left), 2 usage error, 130 interrupted\n"
    "(129 hangup, 143 terminated).";

// --vocab, --output and --force of encode and decode.
template <typename Config>
void add_common(bk::Options& opts, Config& config) {
  const Config defaults;
  opts.add()("vocab", po::value(&config.vocab_path)->required()->value_name("FILE"),
             "the vocabulary, one token per line (id = line number)")
            ("output,o", po::value(&config.output)->default_value(defaults.output)->value_name("FILE"),
             "write here instead of stdout")
            ("force,f", po::bool_switch(&config.force), "replace an existing output file");
}

struct EncodeOptions {
  bk::WordpieceEncodeConfig config;
  bk::Options opts{"wordpiece encode", "[options] [INPUT|-]",
                   "Tokenize each line of INPUT (default stdin) into WordPiece tokens or ids."};
  EncodeOptions() {
    const bk::WordpieceEncodeConfig defaults;
    add_common(opts, config);
    opts.add()("cased", po::bool_switch(&config.cased), "keep case and accents (default: lower-case, strip accents)")
              ("format", po::value(&config.format)->default_value(defaults.format)->value_name("tokens|ids"),
               "print token strings or vocabulary ids")
              ("threads,t", po::value(&config.threads)->default_value(defaults.threads)->value_name("N"),
               "worker threads, 0 = all cores (output is the same for every N)");
    opts.positional("input", -1);
    opts.epilog("Examples:\n"
                "  wordpiece encode --vocab vocab.txt --threads 0 sentences.txt > tokens.txt\n"
                "  echo \"Hello, world!\" | wordpiece encode --vocab vocab.txt --format ids\n"
                "\n" + std::string(kExitStatus));
  }
};

struct DecodeOptions {
  bk::WordpieceDecodeConfig config;
  bk::Options opts{"wordpiece decode", "[options] [INPUT|-]",
                   "Turn lines of WordPiece ids back into text: tokens joined by spaces, \"##\" pieces glued on."};
  DecodeOptions() {
    add_common(opts, config);
    opts.positional("input", -1);
    opts.epilog("Examples:\n"
                "  wordpiece encode --vocab vocab.txt --format ids text.txt | wordpiece decode --vocab vocab.txt\n"
                "  wordpiece decode --vocab vocab.txt -o text.txt ids.txt\n"
                "\n" + std::string(kExitStatus));
  }
};

struct TrainOptions {
  bk::WordpieceTrainConfig config;
  bk::Options opts{"wordpiece train", "[options] [INPUT...|-]",
                   "Learn a WordPiece vocabulary from text, as Hugging Face's BertWordPieceTokenizer.train does, with\n"
                   "words split by the same rules as encode. The result is one token per line, read by --vocab."};
  TrainOptions() {
    const bk::WordpieceTrainConfig defaults;
    const bk::WordpieceTrainerConfig& d = defaults.trainer;
    auto& t = config.trainer;
    opts.add()("vocab-size", po::value(&t.vocab_size)->default_value(d.vocab_size)->value_name("N"),
               "size of the vocabulary, special tokens included")
              ("min-frequency", po::value(&t.min_frequency)->default_value(d.min_frequency)->value_name("N"),
               "stop merging when the best pair is seen fewer times")
              ("limit-alphabet", po::value(&t.limit_alphabet)->default_value(d.limit_alphabet)->value_name("N"),
               "keep at most N distinct characters, the most frequent")
              ("initial-alphabet", po::value<std::string>()->value_name("CHARS")->notifier(
                   [&t](const std::string& chars) { t.initial_alphabet = bk::split_characters(chars); }),
               "characters always kept in the alphabet")
              ("special-tokens", po::value<std::string>()
                                     ->default_value(bk::join_special_tokens(d.special_tokens))
                                     ->value_name("LIST")
                                     ->notifier([&t](const std::string& list) {
                                       t.special_tokens = bk::split_special_tokens(list);
                                     }),
               "comma-separated tokens placed first (ids 0, 1, ...)")
              ("wordpieces-prefix", po::value(&t.prefix)->default_value(d.prefix)->value_name("PREFIX"),
               "prefix of continuation pieces")
              ("cased", po::bool_switch()->notifier([&t](bool cased) { t.lower_case = !cased; }),
               "keep case and accents (default: lower-case, strip accents)")
              ("output,o", po::value(&config.output)->default_value(defaults.output)->value_name("FILE"),
               "write the vocabulary here instead of stdout")
              ("force,f", po::bool_switch(&config.force), "replace an existing output file")
              ("threads,t", po::value(&t.threads)->default_value(d.threads)->value_name("N"),
               "counting threads, 0 = all cores (output is the same for every N)");
    opts.positional("input", -1);
    opts.epilog("On a terminal, a progress line shows the share of the inputs counted, then of the vocabulary merged.\n"
                "\n"
                "Examples:\n"
                "  wordpiece train --vocab-size 30522 --threads 0 -o vocab.txt shards/*.txt\n"
                "  wordpiece train --vocab-size 8000 --cased --min-frequency 5 -o vocab-cased.txt corpus.txt.gz\n"
                "\n" + std::string(kExitStatus));
  }
};

}  // namespace

int main(int argc, char** argv) {
  return bk::run_tool("wordpiece", argc, argv, [](int argc, char** argv) {
    return bk::run_subcommands("wordpiece", kSynopsis, kDescription,
                               {bk::subcommand<EncodeOptions>("encode", bk::run_wordpiece_encode),
                                bk::subcommand<DecodeOptions>("decode", bk::run_wordpiece_decode),
                                bk::subcommand<TrainOptions>("train", bk::run_wordpiece_train)},
                               argc, argv);
  });
}
