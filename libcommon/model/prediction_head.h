// The transform before a head's output layer: dense, activation, LayerNorm. BERT's masked-LM head has it as
// cls.predictions.transform.{dense,LayerNorm}; ModernBERT's every head (masked LM, classification, spans) as
// head.{dense,norm}, their biases only where the config's classifier_bias and norm_bias say.
#pragma once

#include "model_config/bert_config.h"
#include "model/parameters.h"

#include <ATen/Tensor.h>

namespace bk {

class PredictionHead {
 public:
  // Registers its parameters in `params` under the architecture's names.
  PredictionHead(const BertConfig& config, ParameterSet& params);
  at::Tensor forward(const at::Tensor& x) const;  // [..., H] -> [..., H]

 private:
  BertConfig config_;
  at::Tensor dense_w_, dense_b_, norm_w_, norm_b_;
};

}  // namespace bk
