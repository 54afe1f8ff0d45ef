// The SQuAD prediction step (squad/squad_predictions.h) and the logits file (squad_logits.h), against values
// printed by google-research/bert's run_squad.py (bert-tensorflow 1.0.4) on the same inputs. Whole files on whole
// datasets against run_squad.write_predictions are tests/compat/test_squad_predictions.py.
#include <doctest/doctest.h>

#include "../error_of.h"
#include "squad/squad_examples.h"
#include "squad/squad_features.h"
#include "squad/squad_logits.h"
#include "squad/squad_predictions.h"
#include "io/input.h"
#include "io/output.h"
#include "test_support.h"
#include "tok/full_tokenizer.h"
#include "tok/text_tokenizer.h"
#include "tok/vocab.h"

#include <filesystem>
#include <string>
#include <vector>

using bk_test::error_of;

TEST_CASE("_compute_softmax: exp(score - max) in double, summed in order") {
  CHECK(bk::compute_softmax(std::vector<double>{}).empty());
  CHECK(bk::compute_softmax(std::vector<double>{0.0}) == std::vector<double>{1.0});
  CHECK(bk::compute_softmax(std::vector<double>{1000.0, 1000.0}) == std::vector<double>{0.5, 0.5});
  CHECK(bk::compute_softmax(std::vector<double>{1.0, 2.0, 3.0}) ==
        std::vector<double>{0.09003057317038046, 0.24472847105479764, 0.6652409557748218});
  CHECK(bk::compute_softmax(std::vector<double>{-1.5, 0.25, 0.25, 7.125}) ==
        std::vector<double>{0.00017915778917540443, 0.0010309818930160529, 0.0010309818930160529, 0.9977588784247925});
  CHECK(bk::compute_softmax(std::vector<double>{12.5, -30.0}) == std::vector<double>{1.0, 3.4872615319944465e-19});
}

TEST_CASE("_get_best_indexes: a stable descending sort's first n (equal logits: lower index first)") {
  const std::vector<double> logits = {1.0, 3.0, 3.0, 2.0, 3.0};
  CHECK(bk::best_indexes(logits, 3) == std::vector<int32_t>{1, 2, 4});
  CHECK(bk::best_indexes(logits, 4) == std::vector<int32_t>{1, 2, 4, 3});
  CHECK(bk::best_indexes(logits, 20) == std::vector<int32_t>{1, 2, 4, 3, 0});
}

TEST_CASE("get_final_text: the prediction projected onto the original words, or all of them when that fails") {
  CHECK(bk::get_final_text("steve smith", "Steve Smith's", true) == "Steve Smith");
  CHECK(bk::get_final_text("cafe", "Caf\xc3\xa9!", true) == "Caf\xc3\xa9");
  CHECK(bk::get_final_text("1895", "(1895-1943).", true) == "1895");
  CHECK(bk::get_final_text("\xce\xbf\xce\xb4\xce\xbf\xcf\x82", "\xce\x9f\xce\x94\xce\x9f\xce\xa3.", true) ==
        "\xce\x9f\xce\x94\xce\x9f\xce\xa3");
  CHECK(bk::get_final_text("Smith", "Steve Smith's", false) == "Smith");
  // Not found (case, [UNK]): all of it.
  CHECK(bk::get_final_text("smith", "Steve Smith's", false) == "Steve Smith's");
  CHECK(bk::get_final_text("[UNK]", "\xf0\x9f\x8d\x95", true) == "\xf0\x9f\x8d\x95");
  // Lengths differ without spaces (a stripped combining mark, İ's extra mark, an NBSP): all of it.
  CHECK(bk::get_final_text("ecole", "e\xcc\x81" "cole", true) == "e\xcc\x81" "cole");
  CHECK(bk::get_final_text("istanbul", "\xc4\xb0stanbul", true) == "\xc4\xb0stanbul");
  CHECK(bk::get_final_text("b c", "a\xc2\xa0" "b c", true) == "a\xc2\xa0" "b c");
  CHECK(bk::get_final_text("", "abc", true) == "abc");
}

TEST_CASE("logits file: Python's repr per number, read back exactly; errors name the file and line") {
  const auto dir = bk_test::temp_dir("squad-logits");
  const std::string path = (dir / "logits.jsonl").string();
  {
    bk::Output out(path, true);
    bk::SquadLogitsWriter writer(out);
    const std::vector<float> start = {0.1f, -2.5f, 1e-5f}, end = {3.0f, 0.0f, -1e20f};
    writer.write(1000000000, start, end);
    writer.write(1000000001, std::vector<double>{1.0, 2.0, 3.0}, std::vector<double>{-0.0, 0.5, 1e16});
    CHECK(error_of([&] { writer.write(7, std::vector<float>{1.0f, 0.0f / 0.0f}, std::vector<float>{1.0f, 2.0f}); }) ==
          "feature 7: start_logits[1] is nan; a logits file holds finite numbers only");
    out.commit();
  }
  CHECK(bk::read_file(path) ==
        "{\"unique_id\": 1000000000, \"start_logits\": [0.10000000149011612, -2.5, 9.999999747378752e-06], "
        "\"end_logits\": [3.0, 0.0, -1.0000000200408773e+20]}\n"
        "{\"unique_id\": 1000000001, \"start_logits\": [1.0, 2.0, 3.0], \"end_logits\": [-0.0, 0.5, 1e+16]}\n");
  const bk::SquadLogits logits = bk::read_squad_logits(path);
  CHECK(logits.size() == 2);
  CHECK(logits.positions == 3);
  CHECK(logits.unique_ids == std::vector<int64_t>{1000000000, 1000000001});
  CHECK(logits.start_logits(0)[0] == static_cast<double>(0.1f));
  CHECK(logits.end_logits(0)[2] == static_cast<double>(-1e20f));
  CHECK(logits.end_logits(1)[2] == 1e16);

  auto error_in = [&](const std::string& text) {
    bk_test::write_bytes(dir / "bad.jsonl", text);
    return error_of([&] { bk::read_squad_logits((dir / "bad.jsonl").string()); });
  };
  const std::string bad = (dir / "bad.jsonl").string();
  const std::string good = "{\"unique_id\": 1, \"start_logits\": [1.0], \"end_logits\": [2.0]}\n";
  CHECK(error_in(good + "\n" + good) == bad + ":2: a blank line (one JSON object per feature expected)");
  CHECK(error_in(good + "{\"unique_id\": 2, \"start_logits\": [1.0, NaN]") == bad + ":2: malformed JSON at byte 40 (line 1, column 40: syntax error while parsing value - invalid literal)");
  CHECK(error_in(good + "{\"unique_id\": 2, \"start_logits\": [1.0, 2.0], \"end_logits\": [1.0, 2.0]}\n") ==
        bad + ":2: 2 logits per list, but the lines before have 1");
  CHECK(error_in("{\"unique_id\": 2, \"start_logits\": [1.0], \"end_logits\": [1.0, 2.0]}\n") ==
        bad + ":1: 1 start logits but 2 end logits");
  CHECK(error_in("{\"unique_id\": 2, \"start_logits\": [\"1.0\"], \"end_logits\": [1.0]}\n") ==
        bad + ":1: start_logits[0] must be a number, found string");
  CHECK(error_in("{\"unique_id\": \"2\", \"start_logits\": [1.0], \"end_logits\": [1.0]}\n") ==
        bad + ":1: \"unique_id\" must be an integer, found string");
  CHECK(error_in("{\"start_logits\": [1.0], \"end_logits\": [1.0]}\n") == bad + ":1: missing \"unique_id\"");
  CHECK(error_in("[1]\n") == bad + ":1: expected a JSON object, found array");
  std::filesystem::remove_all(dir);
}

TEST_CASE("predict options: the limits are usage errors naming the flag") {
  bk::SquadPredictOptions options;
  options.n_best_size = 0;
  CHECK_THROWS_WITH_AS(options.validate(), "--n-best-size must be positive, got 0", bk::UsageError);
  options.n_best_size = 1;
  options.max_answer_length = 0;
  CHECK_THROWS_WITH_AS(options.validate(), "--max-answer-length must be positive, got 0", bk::UsageError);
}

TEST_CASE("write_predictions on a small example: n-best texts, ties, dedup, v2.0 null odds, the edge cases") {
  const bk::Vocab vocab = bk::Vocab::from_tokens({"[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "leader", "was", "john",
                                                  "smith", "(", "1895", "-", "1943", ")", ".", "who", "?", "##s", "'"});
  const auto tokenizer = bk::TextTokenizer::wordpiece(vocab, true);
  const std::string data = R"({"data": [{"paragraphs": [{"context": "The leader was John Smith's (1895-1943).",
      "qas": [{"id": "q1", "question": "Who?", "answers": []}, {"id": "q2", "question": "Who was the leader?"}]}]}]})";
  const bk::SquadExamples examples = bk::parse_squad_examples(data, "d.json", {});
  const bk::SquadFeatures features =
      bk::SquadFeatures::convert(examples, tokenizer, {.max_seq_length = 16, .doc_stride = 4, .max_query_length = 4});
  REQUIRE(features.features().size() == 4);
  bk::SquadLogits logits;
  for (int k = 0; k < 4; ++k) {
    std::vector<double> start, end;
    for (int i = 0; i < 16; ++i) {
      start.push_back(((i * 7 + k * 3) % 11) / 2.0 - 2.0);
      end.push_back(((i * 5 + k) % 13) / 2.0 - 3.0);
    }
    logits.add(1000000000 + k, start, end);
  }
  // Printed by run_squad.write_predictions (bert-tensorflow 1.0.4) on the same features and logits.
  bk::SquadPredictOptions options{.n_best_size = 6, .max_answer_length = 5, .null_score_diff_threshold = 1.0};
  const bk::SquadPredictions v1 = bk::make_squad_predictions(examples, features, logits, options);
  CHECK(v1.predictions_json() == "{\n    \"q1\": \"was John Smith's\",\n    \"q2\": \"Smith's\"\n}\n");
  std::vector<std::string> texts;
  for (const auto& entry : v1.predictions[0].nbest) texts.push_back(entry.text);
  CHECK(texts == std::vector<std::string>{"was John Smith's", "Smith's", ".", "1943", "was John", "Smith's (1895-1943)."});
  CHECK(v1.predictions[0].nbest[2].probability == 0.18253564345628956);
  CHECK(v1.predictions[1].nbest[5].probability == 0.030816381873043044);
  options.version_2_with_negative = true;
  const bk::SquadPredictions v2 = bk::make_squad_predictions(examples, features, logits, options);
  CHECK(v2.null_odds_json() == "{\n    \"q1\": -10.0,\n    \"q2\": -6.0\n}\n");
  CHECK(v2.predictions[0].nbest.back().text == "");
  CHECK(v2.predictions[0].nbest.back().probability == 1.3662940253945196e-05);

  // No valid span for q1: "empty" (v1.1), and where the reference fails (v2.0) the null answer, odds +Infinity.
  options = {.n_best_size = 3, .max_answer_length = 4};
  CHECK(bk::make_squad_predictions(examples, features, logits, options).predictions_json() ==
        "{\n    \"q1\": \"empty\",\n    \"q2\": \"-1943\"\n}\n");
  options.version_2_with_negative = true;
  CHECK(bk::make_squad_predictions(examples, features, logits, options).null_odds_json() ==
        "{\n    \"q1\": Infinity,\n    \"q2\": -6.0\n}\n");

  bk::SquadLogits wrong = logits;
  wrong.unique_ids[2] = 5;
  CHECK(error_of([&] { bk::make_squad_predictions(examples, features, wrong, options); }) ==
        "<memory>: feature 2 (line 3) has unique_id 5, expected 1000000002");
  wrong.unique_ids.pop_back();
  CHECK(error_of([&] { bk::make_squad_predictions(examples, features, wrong, options); }) ==
        "<memory>: logits for 3 features, but the examples make 4");
}
