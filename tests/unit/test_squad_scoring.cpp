// The official SQuAD scores (squad/squad_scoring.h), against values printed by the official scorers' functions
// as tf-models-official ships them (official/nlp/tools/squad_evaluate_v1_1.py and squad_evaluate_v2_0.py). Whole
// scores on whole datasets against them are tests/compat/test_squad_predictions.py.
#include <doctest/doctest.h>

#include "../error_of.h"
#include "squad/squad_scoring.h"
#include "util/py_json.h"

#include <string>
#include <utility>
#include <vector>

using bk_test::error_of;

TEST_CASE("normalize_answer: Python's lower(), ASCII punctuation, Unicode \\b around a/an/the, Python whitespace") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"The Cat", "cat"},
      {"An apple, a day!", "apple day"},
      {"a an the", ""},
      {"ANThe", "anthe"},
      {"\xce\x9f\xce\x94\xce\x9f\xce\xa3", "\xce\xbf\xce\xb4\xce\xbf\xcf\x82"},                 // ΟΔΟΣ: final sigma
      {"\xce\xa3\xce\x91\xce\xa3 \xce\xa3", "\xcf\x83\xce\xb1\xcf\x82 \xcf\x83"},               // ΣΑΣ Σ -> σας σ
      {"\xc4\xb0stanbul", "i\xcc\x87stanbul"},                                                   // İ -> i + U+0307
      {"\xc7\x84" "EMAL", "\xc7\x86" "emal"},                                                    // Ǆ -> ǆ
      {"\xef\xac\x81ne", "\xef\xac\x81ne"},                                                      // ﬁ stays
      {"Stra\xc3\x9f" "e A", "stra\xc3\x9f" "e"},                                                // ß stays
      {"the\xcc\x81 end", "\xcc\x81 end"},            // a combining mark is no word character: "the" ends
      {"th\xc3\xa9\xc3\xa2tre the", "th\xc3\xa9\xc3\xa2tre"},                                    // é is one
      {"\xc2\xbdthe \xc2\xbd the", "\xc2\xbdthe \xc2\xbd"},                                      // ½ is numeric
      {"\xd9\xa3the the\xd9\xa3", "\xd9\xa3the the\xd9\xa3"},                                    // ٣ is a digit
      {"\xf0\x9d\x90\x80the", "\xf0\x9d\x90\x80the"},                                            // 𝐀 is a letter
      {"a_the an", "athe"},                                  // '_' is punctuation, removed before the articles
      {"\xc2\xabthe\xc2\xbb", "\xc2\xab \xc2\xbb"},          // « » are not ASCII punctuation
      {"The\xe2\x80\x8bthe", "\xe2\x80\x8b"},                // U+200B is neither word nor space
      {"THE\xc2\xa0" "END", "end"},                          // NBSP
      {"hello\xe3\x80\x80world", "hello world"},             // U+3000
      {"x\xe2\x80\xa8the\xe2\x80\xa9y", "x y"},              // U+2028, U+2029
      {"the\x1c" "end", "end"},                              // U+001C is whitespace to str.split()
      {"a.b", "ab"},
      {"an-the", "anthe"},
      {"   ", ""},
      {"!!!", ""},
  };
  for (const auto& [text, normalized] : cases) {
    CAPTURE(text);
    CHECK(bk::normalize_squad_answer(text) == normalized);
  }
}

TEST_CASE("scores: v1.1's 100.0 * sum / total, v2.0's HasAns/NoAns, threshold and best threshold") {
  const std::string data = R"({"data": [{"paragraphs": [{"qas": [
      {"id": "q1", "answers": [{"text": "the cat"}, {"text": "a dog"}]},
      {"id": "q2", "answers": [{"text": "New York City"}]},
      {"id": "q3", "answers": [{"text": "x"}]}]}]}]})";
  const auto gold = bk::parse_squad_gold(data, "gold.json");
  REQUIRE(gold.size() == 3);
  const bk::SquadAnswers predictions = {{"q1", "Cat!"}, {"q2", "york city hall"}};
  const bk::SquadScores v1 = bk::score_squad_v1(gold, predictions);
  // EM 1 of 3 (100.0 * 1 / 3, not 100.0 * (1 / 3) = 33.33333333333333); F1 (1 + 2/3) / 3.
  CHECK(bk::py_json_dumps(v1.scores) == R"({"exact_match": 33.333333333333336, "f1": 55.55555555555555})");
  CHECK(v1.missing == std::vector<std::string>{"q3"});

  const std::string data2 = R"({"data": [{"paragraphs": [{"qas": [
      {"id": "q1", "answers": [{"text": "the cat"}, {"text": "a dog"}]},
      {"id": "q2", "answers": [{"text": "New York City"}]},
      {"id": "q3", "answers": [{"text": "x"}]},
      {"id": "q4", "answers": []}, {"id": "q5", "answers": []}, {"id": "q6", "answers": [{"text": "!!!"}]}]}]}]})";
  const auto gold2 = bk::parse_squad_gold(data2, "gold2.json");
  const bk::SquadAnswers predictions2 = {{"q1", "Cat!"}, {"q2", "york city hall"}, {"q4", ""}, {"q5", "something"}, {"q6", ""}};
  const bk::SquadNullOdds odds = {{"q1", -1.0}, {"q2", 2.0}, {"q4", 0.5}, {"q5", 3.0}, {"q6", 0.25}};
  // Printed by tf-models-official's copy of the official functions (final_* there is best_* here).
  const bk::SquadScores v2 = bk::score_squad_v2(gold2, predictions2, &odds);
  CHECK(bk::py_json_dumps(v2.scores) ==
        R"({"exact": 80.0, "f1": 80.0, "total": 5, "HasAns_exact": 66.66666666666667, "HasAns_f1": 66.66666666666667, )"
        R"("HasAns_total": 3, "NoAns_exact": 100.0, "NoAns_f1": 100.0, "NoAns_total": 2, "best_exact": 80.0, )"
        R"("best_exact_thresh": 0.25, "best_f1": 93.33333333333334, "best_f1_thresh": 2.0})");
  CHECK(v2.missing == std::vector<std::string>{"q3"});
  const bk::SquadScores no_odds = bk::score_squad_v2(gold2, predictions2);
  CHECK(bk::py_json_dumps(no_odds.scores) ==
        R"({"exact": 60.0, "f1": 73.33333333333333, "total": 5, "HasAns_exact": 66.66666666666667, )"
        R"("HasAns_f1": 88.88888888888887, "HasAns_total": 3, "NoAns_exact": 50.0, "NoAns_f1": 50.0, "NoAns_total": 2})");

  CHECK(error_of([&] { bk::score_squad_v1(gold2, predictions2); }) ==
        "question q4 has no answer, which SQuAD v1.1's evaluation cannot score (a v2.0 file?)");
  CHECK(error_of([&] { bk::score_squad_v2(gold2, {}); }) == "no question of the dataset has a prediction");
  const bk::SquadNullOdds partial = {{"q1", 0.0}};
  CHECK(error_of([&] { bk::score_squad_v2(gold2, predictions2, &partial); }) ==
        "the null odds have no entry for question q2");
  CHECK(error_of([&] { bk::parse_squad_gold(R"({"data": [{"paragraphs": [{"qas": [{"id": "q"}]}]}]})", "g.json"); }) ==
        "g.json: data[0].paragraphs[0].qas[0]: missing \"answers\"");
}
