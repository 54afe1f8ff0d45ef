// WordPiece tokenizer: one case per rule of google-research/bert's tokenization.py (DESIGN.md section 5).
// Expected values follow from those rules and were checked by running the reference tokenization.py
// (bert-tensorflow, BasicTokenizer / WordpieceTokenizer / FullTokenizer) on the same strings.
#include <doctest/doctest.h>

#include "util/error.h"
#include "tok/basic_tokenizer.h"
#include "tok/full_tokenizer.h"
#include "tok/vocab.h"
#include "tok/wordpiece_matcher.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using Strings = std::vector<std::string>;
using Cps = std::initializer_list<char32_t>;

namespace {

Strings basic(std::string_view text, bool lower_case) {
  bk::BasicTokenizer tokenizer(lower_case);
  bk::LineWords words;
  tokenizer.tokenize(text, words);
  Strings out;
  for (size_t i = 0; i < words.size(); ++i) out.emplace_back(words[i]);
  return out;
}

Strings pieces(const bk::Vocab& vocab, std::string_view word) {
  bk::WordPieceMatcher matcher(vocab);
  std::vector<int32_t> ids;
  matcher.encode_word(word, ids);
  Strings out;
  for (int32_t id : ids) out.emplace_back(vocab.token(id));
  return out;
}

fs::path write_temp(const std::string& name, const std::string& bytes) {
  auto path = fs::temp_directory_path() / ("bertkit-tok-" + std::to_string(::getpid()) + "-" + name);
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

}  // namespace

TEST_CASE("vocab: line numbers are ids, lines are stripped, the last repeat wins, no final newline needed") {
  auto path = write_temp("vocab.txt", "[PAD]\n[UNK]\n  spaced \t\nhello\nhello\r\n\xc2\xa0nbsp\xe3\x80\x80\nlast");
  auto vocab = bk::Vocab::load(path.string());
  CHECK(vocab.size() == 7);
  CHECK(vocab.token(2) == "spaced");
  CHECK(vocab.find("spaced") == 2);
  CHECK(vocab.find("hello") == 4);  // load_vocab at HEAD: vocab[token] = index, so the later line wins
  CHECK(vocab.find("nbsp") == 5);   // str.strip() also removes U+00A0 and U+3000
  CHECK(vocab.find("last") == 6);
  CHECK(vocab.find("missing") == bk::Vocab::kNotFound);
  CHECK(vocab.require_unk() == 1);
  fs::remove(path);
}

TEST_CASE("vocab: errors name the file") {
  auto path = write_temp("nounk.txt", "[PAD]\nhello\n");
  auto vocab = bk::Vocab::load(path.string());
  try {
    vocab.require_unk();
    FAIL("no error for a vocabulary without [UNK]");
  } catch (const bk::Error& e) {
    CHECK(std::string(e.what()).find(path.string()) != std::string::npos);
    CHECK(std::string(e.what()).find("[UNK]") != std::string::npos);
  }
  CHECK_THROWS_AS(bk::WordPieceMatcher{vocab}, bk::Error);
  fs::remove(path);
  CHECK_THROWS_AS(bk::Vocab::load(path.string()), bk::Error);
  auto bad = write_temp("bad.txt", "[UNK]\nok\nbad\xff\n");
  try {
    bk::Vocab::load(bad.string());
    FAIL("no error for invalid UTF-8");
  } catch (const bk::Error& e) {
    CHECK(std::string(e.what()).find("line 3") != std::string::npos);
  }
  fs::remove(bad);
}

TEST_CASE("vocab: continuation lookup does not need the ## string") {
  auto vocab = bk::Vocab::from_tokens({"[UNK]", "##", "##ing", "ing", "##"});
  CHECK(vocab.find_continuation("ing") == 2);
  CHECK(vocab.find("ing") == 3);
  CHECK(vocab.find("##") == 4);
  CHECK(vocab.find_continuation("") == bk::Vocab::kNotFound);
  CHECK(vocab.max_continuation_bytes() == 3);
}

TEST_CASE("python whitespace: str.isspace and str.strip") {
  using bk::is_python_space;
  for (char32_t cp : Cps{0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x1C, 0x1F, 0x20, 0x85, 0xA0, 0x1680, 0x2000, 0x200A, 0x2028,
                      0x2029, 0x202F, 0x205F, 0x3000})
    CHECK(is_python_space(cp));
  for (char32_t cp : Cps{0x08, 0x0E, 0x200B, 0x180E, 0xFEFF, 0x41}) CHECK_FALSE(is_python_space(cp));
  CHECK(bk::python_strip("\xe2\x80\xa8 a b\xc2\x85\t") == "a b");
  CHECK(bk::python_strip(" \t ").empty());
}

TEST_CASE("character classes of the clean, Chinese and punctuation rules") {
  using namespace bk;
  for (char32_t cp : Cps{0x4E00, 0x9FFF, 0x3400, 0x4DBF, 0x20000, 0x2A6DF, 0x2A700, 0x2B73F, 0x2B740, 0x2B81F, 0x2B820,
                      0x2CEAF, 0xF900, 0xFAFF, 0x2F800, 0x2FA1F})
    CHECK(is_chinese_char(cp));
  for (char32_t cp : Cps{0x3007, 0x3002, 0x30AB, 0xAC00, 0x2A6E0, 0x2CEB0, 0x31350, 0x4DC0}) CHECK_FALSE(is_chinese_char(cp));
  for (char32_t cp : Cps{'!', '/', ':', '@', '[', '`', '{', '~', '$', '^', '+', 0xBF, 0xA7, 0x2014, 0x3002, 0xFF01, 0x300C})
    CHECK(is_bert_punctuation(cp));
  for (char32_t cp : Cps{'a', '0', ' ', 0x20AC, 0xA9, 0x00B2, 0x2460}) CHECK_FALSE(is_bert_punctuation(cp));
  for (char32_t cp : Cps{0x00, 0x01, 0x1F, 0x7F, 0x85, 0x9F, 0xAD, 0x200B, 0x200D, 0xFEFF, 0xFFFD, 0xE0061})
    CHECK(is_bert_control(cp));
  for (char32_t cp : Cps{'\t', '\n', '\r', ' ', 0xE000, 0x0301, 0xFFFE}) CHECK_FALSE(is_bert_control(cp));
  for (char32_t cp : Cps{' ', '\t', '\n', '\r', 0xA0, 0x1680, 0x2000, 0x3000, 0x202F, 0x2028, 0x2029})
    CHECK(is_bert_whitespace(cp));
  for (char32_t cp : Cps{0x85, 0x1C, 0x200B, 0x180E}) CHECK_FALSE(is_bert_whitespace(cp));
}

TEST_CASE("basic tokenizer: ASCII lower-casing and punctuation") {
  CHECK(basic("Hello, World!", true) == Strings{"hello", ",", "world", "!"});
  CHECK(basic("Hello, World!", false) == Strings{"Hello", ",", "World", "!"});
  CHECK(basic("$5^x`y", true) == Strings{"$", "5", "^", "x", "`", "y"});
  CHECK(basic("  \t ", true).empty());
  CHECK(basic("", true).empty());
}

TEST_CASE("basic tokenizer: a line is read to its end and no further, whatever follows it in memory") {
  // Word runs of whole 16-byte blocks ending exactly at the end of the line (the vector path), each a view
  // into a buffer whose next bytes are letters: the words must not run on into them.
  const std::string buffer = "Immunodeficiency" "Immunology" "abcdefghijklmnopqrstuvwxyz012345" "tail";
  CHECK(basic(std::string_view(buffer).substr(0, 16), false) == Strings{"Immunodeficiency"});
  CHECK(basic(std::string_view(buffer).substr(0, 16), true) == Strings{"immunodeficiency"});
  CHECK(basic(std::string_view(buffer).substr(26, 32), true) == Strings{"abcdefghijklmnopqrstuvwxyz012345"});
  CHECK(basic(std::string_view(buffer).substr(10, 16), true) == Strings{"ciencyimmunology"});
}

TEST_CASE("basic tokenizer: clean step drops NUL, U+FFFD, controls and format characters") {
  using namespace std::literals;
  CHECK(basic("a\0b\xef\xbf\xbd" "c\x7f" "d"sv, true) == Strings{"abcd"});
  CHECK(basic("a\xe2\x80\x8b" "b soft\xc2\xad" "hyphen"sv, false) == Strings{"ab", "softhyphen"});  // U+200B, U+00AD
  CHECK(basic("x\xc2\x85y\x1c" "z", true) == Strings{"xyz"});  // NEL and FS are Cc: dropped before splitting
}

TEST_CASE("basic tokenizer: whitespace is ASCII space, Zs, U+2028 and U+2029") {
  CHECK(basic("a\xc2\xa0" "b\xe3\x80\x80" "c\xe2\x80\xa8" "d\xe2\x80\xa9" "e\te", true) ==
        Strings{"a", "b", "c", "d", "e", "e"});
}

TEST_CASE("basic tokenizer: Chinese characters become words, other CJK does not") {
  // "中文abc中"
  CHECK(basic("\xe4\xb8\xad\xe6\x96\x87" "abc\xe4\xb8\xad", true) ==
        Strings{"\xe4\xb8\xad", "\xe6\x96\x87", "abc", "\xe4\xb8\xad"});
  // Katakana "カタ" stays one word; U+20000 (extension B) is split out
  CHECK(basic("\xe3\x82\xab\xe3\x82\xbf\xf0\xa0\x80\x80x", false) ==
        Strings{"\xe3\x82\xab\xe3\x82\xbf", "\xf0\xa0\x80\x80", "x"});
  // U+F900 is a compatibility ideograph: NFD (uncased only) maps it to U+8C48
  CHECK(basic("\xef\xa4\x80", true) == Strings{"\xe8\xb1\x88"});
  CHECK(basic("\xef\xa4\x80", false) == Strings{"\xef\xa4\x80"});
}

TEST_CASE("basic tokenizer: uncased is str.lower() per whitespace token, then NFD without Mn") {
  CHECK(basic("na\xc3\xafve caf\xc3\xa9", true) == Strings{"naive", "cafe"});
  CHECK(basic("na\xc3\xafve caf\xc3\xa9", false) == Strings{"na\xc3\xafve", "caf\xc3\xa9"});
  // Final sigma: "ΟΔΟΣ" -> "οδος" (ς at the end of a word)
  CHECK(basic("\xce\x9f\xce\x94\xce\x9f\xce\xa3", true) == Strings{"\xce\xbf\xce\xb4\xce\xbf\xcf\x82"});
  // "ΑΣ.Α": the case-ignorable '.' is skipped and a cased letter follows, so σ, not ς; then '.' is split off
  CHECK(basic("\xce\x91\xce\xa3.\xce\x91", true) == Strings{"\xce\xb1\xcf\x83", ".", "\xce\xb1"});
  // "ΑΣ" + U+0301: the accent is case-ignorable, so final ς, and the accent is stripped afterwards
  CHECK(basic("\xce\x91\xce\xa3\xcc\x81", true) == Strings{"\xce\xb1\xcf\x82"});
  // U+0130 lowercases to "i" + U+0307, and NFD/Mn removal leaves "i"
  CHECK(basic("\xc4\xb0stanbul", true) == Strings{"istanbul"});
  // ß has no single-letter lower-case change; ǅ (U+01C5, title case) lowercases to ǆ (U+01C6)
  CHECK(basic("Stra\xc3\x9f" "e \xc7\x85", true) == Strings{"stra\xc3\x9f" "e", "\xc7\x86"});
  // the ligature ﬁ (U+FB01) has only a compatibility decomposition: NFD keeps it
  CHECK(basic("\xef\xac\x81", true) == Strings{"\xef\xac\x81"});
  // Hangul syllable 한 (U+D55C) decomposes to jamo U+1112 U+1161 U+11AB (Lo, not Mn)
  CHECK(basic("\xed\x95\x9c", true) == Strings{"\xe1\x84\x92\xe1\x85\xa1\xe1\x86\xab"});
  // a combining mark after punctuation: dropped when uncased, its own word when cased
  CHECK(basic(".\xcc\x81", true) == Strings{"."});
  CHECK(basic(".\xcc\x81", false) == Strings{".", "\xcc\x81"});
  // ¿Qué? : inverted question mark (Po) is punctuation, the accent goes
  CHECK(basic("\xc2\xbfQu\xc3\xa9?", true) == Strings{"\xc2\xbf", "que", "?"});
  // € (Sc) is not punctuation
  CHECK(basic("\xe2\x82\xac" "100", true) == Strings{"\xe2\x82\xac" "100"});
}

TEST_CASE("wordpiece: greedy longest match first with ## continuations") {
  auto vocab = bk::Vocab::from_tokens({"[UNK]", "un", "##aff", "##able", "a", "##b"});
  CHECK(pieces(vocab, "unaffable") == Strings{"un", "##aff", "##able"});
  CHECK(pieces(vocab, "unaffablex") == Strings{"[UNK]"});  // one uncovered piece makes the whole word [UNK]
  CHECK(pieces(vocab, "abb") == Strings{"a", "##b", "##b"});
  auto longest = bk::Vocab::from_tokens({"[UNK]", "ab", "abc", "##d", "##cd", "a"});
  CHECK(pieces(longest, "abcd") == Strings{"abc", "##d"});
}

TEST_CASE("wordpiece: more than 200 code points is [UNK], 200 is not") {
  auto vocab = bk::Vocab::from_tokens({"[UNK]", "a", "##a", "\xc3\xa9", "##\xc3\xa9"});
  CHECK(pieces(vocab, std::string(200, 'a')).size() == 200);
  CHECK(pieces(vocab, std::string(201, 'a')) == Strings{"[UNK]"});
  std::string e200, e201;
  for (int i = 0; i < 200; ++i) e200 += "\xc3\xa9";
  e201 = e200 + "\xc3\xa9";
  CHECK(pieces(vocab, e200).size() == 200);  // 400 bytes, but 200 characters
  CHECK(pieces(vocab, e201) == Strings{"[UNK]"});
}

TEST_CASE("full tokenizer on the real uncased vocabulary") {
  auto path = fs::path(BERTKIT_FIXTURES) / "vocab/bert-base-uncased-vocab.txt";
  if (!fs::exists(path)) return;  // fixtures are optional for the unit tests
  auto vocab = bk::Vocab::load(path.string());
  bk::FullTokenizer tokenizer(vocab, true);
  std::vector<int32_t> ids;
  tokenizer.encode("Hello, World!", ids);
  CHECK(ids == std::vector<int32_t>{7592, 1010, 2088, 999});
  CHECK(tokenizer.tokenize("unaffable") == Strings{"una", "##ffa", "##ble"});
  CHECK(tokenizer.tokenize("The quick brown fox jumped.") ==
        Strings{"the", "quick", "brown", "fox", "jumped", "."});
}

TEST_CASE("word memo: a line encodes the same the first time, the second time, and after the memo starts over") {
  // Words that are not vocabulary entries (so they go through the memo), more distinct ones than it holds.
  auto vocab = bk::Vocab::from_tokens({"[UNK]", "x", "y", "z", "##x", "##y", "##z", "xy", "##zz"});
  bk::WordPieceMatcher matcher(vocab);
  bk::FullTokenizer tokenizer(vocab, true);
  std::vector<int32_t> expected, got;
  for (int round = 0; round < 2; ++round)
    for (uint32_t n = 0; n < 140000; n += 3) {  // 46,667 distinct words: more than the memo keeps
      std::string word;
      for (uint32_t v = n + 1; v > 0; v /= 3) word += "xyz"[v % 3];
      if (n % 5 == 0) word += "q";  // uncoverable: [UNK]
      expected.clear();
      matcher.encode_word(word, expected);
      tokenizer.encode(word, got);
      REQUIRE(got == expected);
    }
}

TEST_CASE("vocab: distinct_ids is Python's list(vocab.keys()) for load_vocab's dict") {
  // Each token once, in the order of its first line, with the id of its last line.
  auto vocab = bk::Vocab::from_tokens({"a", "b", "a", "c", "b", "d"});
  CHECK(vocab.distinct_ids() == std::vector<int32_t>{2, 4, 3, 5});
  auto plain = bk::Vocab::from_tokens({"[UNK]", "x", "y"});
  CHECK(plain.distinct_ids() == std::vector<int32_t>{0, 1, 2});
}
