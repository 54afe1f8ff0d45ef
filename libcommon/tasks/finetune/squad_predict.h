// bert-finetune predict's SQuAD side between the model's logits and what the user gets: run_squad.py's
// post-processing (squad/squad_predictions.h), the prediction files and the saved logits, the official scores
// (squad/squad_scoring.h) when the questions carry answers, the interactive answer, and the dev set that
// bert-finetune train scores after each epoch. Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

namespace bk {

class SquadFeatures;
class Vocab;
struct FinetunePredictConfig;
struct SquadExamples;
struct SquadLogits;
struct SquadPredictOptions;
struct SquadGoldQuestion;

SquadPredictOptions squad_predict_options(const FinetunePredictConfig& config, bool v2);

// One question about one context, as read_squad_examples reads a file holding only them.
SquadExamples single_squad_example(const std::string& question, const std::string& context);

// The question's answer ("" for squad2's null answer) with its probability among the n-best and its logits.
nlohmann::ordered_json best_squad_answer(const SquadExamples& examples, const SquadFeatures& features,
                                         const SquadLogits& logits, const SquadPredictOptions& options);

// Fails before any work when a file of the run (the predictions, --save-logits) exists and --force is not given,
// is one of the run's inputs, or when --save-logits names one of the prediction files.
void check_squad_outputs(const FinetunePredictConfig& config, bool v2);

// The questions of a SQuAD file and their answers, checked before the model runs: SQuAD v1.1's evaluation scores a
// file whose questions all have answers, or none (bk::Error naming the file and the question).
std::vector<SquadGoldQuestion> read_squad_gold(const std::string& dataset_json, const std::string& dataset_name,
                                               bool v2);

// Scores the predictions, then writes --save-logits (when asked) and the prediction files, put in place together
// or not at all; returns the official scores when the questions hold answers, else null.
nlohmann::ordered_json write_squad_outputs(const FinetunePredictConfig& config,
                                           const std::vector<SquadGoldQuestion>& gold, const SquadExamples& examples,
                                           const SquadFeatures& features, const SquadLogits& logits,
                                           const SquadPredictOptions& options);

// A SQuAD dev file ready to be scored again and again (bert-finetune train's --eval-file): its questions' answers,
// examples and features (run_squad.py's defaults but the length), and the post-processing defaults.
struct SquadEvalSet;
struct SquadEvalSetDeleter {
  void operator()(SquadEvalSet* set) const;
};
using SquadEvalSetPtr = std::unique_ptr<SquadEvalSet, SquadEvalSetDeleter>;
SquadEvalSetPtr load_squad_eval_set(const std::string& path, const std::string& vocab_path, bool cased, bool v2,
                                    int max_seq_length);
const SquadFeatures& squad_eval_features(const SquadEvalSet& set);
// The official script's scores of the predictions these logits give.
nlohmann::ordered_json score_squad(const SquadEvalSet& set, const SquadLogits& logits);

}  // namespace bk
