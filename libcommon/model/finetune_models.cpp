#include "model/finetune_models.h"

#include "util/error.h"

namespace bk {

namespace {

// The fine-tuning heads here are BERT's; ModernBERT's (a prediction head before the classifier) are not built yet.
const BertConfig& bert_layout(const BertConfig& config) {
  if (config.is_modernbert())
    fail("fine-tuning a ModernBERT model is not supported yet (its pretraining, evaluation and conversion are)");
  return config;
}

}  // namespace

BertForQuestionAnswering::BertForQuestionAnswering(const BertConfig& config)
    : BertModelBase("BertForQuestionAnswering", bert_layout(config)),
      encoder_(config_, padded_vocab_, params_, /*with_pooler=*/false),
      head_(config_, params_) {
  add_vocab_rows(encoder_.word_embeddings());
  reset_parameters();
}

SpanLogits BertForQuestionAnswering::forward(const at::Tensor& input_ids, const at::Tensor& segment_ids,
                                             const at::Tensor& attention_mask) {
  return head_.forward(encoder_.forward(input_ids, segment_ids, attention_mask, is_training()).sequence);
}

SpanLogits BertForQuestionAnswering::forward_stream(const at::Tensor& input_ids, const at::Tensor& segment_ids,
                                                    const TokenStream& stream) {
  return head_.forward(encoder_.forward_stream(input_ids, segment_ids, stream, is_training()).sequence);
}

namespace {

int64_t checked_labels(int64_t num_labels) {
  if (num_labels < 1) fail("BertForSequenceClassification: num_labels must be positive, got {}", num_labels);
  return num_labels;
}

}  // namespace

BertForSequenceClassification::BertForSequenceClassification(const BertConfig& config, int64_t num_labels)
    : BertModelBase("BertForSequenceClassification", bert_layout(config)),
      num_labels_(checked_labels(num_labels)),
      encoder_(config_, padded_vocab_, params_),
      head_(config_, num_labels_, params_) {
  add_vocab_rows(encoder_.word_embeddings());
  reset_parameters();
}

at::Tensor BertForSequenceClassification::forward(const at::Tensor& input_ids, const at::Tensor& segment_ids,
                                                  const at::Tensor& attention_mask) {
  return head_.forward(encoder_.forward(input_ids, segment_ids, attention_mask, is_training()).pooled, is_training());
}

at::Tensor BertForSequenceClassification::forward_stream(const at::Tensor& input_ids, const at::Tensor& segment_ids,
                                                         const TokenStream& stream) {
  return head_.forward(encoder_.forward_stream(input_ids, segment_ids, stream, is_training()).pooled, is_training());
}

}  // namespace bk
