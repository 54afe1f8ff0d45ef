// The official SQuAD scores: evaluate-v1.1.py and evaluate-v2.0.py, with the same numbers to the last bit.
//
// Both compare normalised texts. normalize_answer: Python's str.lower() (full Unicode lowercasing, final sigma
// included), every character of string.punctuation removed (ASCII only), the words "a", "an" and "the" replaced
// by a space wherever Python 3's re finds \b(a|an|the)\b (word characters: what str.isalnum() accepts, and '_';
// so an accent written as a combining mark ends a word), then ' '.join(text.split()) with Python's whitespace.
// Tokens are the normalised text's words; F1 counts their multiset intersection (Counter &).
//
// v1.1 ({"exact_match", "f1"}): per question of the dataset, in file order, the best EM and the best F1 over its
// answers are added up (a question without a prediction adds 0 and is listed in `missing`, the script's
// "Unanswered question ... will receive score 0."); each sum is then 100.0 * sum / questions. A question with no
// answer at all is an error (the script fails on it): score SQuAD 2.0 files with v2.0.
//
// v2.0 ({"exact", "f1", "total", "HasAns_exact", ..., "NoAns_total", and with null odds "best_exact",
// "best_exact_thresh", "best_f1", "best_f1_thresh"}): gold answers whose normalisation is empty are dropped
// ([""] when none is left, so a question without answers is answered correctly only by ""); F1 is 1 or 0 when
// either side has no tokens; a question whose null odds exceed na_prob_thresh (1.0, the script's default)
// counts as answered "" (score 1.0 without gold answers, else 0.0). The averages are 100.0 * sum / count with
// the sums taken in the script's order (Python 3.11's sum(): plain double additions; Python 3.12 and later
// sum floats with compensation and can differ in the last bit). HasAns_* and NoAns_* appear when the dataset
// has such questions. The best-threshold search walks the questions by rising null odds (stable: ties in the
// odds' order) and keeps the first best score.
// Questions without a prediction are left out of every count, as tf-models-official's evaluate() does (the
// script itself fails on them once it computes HasAns_*): they are listed in `missing` (its "Missing prediction
// for ...").
//
// Predictions and null odds are Python dicts: a repeated id keeps the place of its first entry and the value of
// its last. Python's str.lower() and str.isalnum() follow its unicodedata (Unicode 14 in Python 3.11); ICU's
// tables (ICU 72: Unicode 15) differ only on characters new in Unicode 15.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bk {

// question id -> answer text, and question id -> null odds (v2.0's na_probs), in insertion order.
using SquadAnswers = std::vector<std::pair<std::string, std::string>>;
using SquadNullOdds = std::vector<std::pair<std::string, double>>;

// A question of the dataset and the texts of its answers (data[].paragraphs[].qas[]: id, answers[].text).
struct SquadGoldQuestion {
  std::string id;
  std::vector<std::string> answers;
};

// The questions of a SQuAD JSON file in file order ("-" = stdin; gzip and bzip2 are undone). bk::Error naming the
// file and the place (data[i].paragraphs[j].qas[k]) when a field is missing or of another type.
std::vector<SquadGoldQuestion> read_squad_gold(const std::string& path);
std::vector<SquadGoldQuestion> parse_squad_gold(std::string_view json, const std::string& name);

struct SquadScores {
  nlohmann::ordered_json scores;     // the script's keys, in its order
  std::vector<std::string> missing;  // questions without a prediction, in file order
};

// evaluate-v1.1.py's evaluate().
SquadScores score_squad_v1(const std::vector<SquadGoldQuestion>& dataset, const SquadAnswers& predictions);

// evaluate-v2.0.py's main() (na_probs from `null_odds` when given, else 0.0 for every prediction). bk::Error when
// no question has a prediction, or null odds are given and lack a predicted question.
SquadScores score_squad_v2(const std::vector<SquadGoldQuestion>& dataset, const SquadAnswers& predictions,
                           const SquadNullOdds* null_odds = nullptr, double na_prob_thresh = 1.0);

// normalize_answer (valid UTF-8 in and out).
std::string normalize_squad_answer(std::string_view text);

}  // namespace bk
