#include "model/finetune_heads.h"

#include <ATen/ATen.h>

namespace bk {

SpanHead::SpanHead(const BertConfig& config, ParameterSet& params) {
  if (config.is_modernbert()) {
    transform_.emplace(config, params);
    dropout_ = config.modern.classifier_dropout;
    w_ = params.add("classifier.weight", {2, config.hidden_size});
    b_ = params.add("classifier.bias", {2});
    return;
  }
  w_ = params.add("qa_outputs.weight", {2, config.hidden_size});
  b_ = params.add("qa_outputs.bias", {2});
}

SpanLogits SpanHead::forward(const at::Tensor& sequence, bool training) const {
  const at::Tensor x = transform_ ? dropout_if(transform_->forward(sequence), dropout_, training) : sequence;
  const auto parts = at::linear(x, w_, b_).unbind(-1);  // [B, T, 2] -> two [B, T]
  return {parts[0], parts[1]};
}

ClassifierHead::ClassifierHead(const BertConfig& config, int64_t num_labels, ParameterSet& params)
    : dropout_(config.is_modernbert() ? config.modern.classifier_dropout : config.hidden_dropout_prob) {
  if (config.is_modernbert()) transform_.emplace(config, params);
  w_ = params.add("classifier.weight", {num_labels, config.hidden_size});
  b_ = params.add("classifier.bias", {num_labels});
}

at::Tensor ClassifierHead::forward(const at::Tensor& pooled, bool training) const {
  const at::Tensor x = dropout_if(transform_ ? transform_->forward(pooled) : pooled, dropout_, training);
  return at::linear(x, w_, b_);
}

}  // namespace bk
