// wordpiece: BERT WordPiece tokenization (google-research/bert rules) and its inverse.
#include "cli/error.h"
#include "cli/options.h"
#include "tok/encode_run.h"
#include "util/ordered_parallel.h"

#include <cstdio>
#include <cstring>
#include <string>

namespace {

constexpr const char* kSynopsis = "encode|decode [options] [INPUT|-]";
constexpr const char* kDescription =
    "BERT WordPiece tokenization, identical to google-research/bert's FullTokenizer.\n"
    "  encode  one output line per input line: WordPiece tokens (or ids) joined by single spaces\n"
    "  decode  lines of ids back to text (case, accents and original spacing are not recovered)";

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
  bk::tok::EncodeConfig config;
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
  bk::tok::DecodeConfig config;
  bk::Options opts{"wordpiece decode", "[options] [INPUT|-]",
                   "Turn lines of WordPiece ids back into text: tokens joined by spaces, \"##\" pieces glued on."};
  DecodeOptions() {
    add_common(opts, config.vocab_path, config.output, config.force);
    opts.positional("input", -1);
  }
};

int run_encode(int argc, char** argv) {
  EncodeOptions o;
  if (!o.opts.parse(argc, argv)) return 0;
  if (o.format == "ids") o.config.format = bk::tok::OutputFormat::Ids;
  else if (o.format != "tokens") bk::usage_fail("--format must be tokens or ids, got '{}'", o.format);
  if (o.config.threads < 0) bk::usage_fail("--threads must be 0 (all cores) or positive, got {}", o.config.threads);
  if (o.config.threads == 0) o.config.threads = bk::hardware_threads();
  o.config.input = one_input(o.opts);
  o.config.quiet = o.opts.quiet();
  bk::tok::run_encode(o.config);
  return 0;
}

int run_decode(int argc, char** argv) {
  DecodeOptions o;
  if (!o.opts.parse(argc, argv)) return 0;
  o.config.input = one_input(o.opts);
  o.config.quiet = o.opts.quiet();
  bk::tok::run_decode(o.config);
  return 0;
}

// `wordpiece --help`: the overview plus both subcommands' options.
int run_top(int argc, char** argv) {
  bk::Options top("wordpiece", kSynopsis, kDescription);
  if (!top.parse(argc, argv)) {
    if (argc > 1 && (std::strcmp(argv[1], "--version") == 0)) return 0;
    std::printf("\n%s\n%s", EncodeOptions().opts.help_text().c_str(), DecodeOptions().opts.help_text().c_str());
    return 0;
  }
  bk::usage_fail("missing subcommand (encode or decode)");
}

}  // namespace

int main(int argc, char** argv) {
  return bk::run_tool("wordpiece", argc, argv, [](int argc, char** argv) {
    if (argc < 2 || argv[1][0] == '-') return run_top(argc, argv);
    std::string command = argv[1];
    // Subcommands see argv from their own name on, so their --help shows "wordpiece encode".
    if (command == "encode") return run_encode(argc - 1, argv + 1);
    if (command == "decode") return run_decode(argc - 1, argv + 1);
    if (command == "train") bk::usage_fail("'train' is not implemented yet");
    bk::usage_fail("unknown subcommand '{}' (expected encode or decode)", command);
  });
}
