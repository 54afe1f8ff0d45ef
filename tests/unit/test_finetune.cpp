// The fine-tuning features' pieces (finetune/), each against values worked out by hand from google-research/bert's
// run_squad.py and run_classifier.py (the functions they mirror are named in each case). The identity of whole
// files with the reference scripts is proved by tests/compat/test_finetune_features.py.
#include <doctest/doctest.h>

#include "../error_of.h"
#include "tfrecord/example.h"
#include "glue/glue_features.h"
#include "glue/glue_tasks.h"
#include "squad/squad_examples.h"
#include "squad/squad_features.h"
#include "tok/full_tokenizer.h"
#include "tok/text_tokenizer.h"
#include "tok/vocab.h"
#include "util/error.h"

#include <string>
#include <vector>

using bk_test::error_of;
using Ids = std::vector<int32_t>;
using Strings = std::vector<std::string>;

namespace {

// ids:                               0        1        2        3        4      5         6      7       8
const Strings kTokens = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "leader", "was", "john", "smith",
                         //  9    10      11   12      13   14   15       16       17           18     19
                         "(", "1895", "-", "1943", ")", ".", "japan", "##ese", "electronics", "who", "?"};

Strings words(const bk::SquadDocument& doc) {
  Strings out;
  for (size_t i = 0; i < doc.size(); ++i) out.emplace_back(doc[i]);
  return out;
}

}  // namespace

TEST_CASE("squad document: split on space, tab, CR, LF and U+202F only; each code point mapped to its word") {
  bk::SquadDocument doc;
  std::vector<int32_t> offsets;
  // "  The<NBSP>cat<TAB>sat<U+202F>on  mat. " : NBSP is not SQuAD whitespace, U+202F is.
  bk::split_squad_document("  The\xc2\xa0" "cat\tsat\xe2\x80\xafon  mat. ", doc, offsets);
  CHECK(words(doc) == Strings{"The\xc2\xa0" "cat", "sat", "on", "mat."});
  CHECK(offsets == std::vector<int32_t>{-1, -1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3});
  bk::split_squad_document("\r\n", doc, offsets);
  CHECK(doc.size() == 0);
  CHECK(offsets == std::vector<int32_t>{-1, -1});
  CHECK(bk::is_squad_whitespace(0x202F));
  CHECK_FALSE(bk::is_squad_whitespace(0xA0));
  CHECK_FALSE(bk::is_squad_whitespace(0x2003));
}

TEST_CASE("whitespace_tokenize joined: Python's str.split() whitespace, single spaces") {
  CHECK(bk::join_python_words(" a\xc2\xa0" "b \xe2\x80\x83" "c\n") == "a b c");
  CHECK(bk::join_python_words("\t\x1f ") == "");
  CHECK(bk::join_python_words("one") == "one");
}

TEST_CASE("_improve_answer_span: the first piece span equal to the answer's pieces, else the input span") {
  // "The leader was John Smith (1895-1943)." with the answer "1895": the word span is "(1895-1943)." (pieces
  // 5..10); the answer's single piece is found at 6.
  const Ids doc = {4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14};
  CHECK(bk::improve_answer_span(doc, 5, 10, Ids{10}) == std::pair<int32_t, int32_t>{6, 6});
  CHECK(bk::improve_answer_span(doc, 5, 10, Ids{10, 11, 12}) == std::pair<int32_t, int32_t>{6, 8});
  CHECK(bk::improve_answer_span(doc, 5, 10, Ids{17}) == std::pair<int32_t, int32_t>{5, 10});  // not there
  CHECK(bk::improve_answer_span(doc, 0, 3, Ids{10}) == std::pair<int32_t, int32_t>{0, 3});    // outside the span
  CHECK(bk::improve_answer_span(doc, 5, 4, Ids{9}) == std::pair<int32_t, int32_t>{5, 4});     // empty span
  CHECK(bk::improve_answer_span(doc, 2, 8, Ids{}) == std::pair<int32_t, int32_t>{2, 8});      // no pieces
  // Start ascending first, then end descending: the earliest, longest-first match.
  const Ids repeats = {5, 7, 5, 7};
  CHECK(bk::improve_answer_span(repeats, 0, 3, Ids{5, 7}) == std::pair<int32_t, int32_t>{0, 1});
  CHECK(bk::improve_answer_span(repeats, 1, 3, Ids{5, 7}) == std::pair<int32_t, int32_t>{2, 3});
}

TEST_CASE("_check_is_max_context: min(left, right) + 0.01 * length, the first of equal scores wins") {
  // The reference's own example: "the man went to the store and bought a gallon of milk", spans A = 0..4,
  // B = 3..7, C = 6..10. "bought" (7) has 4 left and 0 right in B, 1 and 3 in C: C is its max context.
  const std::vector<bk::DocSpan> spans = {{0, 5}, {3, 5}, {6, 5}};
  CHECK_FALSE(bk::check_is_max_context(spans, 1, 7));
  CHECK(bk::check_is_max_context(spans, 2, 7));
  CHECK(bk::check_is_max_context(spans, 0, 3));   // A: 3 left, 1 right -> 1.05; B: 0, 4 -> 0.05
  CHECK(bk::check_is_max_context(spans, 1, 5));   // B: 2, 2 -> 2.05; C: 5 is before it
  CHECK_FALSE(bk::check_is_max_context(spans, 0, 11));  // in no span
  const std::vector<bk::DocSpan> tie = {{0, 4}, {1, 4}};  // position 2: 2,1 and 1,2 -> 1.04 both
  CHECK(bk::check_is_max_context(tie, 0, 2));
  CHECK_FALSE(bk::check_is_max_context(tie, 1, 2));
  const std::vector<bk::DocSpan> lengths = {{0, 3}, {0, 4}};  // position 1: 1.03 and 1.04: the longer wins
  CHECK(bk::check_is_max_context(lengths, 1, 1));
}

TEST_CASE("doc spans: windows of at most max_tokens_for_doc, min(length, stride) apart, the last at the end") {
  using Spans = std::vector<std::pair<int32_t, int32_t>>;
  auto spans = [](int32_t n, int32_t max, int32_t stride) {
    Spans out;
    for (const auto& s : bk::make_doc_spans(n, max, stride)) out.emplace_back(s.start, s.length);
    return out;
  };
  CHECK(spans(10, 4, 3) == Spans{{0, 4}, {3, 4}, {6, 4}});
  CHECK(spans(10, 4, 5) == Spans{{0, 4}, {4, 4}, {8, 2}});
  CHECK(spans(11, 4, 2) == Spans{{0, 4}, {2, 4}, {4, 4}, {6, 4}, {8, 3}});
  CHECK(spans(3, 4, 1) == Spans{{0, 3}});
  CHECK(spans(0, 4, 1).empty());
}

TEST_CASE("_truncate_seq_pair: the last piece off the longer list, off b on a tie") {
  Ids a = {1, 2, 3, 4, 5}, b = {11, 12, 13};
  bk::truncate_seq_pair(a, b, 4);
  CHECK(a == Ids{1, 2});
  CHECK(b == Ids{11, 12});
  a = {1, 2}, b = {11, 12, 13, 14, 15, 16};
  bk::truncate_seq_pair(a, b, 5);
  CHECK(a == Ids{1, 2});
  CHECK(b == Ids{11, 12, 13});
  a = {1}, b = {11};
  bk::truncate_seq_pair(a, b, 0);
  CHECK((a.empty() && b.empty()));
}

TEST_CASE("read_squad_examples: answers to word spans, skips, the reference's -1 start, errors with places") {
  const std::string json = R"({"data": [{"paragraphs": [
    {"context": " The leader was John Smith (1895-1943).", "qas": [
      {"id": "a", "question": "Born?", "answers": [{"text": "1895", "answer_start": 28}]},
      {"id": "b", "question": "Who?", "answers": [{"text": "zzz", "answer_start": 1}]},
      {"id": "c", "question": "Space?", "answers": [{"text": " ", "answer_start": 0}]},
      {"id": "d", "question": "Lead?", "answers": [{"text": " The", "answer_start": 0}]}]}]}]})";
  const auto ex = bk::parse_squad_examples(json, "t.json", {true, false});
  REQUIRE(ex.examples.size() == 2);
  CHECK(ex.skipped == 2);
  CHECK(words(ex.documents[0]) == Strings{"The", "leader", "was", "John", "Smith", "(1895-1943)."});
  CHECK(ex.examples[0].qas_id == "a");
  CHECK(ex.examples[0].start_position == 5);
  CHECK(ex.examples[0].end_position == 5);
  // b: "zzz" is not in "The", skipped. c and d start in the leading whitespace: word -1, and the reference's
  // slice doc_tokens[-1:end + 1] counts from the end: [5:0] for c, [5:1] for d, both empty. c's text is only
  // whitespace, "" is found in "": kept with its -1. d's "The" is not found in "": skipped.
  CHECK(ex.examples[1].qas_id == "c");
  CHECK(ex.examples[1].start_position == -1);
  CHECK(ex.examples[1].end_position == -1);
  // Without --train nothing about answers is read.
  const auto eval = bk::parse_squad_examples(json, "t.json", {false, false});
  CHECK(eval.examples.size() == 4);
  CHECK(eval.examples[1].start_position == -1);

  CHECK(error_of([] { bk::parse_squad_examples(R"({"data": [})", "t.json", {}); }) ==
        "t.json: malformed JSON at byte 11 (line 1, column 11: syntax error while parsing value - unexpected '}'; "
        "expected '[', '{', or a literal)");
  CHECK(error_of([] {
          bk::parse_squad_examples(R"({"data": [{"paragraphs": [{"context": "ab", "qas": [{"id": "q", "question": "x",
            "answers": [{"text": "abc", "answer_start": 0}]}]}]}]})", "t.json", {true, false});
        }) == "t.json: question q: the answer (characters 0 to 3) falls outside its context of 2 characters");
  CHECK(error_of([] {
          bk::parse_squad_examples(R"({"data": [{"paragraphs": [{"context": "ab", "qas": [{"id": "q", "question": 7}]}]}]})",
                                   "t.json", {});
        }) == "t.json: data[0].paragraphs[0].qas[0].question: expected a string, found number");
}

TEST_CASE("SQuAD features: windows, positions, and the maps a prediction step reads back") {
  const auto vocab = bk::Vocab::from_tokens(kTokens);
  const auto tokenizer = bk::TextTokenizer::wordpiece(vocab, true);
  const std::string json = R"({"data": [{"paragraphs": [{"context": "The leader was John Smith (1895-1943).",
    "qas": [{"id": "a", "question": "Who was the leader?", "answers": [{"text": "1895", "answer_start": 27}]}]}]}]})";
  const auto examples = bk::parse_squad_examples(json, "t.json", {true, false});
  bk::SquadFeatureOptions options;
  options.max_seq_length = 10;  // query 3 -> 4 document pieces per window
  options.doc_stride = 2;
  options.max_query_length = 3;
  options.is_training = true;
  const auto features = bk::SquadFeatures::convert(examples, tokenizer, options);
  // 11 pieces: the leader was john smith ( 1895 - 1943 ) .   windows 0..3, 2..5, 4..7, 6..9, 8..10
  REQUIRE(features.features().size() == 5);
  CHECK(features.doc_pieces(0).ids == Ids{4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14});
  CHECK(features.doc_pieces(0).tok_to_orig_index == Ids{0, 1, 2, 3, 4, 5, 5, 5, 5, 5, 5});
  CHECK(features.doc_pieces(0).orig_to_tok_index == Ids{0, 1, 2, 3, 4, 5});
  CHECK(Ids(features.query_ids(0).begin(), features.query_ids(0).end()) == Ids{18, 6, 4});  // who was the
  const auto& f = features.features();
  CHECK(f[0].unique_id == 1000000000);
  CHECK(f[4].unique_id == 1000000004);
  CHECK(f[4].span.start == 8);
  CHECK(f[4].span.length == 3);
  // The answer "1895" is piece 6 (improved from the word's pieces 5..10): in windows 2 and 3 only.
  CHECK(f[1].start_position == 0);
  CHECK(f[2].start_position == 7);  // 6 - 4 + (3 + 2)
  CHECK(f[2].end_position == 7);
  CHECK(f[3].start_position == 5);
  CHECK(f[4].start_position == 0);
  Ids ids;
  features.input_ids(f[2], ids);
  CHECK(ids == Ids{2, 18, 6, 4, 3, 8, 9, 10, 11, 3});
  CHECK(features.tokens(f[2]) ==
        std::vector<std::string_view>{"[CLS]", "who", "was", "the", "[SEP]", "smith", "(", "1895", "-", "[SEP]"});
  CHECK(features.token_to_orig(f[2], 4) == -1);  // [SEP]
  CHECK(features.token_to_orig(f[2], 5) == 4);   // smith
  CHECK(features.token_to_orig(f[2], 8) == 5);   // - of (1895-1943).
  CHECK(features.token_to_orig(f[2], 9) == -1);
  CHECK(features.token_is_max_context(f[2], 7));         // piece 6: 2 left, 1 right here; 0 and 3 in window 3
  CHECK_FALSE(features.token_is_max_context(f[3], 5));
  CHECK_FALSE(features.token_is_max_context(f[2], 5));   // piece 4: 0 left, 3 right here; 2 and 1 in window 1
  CHECK(features.token_is_max_context(f[1], 7));
  CHECK_FALSE(features.token_is_max_context(f[2], 1));   // the query is in no window

  bk::Example record;
  features.to_example(f[2], record);
  std::vector<std::string> names;
  for (const auto& feature : record.features()) names.push_back(feature.name);
  CHECK(names == Strings{"unique_ids", "input_ids", "input_mask", "segment_ids", "start_positions", "end_positions",
                         "is_impossible"});
  CHECK(record.int64s("input_mask") == bk::Int64List{1, 1, 1, 1, 1, 1, 1, 1, 1, 1});
  CHECK(record.int64s("segment_ids") == bk::Int64List{0, 0, 0, 0, 0, 1, 1, 1, 1, 1});
  CHECK(record.int64s("is_impossible") == bk::Int64List{0});
}

TEST_CASE("GLUE processors: columns, headers, labels, test sets, skipped rows, errors with file and line") {
  const bk::GlueTask& mrpc = *bk::find_glue_task("mrpc");
  // A BOM in the header, CRLF endings, a stray CR inside a text (tf.gfile drops every CR).
  const std::string tsv = "\xef\xbb\xbfQuality\t#1 ID\t#2 ID\t#1 String\t#2 String\r\n"
                          "1\t7\t8\tA b\rc\tD\r\n"
                          "0\t9\t10\tE\t\n";
  const auto ex = bk::parse_glue_examples(mrpc, tsv, "dev.tsv", bk::GlueSplit::dev);
  REQUIRE(ex.examples.size() == 2);
  CHECK(ex.examples[0].guid == "dev-1");
  CHECK(ex.examples[0].text_a == "A bc");
  CHECK(ex.examples[0].text_b == "D");
  CHECK(ex.examples[0].label_id == 1);
  CHECK(ex.examples[0].line == 2);
  CHECK(ex.examples[1].text_b.empty());
  CHECK(ex.examples[1].label_id == 0);
  const auto test = bk::parse_glue_examples(mrpc, "index\ta\tb\tc\td\n5\t1\t2\tx\ty\n", "test.tsv", bk::GlueSplit::test);
  CHECK(test.examples.at(0).label_id == 0);
  CHECK(test.examples.at(0).guid == "test-1");

  const bk::GlueTask& cola = *bk::find_glue_task("cola");  // no header in train and dev
  const auto c = bk::parse_glue_examples(cola, "gj04\t1\t\tIt is.\ngj04\t0\t*\tIs it it.\n", "train.tsv",
                                         bk::GlueSplit::train);
  REQUIRE(c.examples.size() == 2);
  CHECK(c.examples[0].guid == "train-0");
  CHECK(c.examples[1].text_a == "Is it it.");
  CHECK(c.examples[1].label_id == 0);
  const bk::GlueTask& mnli = *bk::find_glue_task("mnli");
  CHECK(mnli.labels == std::vector<std::string_view>{"contradiction", "entailment", "neutral"});
  const std::string mnli_row = "7\tp\tq\tg\tx\ty\tz\tw\tPremise\tHypothesis\tneutral\tentailment\n";
  const auto m = bk::parse_glue_examples(mnli, "header\n" + mnli_row, "dev_mismatched.tsv", bk::GlueSplit::dev);
  CHECK(m.examples.at(0).guid == "dev_mismatched-7");
  CHECK(m.examples.at(0).label_id == 1);  // the last column
  const auto stsb = bk::parse_glue_examples(*bk::find_glue_task("sts-b"),
                                            "h\n3\tg\tf\ty\ti\ts\ts\tA\tB\t 3.800 \n", "dev.tsv", bk::GlueSplit::dev);
  CHECK(stsb.examples.at(0).label_value == 3.8f);
  const auto qqp = bk::parse_glue_examples(*bk::find_glue_task("qqp"), "h\n1\t2\t3\tq1\tq2\t1\n4\t5\t6\tq3\n",
                                           "train.tsv", bk::GlueSplit::train);
  CHECK(qqp.examples.size() == 1);
  CHECK(qqp.skipped == 1);

  CHECK(bk::glue_split("glue/MRPC/test.tsv", false) == bk::GlueSplit::test);
  CHECK(bk::glue_split("glue/MRPC/dev.tsv", false) == bk::GlueSplit::dev);
  CHECK(bk::glue_split("glue/MRPC/test.tsv", true) == bk::GlueSplit::train);
  CHECK(bk::find_glue_task("squad") == nullptr);

  CHECK(error_of([&] { bk::parse_glue_examples(mrpc, "h\n1\t2\t3\n", "d.tsv", bk::GlueSplit::dev); }) ==
        "d.tsv: line 2: mrpc needs at least 5 tab-separated columns, the row has 3");
  CHECK(error_of([&] { bk::parse_glue_examples(mrpc, "h\n\n", "d.tsv", bk::GlueSplit::dev); }) ==
        "d.tsv: line 2: mrpc needs at least 5 tab-separated columns, the row has 0");
  CHECK(error_of([&] { bk::parse_glue_examples(mrpc, "h\n1\t2\t3\ta\tb\n2\t2\t3\ta\tb\n", "d.tsv", bk::GlueSplit::dev); }) ==
        "d.tsv: line 3: unknown label '2' (the labels of mrpc are 0, 1)");
}

TEST_CASE("GLUE features: [CLS] A [SEP] B [SEP], truncation, an emptied B, a float label for STS-B") {
  const auto vocab = bk::Vocab::from_tokens(kTokens);
  const auto tokenizer = bk::TextTokenizer::wordpiece(vocab, true);
  const bk::GlueTask& mrpc = *bk::find_glue_task("mrpc");
  bk::GlueExamples examples;
  examples.examples.push_back({"dev-1", "The leader was John.", "Smith (1895-1943).", 1, 0, 2});
  examples.examples.push_back({"dev-2", "The leader", "", 0, 0, 3});  // no B: a single sentence
  examples.examples.push_back({"dev-3", "The leader", "\x07", 0, 0, 4});  // B with no pieces: single too
  bk::GlueFeatureOptions options;
  options.max_seq_length = 8;
  const auto features = bk::GlueFeatures::convert(mrpc, examples, tokenizer, options);
  REQUIRE(features.size() == 3);
  // A = the leader was john . (5 pieces), B = smith ( 1895 - 1943 ) . (7); 5 fit, trimmed from the longer
  // side, B on ties: A keeps 3, B 2.
  const auto ids = features.input_ids(0);
  CHECK(Ids(ids.begin(), ids.end()) == Ids{2, 4, 5, 6, 3, 8, 9, 3});
  CHECK(features.segment_a_length(0) == 5);
  CHECK(Ids(features.input_ids(1).begin(), features.input_ids(1).end()) == Ids{2, 4, 5, 3});
  CHECK(Ids(features.input_ids(2).begin(), features.input_ids(2).end()) == Ids{2, 4, 5, 3});
  bk::Example record;
  features.to_example(0, record);
  std::vector<std::string> names;
  for (const auto& feature : record.features()) names.push_back(feature.name);
  CHECK(names == Strings{"input_ids", "input_mask", "segment_ids", "label_ids", "is_real_example"});
  CHECK(record.int64s("segment_ids") == bk::Int64List{0, 0, 0, 0, 0, 1, 1, 1});
  CHECK(record.int64s("label_ids") == bk::Int64List{1});
  CHECK(record.int64s("is_real_example") == bk::Int64List{1});
  features.to_example(1, record);
  CHECK(record.int64s("input_ids") == bk::Int64List{2, 4, 5, 3, 0, 0, 0, 0});
  CHECK(record.int64s("input_mask") == bk::Int64List{1, 1, 1, 1, 0, 0, 0, 0});

  // Truncation can empty B: then the reference writes [CLS] A [SEP] alone.
  options.max_seq_length = 3;
  const auto tiny = bk::GlueFeatures::convert(mrpc, examples, tokenizer, options);
  CHECK(Ids(tiny.input_ids(0).begin(), tiny.input_ids(0).end()) == Ids{2, 3});

  const bk::GlueTask& stsb = *bk::find_glue_task("sts-b");
  bk::GlueExamples scores;
  scores.examples.push_back({"dev-0", "the", "leader", 0, 3.8f, 2});
  const auto regression = bk::GlueFeatures::convert(stsb, scores, tokenizer, bk::GlueFeatureOptions{});
  regression.to_example(0, record);
  CHECK(record.find("label_ids")->is_float());
  CHECK(record.floats("label_ids") == bk::FloatList{3.8f});
  CHECK(record.int64s("input_ids").size() == 128);  // run_classifier.py's default length
}

TEST_CASE("run_squad.py's training shuffle is random.Random(12345).shuffle") {
  std::vector<bk::SquadExample> examples(10);
  for (int i = 0; i < 10; ++i) examples[static_cast<size_t>(i)].qas_id = std::to_string(i);
  bk::shuffle_squad_training_examples(examples);
  Strings order;
  for (const auto& e : examples) order.push_back(e.qas_id);
  // Python: x = list(range(10)); random.Random(12345).shuffle(x) -> [8, 7, 3, 5, 1, 2, 9, 4, 0, 6]
  CHECK(order == Strings{"8", "7", "3", "5", "1", "2", "9", "4", "0", "6"});
}

TEST_CASE("feature options: the references' limits are usage errors naming the flag") {
  bk::SquadFeatureOptions squad;
  CHECK(squad.max_seq_length == 384);
  CHECK(squad.doc_stride == 128);
  CHECK(squad.max_query_length == 64);
  squad.max_seq_length = 67;
  CHECK_THROWS_WITH_AS(squad.validate(), "--max-seq-length (67) must be greater than --max-query-length (64) + 3",
                       bk::UsageError);
  squad.max_seq_length = 68;
  CHECK_NOTHROW(squad.validate());
  bk::GlueFeatureOptions glue;
  CHECK(glue.max_seq_length == 128);
  glue.max_seq_length = 2;
  CHECK_THROWS_AS(glue.validate(), bk::UsageError);
}
