// SQuAD answers from span logits, as google-research/bert run_squad.py's write_predictions makes them, and the
// three files it writes, byte for byte.
//
// Per example, over its features in window order:
// - the n_best_size highest start and end positions of each feature (_get_best_indexes: a stable sort, so of
//   equal logits the lower position comes first), the padding positions included;
// - every pair kept that lies inside the feature's tokens, starts and ends on document pieces, starts where
//   this window gives the piece its most context, ends no earlier than it starts and spans at most
//   max_answer_length pieces;
// - v2.0: the null score, the smallest start[0] + end[0] over the features (the first of equal ones), joins the
//   candidates as an empty answer;
// - candidates sorted by start + end logit, highest first (stable), then turned into text until n_best_size are
//   found: the pieces joined with "##" glued back, projected onto the original words by get_final_text (the
//   BasicTokenizer of the features on the original text, a character alignment ignoring spaces, the whole
//   original words whenever that fails); a text seen before is skipped. Features made with a byte-level BPE
//   tokenizer take the context's own text between the pieces' bytes instead (squad_features.h);
// - v2.0: the empty answer added if it is not among them; with no answer at all, "empty" with logits 0.0;
// - probabilities: softmax over start + end logits (math.exp in double, summed in order).
// The answer is the first text (v1.1); for v2.0 it is "" when the null score minus the best non-empty
// candidate's logits exceeds null_score_diff_threshold, else that candidate. That difference is the null odds.
//
// Two cases the reference does not survive, given answers here instead: a v2.0 example with no non-empty
// candidate (the reference fails on best_non_null_entry None) is answered "" with null odds +Infinity; an
// example without features (a context with no pieces: the reference gives "empty" for v1.1 and fails for v2.0)
// gets the null answer alone. When no feature's null score is below the reference's starting value
// (1000000), the null entry keeps its Python int logits 0, which the JSON shows as 0, not 0.0.
//
// The BasicTokenizer of get_final_text is bertkit's (google-research/bert HEAD). bert-tensorflow 1.0.4's,
// which the compat test runs, differs only in preserve_unused_tokens, which get_final_text never turns on
// (it builds its tokenizer without a vocabulary), so both give the same words.
#pragma once

#include "squad/squad_examples.h"
#include "squad/squad_features.h"
#include "squad/squad_logits.h"
#include "squad/squad_scoring.h"

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bk {

// run_squad.py's flags that write_predictions reads, with its defaults.
struct SquadPredictOptions {
  int n_best_size = 20;
  int max_answer_length = 30;
  bool do_lower_case = true;  // as the features were made (false for --cased)
  bool version_2_with_negative = false;
  double null_score_diff_threshold = 0.0;

  // bk::UsageError naming --n-best-size or --max-answer-length when below 1.
  void validate() const;
};

// One entry of nbest_predictions.json.
struct SquadNbestEntry {
  std::string text;
  double probability = 0, start_logit = 0, end_logit = 0;
  bool integer_logits = false;  // the reference's logits are Python ints (0); written without ".0"
};

struct SquadPrediction {
  std::string qas_id;
  std::string text;       // predictions.json
  double null_odds = 0;   // null_odds.json (v2.0)
  std::vector<SquadNbestEntry> nbest;
};

struct SquadPredictions {
  bool version_2_with_negative = false;
  // In example order. The reference keeps them in dicts by question id, so a repeated id keeps the place of its
  // first example and the prediction of its last; so does this.
  std::vector<SquadPrediction> predictions;

  // As the scorers (squad_scoring.h) take them.
  SquadAnswers answers() const;
  SquadNullOdds null_odds() const;

  // The files' texts: json.dumps(x, indent=4) + "\n".
  std::string predictions_json() const;
  std::string nbest_json() const;
  std::string null_odds_json() const;  // v2.0 only
};

// write_predictions over all examples. `logits` must hold one row per feature of `features`, in their order,
// with the same unique ids and max_seq_length positions (bk::Error naming the logits' source if not).
SquadPredictions make_squad_predictions(const SquadExamples& examples, const SquadFeatures& features,
                                        const SquadLogits& logits, const SquadPredictOptions& options);

// The files run_squad.py writes, by name, with their contents: predictions.json, nbest_predictions.json and, for
// v2.0, null_odds.json.
std::vector<std::pair<std::string, std::string>> squad_prediction_files(const SquadPredictions& predictions);

// The reference's helpers, for the tests.
std::vector<int32_t> best_indexes(std::span<const double> logits, int n_best_size);  // _get_best_indexes
std::vector<double> compute_softmax(std::span<const double> scores);                  // _compute_softmax
std::string get_final_text(std::string_view pred_text, std::string_view orig_text, bool do_lower_case);

}  // namespace bk
