// Each text tool's config checks itself: the defaults (with what a run must be given) pass, and each bad value
// is refused by validate() with the message the tool prints for it.
#include <doctest/doctest.h>

#include "util/error.h"
#include "datasets/bin4.h"
#include "datasets/tfrecord2hdf5.h"
#include "pretraining_data/mkpretrain.h"
#include "seg/sent_seg.h"
#include "shard/shard.h"
#include "tok/wordpiece.h"
#include "wiki/wiki_clean.h"

#include <string>
#include <vector>

namespace {

// validate()'s UsageError message for `config` changed by `change`, or "accepted".
template <typename Config, typename Change>
std::string usage_of(Config config, Change change) {
  change(config);
  try {
    config.validate();
  } catch (const bk::UsageError& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE("wiki-clean config: defaults pass, a bad format or thread count is named") {
  bk::WikiCleanConfig c;
  c.input = "-";  // no input named is refused when stdin is a terminal, as it may be where the tests run
  CHECK_NOTHROW(c.validate());
  CHECK(usage_of(c, [](auto& b) { b.format = "jsonl"; }) == "accepted");
  CHECK(usage_of(c, [](auto& b) { b.format = "xml"; }) == "--format must be text, jsonl or wikiextractor, got 'xml'");
  CHECK(usage_of(c, [](auto& b) { b.threads = -1; }) == "--threads must be 0 (all cores) or positive, got -1");
}

TEST_CASE("sent-seg config: defaults pass, a bad thread count or locale is named") {
  bk::SentSegConfig c;
  c.inputs = {"-"};  // named: no terminal check, whatever stdin is when the tests run
  CHECK_NOTHROW(c.validate());
  CHECK(usage_of(c, [](auto& b) { b.segmenter.lang = "de_CH"; }) == "accepted");
  CHECK(usage_of(c, [](auto& b) { b.threads = -2; }) == "--threads must be 0 (all cores) or positive, got -2");
  CHECK(usage_of(c, [](auto& b) { b.segmenter.lang = "en/../x"; }) ==
        "--lang expects a locale such as en or de_CH, got 'en/../x'");
  CHECK(usage_of(c, [](auto& b) { b.document_format.format = bk::TextFormat::lines, b.document_format.unwrap = true; }) ==
        "--unwrap joins a paragraph's lines; with --input-format lines every line is a document");
  CHECK(usage_of(c, [](auto& b) { b.document_format.text_field = "body"; }) ==
        "--text-field names a JSON field: give --input-format jsonl");
  CHECK(usage_of(c, [](auto& b) { b.inputs = {"-", "-"}; }) == "stdin (-) can be given only once");
}

TEST_CASE("shard config: what a run is given passes, each bad value or combination is named") {
  bk::ShardConfig c;
  c.prefix = "out/wiki";
  c.inputs = {"a.txt"};
  CHECK_NOTHROW(c.validate());
  CHECK(usage_of(c, [](auto& b) { b.training_shards = 0; }) == "--training-shards must be at least 1, got 0");
  CHECK(usage_of(c, [](auto& b) { b.test_shards = -1; }) == "--test-shards must not be negative, got -1");
  CHECK(usage_of(c, [](auto& b) { b.seed = -5; }) == "--seed must not be negative, got -5");
  CHECK(usage_of(c, [](auto& b) { b.max_open = 0; }) == "--max-open-files must be at least 1, got 0");
  CHECK(usage_of(c, [](auto& b) { b.test_fraction = 1; }) == "--test-fraction must be in [0, 1), got 1");
  CHECK(usage_of(c, [](auto& b) { b.test_fraction = 0.1; }) == "--test-fraction 0.1 needs --test-shards >= 1");
  CHECK(usage_of(c, [](auto& b) { b.test_shards = 2; }) == "--test-shards 2 needs a --test-fraction above 0");
  CHECK(usage_of(c, [](auto& b) { b.training_shards = 100000; }) == "at most 99999 shards per split");
  CHECK(usage_of(c, [](auto& b) { b.inputs.clear(); }) == "no INPUT given (use - for stdin)");
  CHECK(usage_of(c, [](auto& b) { b.inputs = {"-", "-"}; }) == "stdin (-) can be given only once");
  // A std::string, not the literal: GCC 12 at -O3 warns (-Wrestrict, a false positive) on assigning "-".
  CHECK(usage_of(c, [](auto& b) { b.prefix = std::string("-"); }) ==
        "-o PREFIX is required (shards are files, not stdout)");
  CHECK(usage_of(c, [](auto& b) { b.prefix = "out/"; }) == "-o PREFIX must end in a file name part, got 'out/'");
}

TEST_CASE("wordpiece configs: defaults pass, each bad value is named") {
  bk::WordpieceEncodeConfig e;
  e.inputs = {"-"};  // named: no terminal check, whatever stdin is when the tests run
  CHECK_NOTHROW(e.validate());
  CHECK(usage_of(e, [](auto& b) { b.format = "ids"; }) == "accepted");
  CHECK(usage_of(e, [](auto& b) { b.format = "json"; }) == "--format must be tokens or ids, got 'json'");
  CHECK(usage_of(e, [](auto& b) { b.threads = -1; }) == "--threads must be 0 (all cores) or positive, got -1");
  CHECK(usage_of(e, [](auto& b) { b.inputs = {"a", "b"}; }) == "expected at most one INPUT, got 2");

  bk::WordpieceDecodeConfig d;
  CHECK_NOTHROW(d.validate());
  CHECK(usage_of(d, [](auto& b) { b.inputs = {"a", "b", "c"}; }) == "expected at most one INPUT, got 3");

  bk::WordpieceTrainConfig t;
  CHECK_NOTHROW(t.validate());
  CHECK(usage_of(t, [](auto& b) { b.trainer.initial_alphabet = bk::split_characters("ab\xff"); }) ==
        "--initial-alphabet is not UTF-8");
  CHECK(usage_of(t, [](auto& b) { b.trainer.vocab_size = 0; }) == "--vocab-size must be positive");
  CHECK(usage_of(t, [](auto& b) { b.trainer.threads = -3; }) == "--threads must be 0 (all cores) or positive, got -3");
  CHECK(usage_of(t, [](auto& b) { b.trainer.vocab_size = 4; }) == "--vocab-size is smaller than the special tokens");
}

TEST_CASE("wordpiece train's list flags: special tokens split and joined, the alphabet split by character") {
  const bk::WordpieceTrainerConfig defaults;
  CHECK(bk::join_special_tokens(defaults.special_tokens) == "[PAD],[UNK],[CLS],[SEP],[MASK]");
  CHECK(bk::split_special_tokens("[PAD],[UNK],[CLS],[SEP],[MASK]") == defaults.special_tokens);
  CHECK(bk::split_special_tokens(",a,,b,") == std::vector<std::string>{"a", "b"});
  CHECK(bk::split_special_tokens("").empty());
  CHECK(bk::split_characters("a\xc3\xa9\xe4\xb8\xad") == std::vector<std::string>{"a", "\xc3\xa9", "\xe4\xb8\xad"});
  // Bytes that are not UTF-8 stay in an entry: a stray continuation byte with the character before it.
  CHECK(bk::split_characters("\x80" "a\xa9" "b\xff") == std::vector<std::string>{"\x80", "a\xa9", "b", "\xff"});
}

TEST_CASE("mkpretrain config: what a run is given passes, each bad value is named, the format follows the output") {
  bk::MkpretrainConfig c;
  c.inputs = {"a.txt"};
  c.output = "out.tfrecord";
  c.tokenizer.vocab = "vocab.txt";
  CHECK_NOTHROW(c.validate());
  CHECK(usage_of(c, [](auto& b) { b.tokenizer.vocab.clear(); }) ==
        "give the vocabulary: --vocab FILE (WordPiece) or --tokenizer FILE (byte-level BPE)");
  CHECK(usage_of(c, [](auto& b) { b.tokenizer.tokenizer = "tokenizer.json"; }) ==
        "give --vocab (WordPiece) or --tokenizer (byte-level BPE), not both");
  CHECK(usage_of(c, [](auto& b) { b.tokenizer.vocab.clear(), b.tokenizer.tokenizer = "t.json", b.tokenizer.cased = true; }) ==
        "--cased is WordPiece's: a byte-level BPE tokenizer keeps the text as it is");
  CHECK(usage_of(c, [](auto& b) { b.threads = -1; }) == "--threads must be >= 0");
  CHECK(usage_of(c, [](auto& b) { b.format = "json"; }) == "--format must be tfrecord or hdf5, got 'json'");
  CHECK(usage_of(c, [](auto& b) { b.gzip_level = 10; }) == "--gzip must be 0-9, got 10");
  CHECK(usage_of(c, [](auto& b) { b.instances.max_seq_length = 4; }) == "--max-seq-length must be at least 5, got 4");
  CHECK(usage_of(c, [](auto& b) { b.instances.max_predictions = 0; }) == "--max-predictions must be at least 1, got 0");
  CHECK(usage_of(c, [](auto& b) { b.instances.masked_lm_prob = 0; }) == "--masked-lm-prob must be in (0, 1]");
  CHECK(usage_of(c, [](auto& b) { b.instances.short_seq_prob = 1.5; }) == "--short-seq-prob must be in [0, 1]");
  CHECK(usage_of(c, [](auto& b) { b.dupe_factor = 0; }) == "--dupe-factor must be at least 1, got 0");
  CHECK(usage_of(c, [](auto& b) { b.unmasked = true; }) ==
        "--masking none writes HDF5 (TFRecord readers expect masks): name an .hdf5 output or give --format hdf5");
  CHECK(usage_of(c, [](auto& b) { b.inputs.clear(); }) == "no input files");
  // The layout matters only where HDF5 is written.
  CHECK(usage_of(c, [](auto& b) { b.hdf5_layout = "mlperf"; }) == "accepted");
  CHECK(usage_of(c, [](auto& b) { b.hdf5_layout = "mlperf", b.format = "hdf5"; }) ==
        "--layout must be nvidia or varlength");
  CHECK(usage_of(c, [](auto& b) { b.hdf5_layout = "mlperf", b.output = "out.h5"; }) ==
        "--layout must be nvidia or varlength");

  CHECK(c.output_format() == bk::PretrainFormat::tfrecord);
  c.output = "out.hdf5";
  CHECK(c.output_format() == bk::PretrainFormat::hdf5);
  c.format = "tfrecord";
  CHECK(c.output_format() == bk::PretrainFormat::tfrecord);
  c.format.clear();
  c.output = "out.bin";
  CHECK(c.output_format() == bk::PretrainFormat::tfrecord);
}

TEST_CASE("tfrecord2hdf5 config: what a run is given passes, each bad value or combination is named") {
  bk::Tfrecord2hdf5Config c;
  c.inputs = {"a.tfrecord"};
  c.output = "a.hdf5";
  CHECK_NOTHROW(c.validate());
  CHECK(usage_of(c, [](auto& b) { b.max_seq_length = -1; }) == "--max-seq-length and --max-predictions must be >= 0");
  CHECK(usage_of(c, [](auto& b) { b.gzip_level = -1; }) == "--gzip must be 0-9, got -1");
  CHECK(usage_of(c, [](auto& b) { b.layout = "mlperf"; }) ==
        "--layout must be auto, nvidia, varlength or generic, got 'mlperf'");
  CHECK(usage_of(c, [](auto& b) { b.inputs.clear(); }) == "no input files");
  CHECK(usage_of(c, [](auto& b) { b.output_dir = "dir"; }) == "give either -o FILE or --output-dir DIR");
  CHECK(usage_of(c, [](auto& b) { b.output.clear(), b.output_dir = "dir", b.inputs = {"a", "-"}; }) ==
        "--output-dir needs file inputs to name its outputs; use -o for stdin");
}

TEST_CASE("bin4 config: what a run is given passes, each bad value is named") {
  bk::Bin4Config c;
  c.inputs = {"in.hdf5"};
  c.output_dir = "out";
  CHECK_NOTHROW(c.validate());
  CHECK(usage_of(c, [](auto& b) { b.bins.clear(); }) == "--bins: at least one bound is needed");
  CHECK(usage_of(c, [](auto& b) { b.bins = {0, 128}; }) == "--bins: '0' is not a positive integer");
  CHECK(usage_of(c, [](auto& b) { b.bins = {256, 128}; }) == "--bins: bounds must increase, but 128 follows 256");
  CHECK(usage_of(c, [](auto& b) { b.layout = "generic"; }) == "--layout must be nvidia or varlength, got 'generic'");
  // An explicit level or slot count is checked; none given means the layout's or the inputs'.
  CHECK(usage_of(c, [](auto& b) { b.gzip_level = 0; }) == "accepted");
  CHECK(usage_of(c, [](auto& b) { b.gzip_level = 10; }) == "--gzip must be in [0, 9], got 10");
  CHECK(usage_of(c, [](auto& b) { b.gzip_level = -1; }) == "--gzip must be in [0, 9], got -1");
  CHECK(usage_of(c, [](auto& b) { b.max_predictions = 0; }) == "--max-predictions must be positive, got 0");
  CHECK(usage_of(c, [](auto& b) { b.shards_per_bin = 0; }) == "--shards-per-bin must be positive, got 0");
  CHECK(usage_of(c, [](auto& b) { b.inputs.clear(); }) == "no input files");
}
