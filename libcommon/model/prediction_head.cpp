#include "model/prediction_head.h"

#include <ATen/ATen.h>

namespace bk {

PredictionHead::PredictionHead(const BertConfig& config, ParameterSet& params) : config_(config) {
  const int64_t h = config_.hidden_size;
  if (config_.is_modernbert()) {
    dense_w_ = params.add("head.dense.weight", {h, h});
    if (config_.modern.classifier_bias) dense_b_ = params.add("head.dense.bias", {h});
    norm_w_ = params.add("head.norm.weight", {h});
    if (config_.modern.norm_bias) norm_b_ = params.add("head.norm.bias", {h});
    return;
  }
  dense_w_ = params.add("cls.predictions.transform.dense.weight", {h, h});
  dense_b_ = params.add("cls.predictions.transform.dense.bias", {h});
  norm_w_ = params.add("cls.predictions.transform.LayerNorm.weight", {h});
  norm_b_ = params.add("cls.predictions.transform.LayerNorm.bias", {h});
}

at::Tensor PredictionHead::forward(const at::Tensor& x) const {
  const at::Tensor hidden = bert_activation(config_.head_activation(), at::linear(x, dense_w_, dense_b_));
  return at::layer_norm(hidden, {config_.hidden_size}, norm_w_, norm_b_, config_.layer_norm_eps);
}

}  // namespace bk
