// A SQuAD file made ready to predict and to score (torch-free): its examples and features as run_squad.py makes
// them, its questions' answers, and the official scores of predictions on it. bert-finetune predict and
// bert-finetune train's --eval-file both make it through read_squad_dataset, with the same settings.
#pragma once

#include "squad/squad_examples.h"
#include "squad/squad_features.h"
#include "squad/squad_predictions.h"
#include "squad/squad_scoring.h"
#include "tok/text_tokenizer.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

namespace bk {

struct SquadDataset {
  std::vector<SquadGoldQuestion> gold;
  SquadExamples examples;
  SquadFeatures features;

  bool has_answers() const;
};

// The examples (read as for prediction), the answers and the features of `json` (read from `name`). SQuAD v1.1's
// evaluation scores a file whose questions all have answers, or none: bk::Error naming the file and a question
// that has none while others have.
SquadDataset read_squad_dataset(const std::string& json, const std::string& name, const TextTokenizer& tokenizer,
                                const SquadFeatureOptions& features, bool v2);

// The official scores of `predictions`: evaluate-v1.1.py's, or evaluate-v2.0.py's with the null odds as the
// no-answer probabilities.
nlohmann::ordered_json score_squad_predictions(const SquadDataset& dataset, const SquadPredictions& predictions);

// bert-finetune train's --eval-file: a dev set with answers, scored again and again with run_squad.py's
// post-processing defaults.
struct SquadEvalSet {
  SquadDataset dataset;
  SquadPredictOptions options;

  // The official scores of the predictions these logits give.
  nlohmann::ordered_json score(const SquadLogits& logits) const;
};
// `tokenizer_path` is a WordPiece vocabulary (with `cased`) or a byte-level BPE tokenizer.
std::unique_ptr<SquadEvalSet> load_squad_eval_set(const std::string& path, const std::string& tokenizer_path,
                                                  bool cased, bool v2, const SquadFeatureOptions& features);

}  // namespace bk
