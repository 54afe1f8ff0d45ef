#include "model/finetune_models.h"

#include "util/error.h"

namespace bk {

BertForQuestionAnswering::BertForQuestionAnswering(const BertConfig& config)
    : BertModelBase(config.is_modernbert() ? "ModernBertForQuestionAnswering" : "BertForQuestionAnswering", config),
      encoder_(make_encoder(config_, padded_vocab_, params_, /*with_pooler=*/false)),
      head_(config_, params_) {
  add_vocab_rows(encoder_->word_embeddings());
  reset_parameters();
}

SpanLogits BertForQuestionAnswering::forward(const at::Tensor& input_ids, const at::Tensor& segment_ids,
                                             const at::Tensor& attention_mask) {
  return head_.forward(encoder_->forward(input_ids, segment_ids, attention_mask, is_training()).sequence, is_training());
}

SpanLogits BertForQuestionAnswering::forward_stream(const at::Tensor& input_ids, const at::Tensor& segment_ids,
                                                    const TokenStream& stream) {
  return head_.forward(encoder_->forward_stream(input_ids, segment_ids, stream, is_training()).sequence, is_training());
}

namespace {

int64_t checked_labels(int64_t num_labels) {
  if (num_labels < 1) fail("BertForSequenceClassification: num_labels must be positive, got {}", num_labels);
  return num_labels;
}

}  // namespace

BertForSequenceClassification::BertForSequenceClassification(const BertConfig& config, int64_t num_labels)
    : BertModelBase(config.is_modernbert() ? "ModernBertForSequenceClassification" : "BertForSequenceClassification", config),
      num_labels_(checked_labels(num_labels)),
      encoder_(make_encoder(config_, padded_vocab_, params_)),
      head_(config_, num_labels_, params_) {
  add_vocab_rows(encoder_->word_embeddings());
  reset_parameters();
}

at::Tensor BertForSequenceClassification::forward(const at::Tensor& input_ids, const at::Tensor& segment_ids,
                                                  const at::Tensor& attention_mask) {
  return head_.forward(encoder_->forward(input_ids, segment_ids, attention_mask, is_training()).pooled, is_training());
}

at::Tensor BertForSequenceClassification::forward_stream(const at::Tensor& input_ids, const at::Tensor& segment_ids,
                                                         const TokenStream& stream) {
  return head_.forward(encoder_->forward_stream(input_ids, segment_ids, stream, is_training()).pooled, is_training());
}

}  // namespace bk
