#include <doctest/doctest.h>

#include "../error_of.h"
#include "tok/vocab.h"
#include "tok/vocab_stamp.h"

#include <string>

using namespace bk;
using bk_test::error_of;

TEST_CASE("vocab stamp: FNV-1a over the tokens, each followed by a newline") {
  // The reference value: Python, h = 0xcbf29ce484222325; for b in b"[PAD]\n[UNK]\nab\n": h = (h ^ b) * 0x100000001b3 % 2**64
  const VocabStamp stamp = vocab_stamp(Vocab::from_tokens({"[PAD]", "[UNK]", "ab"}), true);
  CHECK(stamp.text() == "fnv1a64:6a27c61b2109f5e7:3:uncased");
  CHECK(stamp.describe() == "3 tokens, uncased, fnv1a64 6a27c61b2109f5e7");
  const VocabStamp cased = vocab_stamp(Vocab::from_tokens({"[PAD]", "[UNK]", "ab"}), false);
  CHECK(cased.same_tokens(stamp));
  CHECK(cased.text().ends_with(":cased"));
  // The order of the tokens is the ids' meaning: the same tokens in another order are another vocabulary.
  CHECK_FALSE(vocab_stamp(Vocab::from_tokens({"[UNK]", "[PAD]", "ab"}), true).same_tokens(stamp));
}

TEST_CASE("vocab stamp: text round-trips; anything else is not a stamp") {
  const VocabStamp stamp{0x0123456789abcdefull, 30522, false};
  const auto parsed = parse_vocab_stamp(stamp.text());
  REQUIRE(parsed);
  CHECK(parsed->hash == stamp.hash);
  CHECK(parsed->size == 30522);
  CHECK_FALSE(parsed->lower_case);
  for (const char* bad : {"", "fnv1a64", "fnv1a64:0123456789abcdef:30522", "sha1:0123456789abcdef:30522:uncased",
                          "fnv1a64:0123456789abcde:30522:uncased", "fnv1a64:0123456789abcdeg:30522:uncased",
                          "fnv1a64:0123456789abcdef:-1:uncased", "fnv1a64:0123456789abcdef:30522:lower",
                          "fnv1a64:0123456789abcdef:30522:uncased:x"})
    CHECK_MESSAGE(!parse_vocab_stamp(bad), bad);
}

TEST_CASE("vocab stamp: a mismatch is one line naming both sides; allowed, it is a warning") {
  const StampedVocab a{{1, 10, true}, "data.h5"}, b{{2, 10, true}, "vocab.txt"}, c{{1, 10, false}, "cased.h5"};
  CHECK(error_of([&] { check_same_vocabulary(a, b, false, false); }) ==
        "data.h5 (10 tokens, uncased, fnv1a64 0000000000000001) and vocab.txt (10 tokens, uncased, fnv1a64 "
        "0000000000000002) are of different vocabularies: use the vocabulary and casing they were made with, or "
        "--allow-vocab-mismatch to go ahead");
  CHECK(error_of([&] { check_same_vocabulary(a, c, true, false); }) ==
        "data.h5 is uncased but cased.h5 is cased: use the vocabulary and casing they were made with, or "
        "--allow-vocab-mismatch to go ahead");
  CHECK(error_of([&] { check_same_vocabulary(a, c, false, false); }).empty());
  CHECK(error_of([&] { check_same_vocabulary(a, b, false, true); }).empty());
}
