// bpe: byte-level BPE tokenization (HF tokenizers' tokenizer.json: RoBERTa, GPT-2, ModernBERT) and its inverse.
#include "cli/options.h"
#include "cli/run_tool.h"
#include "cli/subcommands.h"
#include "tok/bpe.h"
#include "tok/unicode_normalizer.h"
#include "tok/wordpiece.h"

#include <string>

namespace {

namespace po = bk::po;

constexpr const char* kSynopsis = "encode|decode|train [options] [INPUT|-]";
constexpr const char* kDescription =
    "Byte-level BPE tokenization, identical to Hugging Face tokenizers with the same tokenizer.json.\n"
    "  encode  one output line per input line: tokens (or ids) joined by single spaces\n"
    "  decode  lines of ids back to text, byte for byte\n"
    "  train   learn a tokenizer (tokenizer.json) from text, as tokenizers' BpeTrainer";

constexpr const char* kExitStatus =
    "Exit status: 0 success, 1 data or I/O error (no output file is left), 2 usage error, 130 interrupted\n"
    "(129 hangup, 143 terminated).";

constexpr const char* kTokenizerHelp =
    "a tokenizer.json, or a vocab.json with its merges.txt beside it";

template <typename Config>
void add_common(bk::Options& opts, Config& config) {
  const Config defaults;
  opts.add()("tokenizer", po::value(&config.tokenizer_path)->required()->value_name("FILE"), kTokenizerHelp)
            ("output,o", po::value(&config.output)->default_value(defaults.output)->value_name("FILE"),
             "write here instead of stdout")
            ("force,f", po::bool_switch(&config.force), "replace an existing output file");
}

struct EncodeOptions {
  bk::BpeEncodeConfig config;
  bk::Options opts{"bpe encode", "[options] [INPUT|-]",
                   "Tokenize each line of INPUT (default stdin) into byte-level BPE tokens or ids: HF tokenizers'\n"
                   "Tokenizer.from_file(FILE).encode(line, add_special_tokens=False)."};
  EncodeOptions() {
    const bk::BpeEncodeConfig defaults;
    add_common(opts, config);
    opts.add()("format", po::value(&config.format)->default_value(defaults.format)->value_name("tokens|ids"),
               "print token strings (byte-level: a space is \"\\u0120\") or vocabulary ids")
              ("special", po::bool_switch(&config.special),
               "wrap each line in the tokenizer's template (RoBERTa's <s> A </s>, ModernBERT's [CLS] A [SEP])")
              ("threads,t", po::value(&config.threads)->default_value(defaults.threads)->value_name("N"),
               "worker threads, 0 = all cores (output is the same for every N)");
    opts.positional("input", -1);
    opts.epilog("Examples:\n"
                "  bpe encode --tokenizer tokenizer.json --threads 0 sentences.txt > tokens.txt\n"
                "  echo \"Hello, world!\" | bpe encode --tokenizer roberta/vocab.json --format ids\n"
                "\n" + std::string(kExitStatus));
  }
};

struct DecodeOptions {
  bk::BpeDecodeConfig config;
  bk::Options opts{"bpe decode", "[options] [INPUT|-]",
                   "Turn lines of ids back into text: each token's bytes joined, as HF's ByteLevel decoder."};
  DecodeOptions() {
    add_common(opts, config);
    opts.positional("input", -1);
    opts.epilog("Examples:\n"
                "  bpe encode --tokenizer tokenizer.json --format ids text.txt | bpe decode --tokenizer tokenizer.json\n"
                "\n" + std::string(kExitStatus));
  }
};

struct TrainOptions {
  bk::BpeTrainConfig config;
  bk::Options opts{"bpe train", "[options] [INPUT...|-]",
                   "Learn a byte-level BPE tokenizer from text, the merges HF tokenizers' BpeTrainer learns from the\n"
                   "same files and settings (lines read with their endings; all 256 bytes in the alphabet). Writes a\n"
                   "tokenizer.json that --tokenizer and HF's Tokenizer.from_file read."};
  TrainOptions() {
    const bk::BpeTrainerConfig d;
    auto& t = config.trainer;
    opts.add()("vocab-size", po::value(&t.vocab_size)->default_value(d.vocab_size)->value_name("N"),
               "size of the vocabulary, special tokens included")
              ("min-frequency", po::value(&t.min_frequency)->default_value(d.min_frequency)->value_name("N"),
               "stop merging when the best pair is seen fewer times")
              ("special-tokens", po::value<std::string>()
                                     ->default_value(bk::join_special_tokens(d.special_tokens))
                                     ->value_name("LIST")
                                     ->notifier([&t](const std::string& list) {
                                       t.special_tokens = bk::split_special_tokens(list);
                                     }),
               "comma-separated tokens placed first (ids 0, 1, ...); <s> and </s> give RoBERTa's template, [CLS] "
               "and [SEP] BERT's")
              ("add-prefix-space", po::bool_switch(&t.add_prefix_space),
               "a space before each piece of text that does not start with one (GPT-2's \"Ġword\" at a line's start)")
              ("normalizer", po::value<std::string>()->value_name("NFC|NFKC")->notifier([&t](const std::string& name) {
                 bk::NormalForm form;
                 if (!bk::parse_normal_form(name, form)) bk::usage_fail("--normalizer must be NFC, NFKC, NFD or NFKD, got '{}'", name);
                 t.normalizer = {form};
               }),
               "Unicode normalization before splitting (default: none)")
              ("output,o", po::value(&config.output)->default_value(config.output)->value_name("FILE"),
               "write the tokenizer.json here instead of stdout")
              ("force,f", po::bool_switch(&config.force), "replace an existing output file")
              ("threads,t", po::value(&t.threads)->default_value(d.threads)->value_name("N"),
               "counting threads, 0 = all cores (output is the same for every N)");
    opts.positional("input", -1);
    opts.epilog("On a terminal, a progress line shows the share of each input counted.\n"
                "\n"
                "Examples:\n"
                "  bpe train --vocab-size 50265 --threads 0 -o tokenizer.json shards/*.txt\n"
                "  bpe train --vocab-size 8000 --special-tokens '[CLS],[SEP],[PAD],[MASK],[UNK]' --normalizer NFC -o tok.json corpus.txt.gz\n"
                "\n" + std::string(kExitStatus));
  }
};

}  // namespace

int main(int argc, char** argv) {
  return bk::run_tool("bpe", argc, argv, [](int argc, char** argv) {
    return bk::run_subcommands("bpe", kSynopsis, kDescription,
                               {bk::subcommand<EncodeOptions>("encode", bk::run_bpe_encode),
                                bk::subcommand<DecodeOptions>("decode", bk::run_bpe_decode),
                                bk::subcommand<TrainOptions>("train", bk::run_bpe_train)},
                               argc, argv);
  });
}
