// bert-finetune predict: a fine-tuned model's predictions on a task's file, and its scores when the file holds the
// answers or labels; or one interactive answer.
//
//   SQuAD   the examples and features as `features` makes them (run_squad.py's), the model's start/end logits
//           over every position of each feature (padding included: the reference ranks those too), then
//           run_squad.py's write_predictions: OUTPUT/predictions.json, nbest_predictions.json and, for squad2,
//           null_odds.json, byte for byte what the reference writes from the same logits. When the questions carry
//           answers the scores of the official evaluate-v1.1.py / evaluate-v2.0.py go to stdout as one JSON object.
//   GLUE    run_classifier.py's features, the classifier's logits, OUTPUT/<TASK>.tsv in the GLUE submission format
//           (index, prediction: the label's name, or the value for STS-B); with labels the task's scores.
//   --question/--context (SQuAD) or --text [--text-b] (GLUE): the same steps on one example held in memory, the
//           answer or label and its probability printed as one JSON object; nothing is written.
// The config and its flags are torch-free (bert_finetune_predict_options.cpp).
#pragma once

#include "tasks/finetune/bert_finetune_features.h"

#include "device/precision_kind.h"

#include <cstdint>
#include <optional>
#include <string>

namespace bk {

class Options;

struct FinetunePredictConfig {
  FinetuneFeaturesConfig features;  // task, vocabulary, case and lengths (train stays false)
  std::string checkpoint;           // a fine-tuned checkpoint directory
  std::string predict_file;         // SQuAD JSON or GLUE TSV; empty with --question/--text
  std::string output_dir;           // where the prediction files go (created; existing files kept unless force)
  std::string save_logits;          // SQuAD: every feature's start/end logits as JSON lines (squad_logits.h)
  // SQuAD: the encoder on real tokens only (finetune_inference.h says what changes); padded with --save-logits
  // unless --attention says otherwise (settle_predict_attention).
  bool unpadded = true;
  // Interactive: one example from the command line.
  std::string question, context;    // SQuAD
  std::string text, text_b;         // GLUE
  // run_squad.py's post-processing flags, with its defaults.
  int n_best_size = 20;
  int max_answer_length = 30;
  double null_score_diff_threshold = 0.0;
  int64_t batch_size = 64;          // features per forward pass (bert-eval's default)
  std::optional<Precision> precision;  // --precision; unset: auto (device/precision.h's choose_precision)
  std::string device = "cpu";
  bool force = false;
  bool quiet = false;
  bool allow_vocab_mismatch = false;  // warn instead of refusing --vocab or --cased other than the model's

  bool interactive() const { return !question.empty() || !context.empty() || !text.empty() || !text_b.empty(); }
  // bk::UsageError naming the flag: a missing or contradictory input, a value the reference rejects.
  void validate() const;
};

void add_bert_finetune_predict_options(Options& options, FinetunePredictConfig& config);
// After parsing: --save-logits keeps the logits of every position, so without an explicit --attention it makes
// the run padded.
void settle_predict_attention(const Options& options, FinetunePredictConfig& config);

void run_bert_finetune_predict(const FinetunePredictConfig& config);

}  // namespace bk
