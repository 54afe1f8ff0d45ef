// The fine-tuning heads on the encoder (encoder.h), under HF transformers' names:
//   SpanHead        qa_outputs.{weight [2, H], bias [2]} over every token: start and end logits (SQuAD);
//   ClassifierHead  classifier.{weight [num_labels, H], bias} over the dropped-out pooled output (GLUE; one label
//                   is regression, as STS-B).
// ModernBERT's (ModernBertForQuestionAnswering, ...ForSequenceClassification) put its prediction head
// (prediction_head.h: head.dense, head.norm) and classifier_dropout before the output layer, named classifier in
// both: [2, H] over every token for spans, [num_labels, H] over the encoder's pooling (its CLS token or the mean of
// its tokens, classifier_pooling) for classes.
// Google's run_squad.py / run_classifier.py hold the same tensors as cls/squad/output_weights and output_weights
// (ckpt/name_mapping.h maps them).
#pragma once

#include "model_config/bert_config.h"
#include "model/parameters.h"
#include "model/prediction_head.h"

#include <ATen/Tensor.h>

#include <cstdint>
#include <optional>

namespace bk {

struct SpanLogits {
  at::Tensor start, end;  // [B, T] float
};

class SpanHead {
 public:
  SpanHead(const BertConfig& config, ParameterSet& params);
  // sequence [B, T, H] (or a stream's [N, H]); dropout only when `training`.
  SpanLogits forward(const at::Tensor& sequence, bool training) const;

 private:
  std::optional<PredictionHead> transform_;  // ModernBERT's
  double dropout_ = 0;
  at::Tensor w_, b_;
};

class ClassifierHead {
 public:
  ClassifierHead(const BertConfig& config, int64_t num_labels, ParameterSet& params);
  // pooled [B, H] -> logits [B, num_labels]; dropout (hidden_dropout_prob; ModernBERT's classifier_dropout) only
  // when `training`.
  at::Tensor forward(const at::Tensor& pooled, bool training) const;

 private:
  std::optional<PredictionHead> transform_;  // ModernBERT's
  double dropout_ = 0;
  at::Tensor w_, b_;
};

}  // namespace bk
