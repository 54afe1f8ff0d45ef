// The fine-tuning models, parameter for parameter HF transformers' classes of the same names:
//   BertForQuestionAnswering       bert.* without the pooler, then qa_outputs (SpanHead);
//   BertForSequenceClassification  bert.* with the pooler, then classifier (ClassifierHead);
// and for a ModernBERT config ModernBertForQuestionAnswering and ModernBertForSequenceClassification (model.*,
// then head.* and classifier.*: finetune_heads.h).
#pragma once

#include "model/bert_base.h"
#include "model/encoder.h"
#include "model/finetune_heads.h"

namespace bk {

class BertForQuestionAnswering : public BertModelBase {
 public:
  explicit BertForQuestionAnswering(const BertConfig& config);
  // int64 [B, T] inputs as BertForPreTraining::forward takes them.
  SpanLogits forward(const at::Tensor& input_ids, const at::Tensor& segment_ids, const at::Tensor& attention_mask);
  // Unpadded: the logits of the stream's real tokens only, [N] each in stream order (model/token_stream.h).
  SpanLogits forward_stream(const at::Tensor& input_ids, const at::Tensor& segment_ids, const TokenStream& stream);

 private:
  std::unique_ptr<Encoder> encoder_;
  SpanHead head_;
};

class BertForSequenceClassification : public BertModelBase {
 public:
  BertForSequenceClassification(const BertConfig& config, int64_t num_labels);
  at::Tensor forward(const at::Tensor& input_ids, const at::Tensor& segment_ids, const at::Tensor& attention_mask);
  // Unpadded: the rows' real tokens as one stream (model/token_stream.h), one sequence per row; the same logits.
  at::Tensor forward_stream(const at::Tensor& input_ids, const at::Tensor& segment_ids, const TokenStream& stream);
  int64_t num_labels() const { return num_labels_; }

 private:
  int64_t num_labels_;
  std::unique_ptr<Encoder> encoder_;
  ClassifierHead head_;
};

}  // namespace bk
