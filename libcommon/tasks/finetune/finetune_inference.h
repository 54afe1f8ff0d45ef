// A fine-tuned model run over a task's features in batches, for prediction: SQuAD features give start and end
// logits at every position (max_seq_length of them; padding included when InferenceOptions::unpadded is off),
// GLUE features give the classifier's logits (batches cut to their longest feature: only [CLS] is read and
// padding is masked, so the logits are those of the padded batch).
#pragma once

#include "device/precision_kind.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace bk {

class BertForQuestionAnswering;
class GlueFeatures;
class SquadFeatures;
struct FinetunedModel;
struct SquadLogits;

struct InferenceOptions {
  int64_t batch_size = 32;
  ChosenPrecision precision;  // the forward pass's (autocast for bf16 and fp16), and why
  // SQuAD: the encoder on each feature's real tokens only (model/token_stream.h), the padding's logits not
  // computed (kUncomputedLogit). Not the default: run_squad.py's write_predictions takes the n_best_size largest
  // logits over every position and only then drops those outside the feature's tokens, so padding that ranks
  // among them changes which candidates are left; unpadded answers can then differ from the reference's.
  bool unpadded = false;
};

// The logit given to padding positions of an unpadded span prediction: below any real one, never ranked.
inline constexpr float kUncomputedLogit = -10000.0f;

// Row i: num_labels logits (one value for a regression).
struct ClassLogitRows {
  int64_t num_labels = 0;
  std::vector<float> logits;
  size_t size() const { return num_labels > 0 ? logits.size() / static_cast<size_t>(num_labels) : 0; }
};

// Every feature's start and end logits (max_seq_length each), as squad/squad_logits.h holds them.
SquadLogits predict_spans(const FinetunedModel& model, const SquadFeatures& features, const InferenceOptions& options);
// The same with a model being trained (bert-finetune train's SQuAD evaluation); `device` is where it is.
SquadLogits predict_spans(BertForQuestionAnswering& qa, const std::string& device, const SquadFeatures& features,
                          const InferenceOptions& options);
ClassLogitRows predict_classes(const FinetunedModel& model, const GlueFeatures& features,
                               const InferenceOptions& options);

// Fails naming the vocabulary when its size is not the model's (features from another vocabulary would index
// the wrong embeddings, or past them).
void check_vocab_matches(const FinetunedModel& model, size_t vocab_size, const std::string& vocab_path);

}  // namespace bk
