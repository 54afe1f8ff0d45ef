// bert-finetune predict for SQuAD, resolved from the command line once (bert_finetune_predict.cpp): a file's
// predictions and official scores, or one question answered.
#pragma once

#include "squad/squad_features.h"
#include "squad/squad_predictions.h"
#include "tasks/finetune/finetune_inference.h"
#include "tasks/finetune/squad_outputs.h"

#include <string>

namespace bk {

class TextTokenizer;
struct FinetunedModel;

struct SquadPredictSettings {
  SquadFeatureOptions features;  // the model's length when --max-seq-length is not given
  SquadPredictOptions post;      // run_squad.py's post-processing flags, the case and v2.0
  InferenceOptions inference;
  std::string predict_file;      // "-": stdin
  SquadOutputs outputs;
  bool quiet = false;
};

// The predictions of a file, written (squad_outputs.h), and its official scores on stdout when its questions have
// answers, as the official script prints them.
void predict_squad_file(const SquadPredictSettings& settings, const FinetunedModel& model, const TextTokenizer& tokenizer);

// The answer to one question about one context ("" for squad2's null answer), its probability among the n-best
// and its logits: one JSON object on stdout.
void answer_squad_question(const SquadPredictSettings& settings, const std::string& question,
                           const std::string& context, const FinetunedModel& model, const TextTokenizer& tokenizer);

}  // namespace bk
