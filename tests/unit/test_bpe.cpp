// Byte-level BPE: the byte alphabet, the split patterns, the merge rule, the trainer on a corpus small enough to
// follow by hand, and the refusals of damaged tokenizer files. tests/compat/test_bpe.py holds the comparison
// with HF tokenizers on real text.
#include <doctest/doctest.h>

#include "../error_of.h"
#include "../scratch_dir.h"
#include "ckpt/checkpoint_path.h"
#include "squad/squad_features.h"
#include "tok/bpe_trainer.h"
#include "tok/byte_level.h"
#include "tok/split_pattern.h"
#include "tok/text_tokenizer.h"
#include "tok/tokenizer_json.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <string>
#include <vector>

using Strings = std::vector<std::string>;
using bk_test::error_of;

namespace {

Strings split(bk::SplitPattern pattern, std::string_view text) {
  std::vector<std::string_view> pieces;
  bk::split_by_pattern(pattern, text, pieces);
  return Strings(pieces.begin(), pieces.end());
}

// A tokenizer.json with the whole byte alphabet and the given extra tokens and merges ("a b").
std::string tokenizer_json(const Strings& extra, const Strings& merges, const std::string& more = "") {
  Strings tokens;
  for (int b = 0; b < 256; ++b) {
    tokens.emplace_back();
    bk::append_byte_level(tokens.back(), std::string(1, static_cast<char>(b)));
  }
  tokens.insert(tokens.end(), extra.begin(), extra.end());
  nlohmann::json model = {{"type", "BPE"}, {"merges", merges}};
  for (size_t id = 0; id < tokens.size(); ++id) model["vocab"][tokens[id]] = id;
  std::string text = "{\"pre_tokenizer\":{\"type\":\"ByteLevel\",\"add_prefix_space\":false},";
  text.append(more);
  text.append("\"model\":");
  text.append(model.dump());
  text.append("}");
  return text;
}

std::string write(const bk_test::ScratchDir& dir, const std::string& text) {
  const std::string path = dir / "tokenizer.json";
  std::ofstream(path) << text;
  return path;
}

Strings encode(const bk::BpeTokenizerSpec& spec, std::string_view line) {
  bk::BpeTokenizer tokenizer(spec);
  std::vector<int32_t> ids;
  tokenizer.encode(line, ids);
  Strings out;
  for (int32_t id : ids) out.emplace_back(*spec.token(id));
  return out;
}

}  // namespace

TEST_CASE("byte level: GPT-2's table, its inverse, and lossy UTF-8") {
  CHECK(bk::byte_level_char(' ') == U'\u0120');
  CHECK(bk::byte_level_char('\n') == U'\u010A');
  CHECK(bk::byte_level_char('A') == U'A');
  CHECK(bk::byte_level_char(0xAD) == U'\u0143');  // the soft hyphen is not printable: the 68th remapped byte
  for (int b = 0; b < 256; ++b) CHECK(bk::byte_level_byte(bk::byte_level_char(static_cast<uint8_t>(b))) == b);
  std::string bytes;
  CHECK(bk::append_bytes_of_byte_level(bytes, "\xC4\xA0hi"));  // "Ġhi"
  CHECK(bytes == " hi");
  CHECK_FALSE(bk::append_bytes_of_byte_level(bytes, "\xE2\x82\xAC"));  // '€' is not in the alphabet
  CHECK(bytes == " hi");
  std::string text;
  bk::append_utf8_lossy(text, "a\xE2\x82" "b\xF0\x9F\x98\x80\xFF\xC0\xAF");
  CHECK(text == "a\xEF\xBF\xBD" "b\xF0\x9F\x98\x80\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // as Python's "replace"
}

TEST_CASE("split patterns: Oniguruma's pieces for GPT-2's and the cl100k pattern") {
  using bk::SplitPattern;
  CHECK(split(SplitPattern::gpt2, "Hello world's  end  ") == Strings{"Hello", " world", "'s", " ", " end", "  "});
  CHECK(split(SplitPattern::gpt2, "a\t\tb 12,3!") == Strings{"a", "\t", "\t", "b", " 12", ",", "3", "!"});
  CHECK(split(SplitPattern::gpt2, "x \xC2\xA0y") == Strings{"x", " ", "\xC2\xA0", "y"});  // NBSP is \s, not ' '
  CHECK(split(SplitPattern::cl100k, "I'M 12345 (hello)\n\nok") ==
        Strings{"I", "'M", " ", "123", "45", " (", "hello", ")\n\n", "ok"});
  CHECK(split(SplitPattern::cl100k, "a  \n b") == Strings{"a", "  \n", " b"});
  CHECK(bk::recognize_split_pattern(bk::split_pattern_regex(SplitPattern::cl100k)) == SplitPattern::cl100k);
  CHECK_FALSE(bk::recognize_split_pattern("\\s+"));
}

TEST_CASE("bpe model: the lowest rank merges first, the leftmost among equals") {
  bk_test::ScratchDir dir;
  // "aaa": (a a) merges at the left first, leaving "aa a"; "abc" with (b c) ranked before (a b) gives "a bc".
  const auto spec = bk::load_bpe_tokenizer(write(dir, tokenizer_json({"aa", "bc", "ab", "abc"}, {"a a", "b c", "a b", "a bc"})));
  CHECK(encode(spec, "aaa") == Strings{"aa", "a"});
  CHECK(encode(spec, "abc") == Strings{"abc"});
  CHECK(encode(spec, "ab c") == Strings{"ab", "\xC4\xA0", "c"});
}

TEST_CASE("bpe train: merges by count, then the smaller pair, special tokens and the 256 bytes first") {
  bk::BpeTrainerConfig config;
  config.vocab_size = 5 + 256 + 3;
  config.min_frequency = 1;
  // pairs: (l o) x3+2, (o w) x3+2, (w e) x2, (e r) x2 ... "lo" and "ow" tie at 5: (l, o) has the smaller ids
  const bk::WordCounts words = {{"low", 3}, {"lower", 2}};
  const auto spec = bk::train_bpe(words, config);
  REQUIRE(spec.model->merge_count() == 3);
  Strings merged;
  for (auto [a, b] : spec.model->merges()) merged.push_back(spec.model->token(a) + " " + spec.model->token(b));
  CHECK(merged == Strings{"l o", "lo w", "e r"});
  CHECK(spec.model->token(0) == "<s>");
  CHECK(spec.model->token(5) == "!");  // the alphabet in code-point order: '!' (0x21) first
  CHECK(spec.post.apply({7}) == std::vector<int32_t>{0, 7, 2});  // RoBERTa's <s> A </s>
}

TEST_CASE("tokenizer.json: damaged or unsupported files are refused in one line naming the entry") {
  bk_test::ScratchDir dir;
  const auto error = [&](const std::string& text) { return error_of([&] { bk::load_bpe_tokenizer(write(dir, text)); }); };
  CHECK(error(tokenizer_json({}, {"\u20AC y"})).find("merge 0 ('\u20AC' 'y'): '\u20AC' is not in the vocabulary") != std::string::npos);
  CHECK(error(tokenizer_json({"ab"}, {"a b", "a b"})).find("merge 1 ('a' 'b') repeats merge 0") != std::string::npos);
  CHECK(error(tokenizer_json({}, {"a b"})).find("the merged token is not in the vocabulary") != std::string::npos);
  CHECK(error("{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":4000000000},\"merges\":[]},\"pre_tokenizer\":{\"type\":\"ByteLevel\"}}")
            .find("model.vocab['a']: id 4000000000 is out of range (the 1 ids must be 0..0, each once)") != std::string::npos);
  CHECK(error(tokenizer_json({}, {}, "\"normalizer\":{\"type\":\"Lowercase\"},"))
            .find("normalizer: the Lowercase normalizer is not supported") != std::string::npos);
  CHECK(error(tokenizer_json({}, {}, "\"pre_tokenizer\":{\"type\":\"Metaspace\"},"))
            .find("the Metaspace pre-tokenizer is not supported") != std::string::npos);
  CHECK(error(tokenizer_json({}, {}, "\"pre_tokenizer\":{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Split\","
                                     "\"pattern\":{\"Regex\":\"\\\\d+\"},\"behavior\":\"Isolated\"},{\"type\":\"ByteLevel\"}]},"))
            .find("pre_tokenizer.pretokenizers[0].pattern.Regex: '\\\\d+' is not supported") != std::string::npos);
  CHECK(error(tokenizer_json({}, {}, "\"added_tokens\":[{\"id\":36,\"content\":\"<s>\"}],"))
            .find("added_tokens[0]: id 36 is '$' in model.vocab, not '<s>'") != std::string::npos);
  CHECK(error("{\"model\":{\"type\":\"WordPiece\"}}").find("model.type: 'WordPiece' is not supported") != std::string::npos);
  CHECK(error("{\"model\": \"\xFF\"}").find("tokenizer.json: ") != std::string::npos);  // invalid UTF-8
}

TEST_CASE("text tokenizer: a BPE file's roles, word starts and stamp") {
  bk_test::ScratchDir dir;
  const std::string added =
      "\"added_tokens\":[{\"id\":256,\"content\":\"<s>\",\"special\":true},{\"id\":257,\"content\":\"</s>\",\"special\":true},"
      "{\"id\":258,\"content\":\"<mask>\",\"lstrip\":true,\"special\":true}],"
      "\"post_processor\":{\"type\":\"RobertaProcessing\",\"cls\":[\"<s>\",256],\"sep\":[\"</s>\",257]},";
  const std::string path = write(dir, tokenizer_json({"<s>", "</s>", "<mask>", "\xC4\xA0" "a", "ab"}, {"\xC4\xA0 a", "a b"}, added));
  const bk::TextTokenizer t = bk::TextTokenizer::load(path, true);
  CHECK(t.byte_level());
  CHECK(t.specials().cls == 256);
  CHECK(t.specials().sep == 257);
  CHECK(t.specials().mask == 258);
  CHECK_FALSE(t.continues_word(t.id_of("\xC4\xA0" "a")));  // "Ġa" starts a word
  CHECK(t.continues_word(t.id_of("ab")));
  CHECK_FALSE(t.continues_word(256));  // special tokens never continue one
  const bk::VocabStamp stamp = t.stamp();
  CHECK(stamp.text().ends_with(":261:bpe"));
  CHECK(bk::parse_vocab_stamp(stamp.text())->byte_level);
  // Another merge order tokenizes differently: another stamp.
  const std::string other = dir / "other.json";
  std::ofstream(other) << tokenizer_json({"<s>", "</s>", "<mask>", "\xC4\xA0" "a", "ab"}, {"a b", "\xC4\xA0 a"}, added);
  CHECK_FALSE(bk::TextTokenizer::load(other, true).stamp().same_tokens(stamp));
  std::vector<int32_t> ids;
  bk::TextTokenizer::Encoder encoder = t.encoder();
  encoder.encode("ab <mask>", ids);
  CHECK(ids == std::vector<int32_t>{t.id_of("ab"), 258});  // <mask> takes the space before it (lstrip)
}

TEST_CASE("tokenizer.json: a pre-tokenizer sequence must end in ByteLevel; a structured vocabulary value is refused") {
  bk_test::ScratchDir dir;
  const auto error = [&](const std::string& text) { return error_of([&] { bk::load_bpe_tokenizer(write(dir, text)); }); };
  CHECK(error(tokenizer_json({}, {}, "\"pre_tokenizer\":{\"type\":\"Sequence\",\"pretokenizers\":[]},"))
            .find("pre_tokenizer.pretokenizers: expected a list ending with ByteLevel") != std::string::npos);
  CHECK(error("{\"pre_tokenizer\":{\"type\":\"ByteLevel\"},\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0,\"b\":{}},\"merges\":[]}}")
            .find("model.vocab['b']: expected an integer id") != std::string::npos);
  CHECK(error(tokenizer_json({}, {}, "\"normalizer\":{\"type\":\"Sequence\",\"normalizers\":5},"))
            .find("normalizer.normalizers: expected a list") != std::string::npos);
}

TEST_CASE("the tokenizer beside a checkpoint: vocab.txt, else a byte-level tokenizer.json, never a WordPiece one") {
  bk_test::ScratchDir dir;
  std::ofstream(dir / "tokenizer.json") << "{\"model\":{\"type\":\"WordPiece\",\"vocab\":{\"[UNK]\":0}},\"pre_tokenizer\":null}";
  CHECK(bk::vocab_beside_checkpoint(dir.path.string()).empty());  // an HF BERT directory's, which bpe cannot read
  write(dir, tokenizer_json({}, {}));
  CHECK(bk::vocab_beside_checkpoint(dir.path.string()) == dir / "tokenizer.json");
  std::ofstream(dir / "vocab.txt") << "[UNK]\n";
  CHECK(bk::vocab_beside_checkpoint(dir.path.string()) == dir / "vocab.txt");
}

TEST_CASE("bpe spans: each id's bytes in the line, through added tokens, a prefix space and NFC") {
  bk_test::ScratchDir dir;
  const std::string added =
      "\"added_tokens\":[{\"id\":259,\"content\":\"<mask>\",\"lstrip\":true,\"special\":true}],"
      "\"normalizer\":{\"type\":\"NFC\"},";
  std::string text = tokenizer_json({"\xC4\xA0" "a", "ab", "\xC4\xA0" "ab", "<mask>"},
                                    {"\xC4\xA0 a", "a b", "\xC4\xA0" "a b"}, added);
  text.replace(text.find("\"add_prefix_space\":false"), 24, "\"add_prefix_space\":true");
  const auto spec = bk::load_bpe_tokenizer(write(dir, text));
  bk::BpeTokenizer tokenizer(spec);
  // "e" + U+0301 becomes one code point (U+00E9, two bytes from three) under NFC.
  const std::string line = "ab e\xCC\x81x <mask>abc";
  std::vector<int32_t> ids, plain;
  std::vector<bk::ByteSpan> spans;
  tokenizer.append_with_spans(line, ids, spans);
  tokenizer.encode(line, plain);
  CHECK(ids == plain);  // the same ids as encode
  REQUIRE(spans.size() == ids.size());
  std::vector<std::string> pieces;
  for (const bk::ByteSpan& s : spans) pieces.push_back(line.substr(s.begin, s.end - s.begin));
  // "ab" (its added space is in no byte), " e\u0301" as one stretch through NFC's chunk, "x", " <mask>", "ab", "c".
  CHECK(pieces == Strings{"ab", " ", "e\xCC\x81", "e\xCC\x81", "x", " <mask>", "ab", "c"});
}

TEST_CASE("squad features with a BPE tokenizer: the template around the question, answers by bytes") {
  bk_test::ScratchDir dir;
  const std::string added =
      "\"added_tokens\":[{\"id\":256,\"content\":\"<s>\",\"special\":true},{\"id\":257,\"content\":\"</s>\",\"special\":true}],"
      "\"post_processor\":{\"type\":\"RobertaProcessing\",\"cls\":[\"<s>\",256],\"sep\":[\"</s>\",257]},";
  const std::string path = write(dir, tokenizer_json({"<s>", "</s>", "\xC4\xA0" "P", "\xC4\xA0" "Pa"}, {"\xC4\xA0 P", "\xC4\xA0" "P a"}, added));
  const bk::TextTokenizer tokenizer = bk::TextTokenizer::load(path, true);
  const std::string json = R"j({"data":[{"paragraphs":[{"context":"In  Paris, (Pa) \u00e9","qas":[)j"
                           R"j({"id":"q","question":"  Where?","answers":[{"text":"Paris","answer_start":4}]}]}]}]})j";
  const bk::SquadExamples examples = bk::parse_squad_examples(json, "t.json", {true, false});
  bk::SquadFeatureOptions options;
  options.is_training = true;
  const bk::SquadFeatures features = bk::SquadFeatures::convert(examples, tokenizer, options);
  REQUIRE(features.features().size() == 1);
  const bk::SquadFeature& f = features.features()[0];
  std::vector<int32_t> ids;
  features.input_ids(f, ids);
  // <s> "Where?" (its leading spaces dropped, 6 bytes) </s></s> the context's pieces </s>
  CHECK(ids.front() == 256);
  CHECK(ids[7] == 257);
  CHECK(ids[8] == 257);
  CHECK(ids.back() == 257);
  CHECK(features.doc_offset(f) == 9);
  CHECK(features.context_text(examples, f, f.start_position, f.end_position) == "Paris");
  CHECK(features.token_to_orig(f, f.start_position) == 1);  // the document token "Paris,"
  // "é" is two byte pieces (no merge makes it one): either alone gives the whole character, never half of it.
  const auto last = static_cast<int32_t>(ids.size()) - 2;
  CHECK(features.context_text(examples, f, last, last) == "\xC3\xA9");
  CHECK(features.context_text(examples, f, last - 1, last - 1) == "\xC3\xA9");
}
