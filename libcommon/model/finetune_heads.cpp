#include "model/finetune_heads.h"

#include <ATen/ATen.h>

namespace bk {

SpanHead::SpanHead(const BertConfig& config, ParameterSet& params) {
  w_ = params.add("qa_outputs.weight", {2, config.hidden_size});
  b_ = params.add("qa_outputs.bias", {2});
}

SpanLogits SpanHead::forward(const at::Tensor& sequence) const {
  const auto parts = at::linear(sequence, w_, b_).unbind(-1);  // [B, T, 2] -> two [B, T]
  return {parts[0], parts[1]};
}

ClassifierHead::ClassifierHead(const BertConfig& config, int64_t num_labels, ParameterSet& params)
    : dropout_(config.hidden_dropout_prob) {
  w_ = params.add("classifier.weight", {num_labels, config.hidden_size});
  b_ = params.add("classifier.bias", {num_labels});
}

at::Tensor ClassifierHead::forward(const at::Tensor& pooled, bool training) const {
  const at::Tensor x = training && dropout_ > 0 ? at::dropout(pooled, dropout_, true) : pooled;
  return at::linear(x, w_, b_);
}

}  // namespace bk
