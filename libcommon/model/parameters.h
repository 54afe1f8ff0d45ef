// Parameters under dotted HF names: the model's pieces (encoder.h, pretraining_heads.h) register theirs on the
// owning module through one ParameterSet, so Module::named_parameters() and the model's own ordered list spell the
// same names, in registration order.
#pragma once

#include <ATen/Tensor.h>
#include <torch/nn/module.h>

#include <string>
#include <vector>

namespace bk {

struct NamedParameter {
  std::string name;
  at::Tensor tensor;
};

class ParameterSet {
 public:
  explicit ParameterSet(torch::nn::Module& owner) : owner_(owner) {}

  // A new float32 parameter (uninitialised) named `dotted` ("bert.encoder.layer.0.output.dense.weight"): the
  // intermediate modules are created on the way.
  at::Tensor add(const std::string& dotted, at::IntArrayRef shape);

  const std::vector<NamedParameter>& list() const { return list_; }

 private:
  torch::nn::Module& owner_;
  std::vector<NamedParameter> list_;
};

// Dropout with probability p when training (and p > 0); x itself otherwise.
at::Tensor dropout_if(const at::Tensor& x, double p, bool training);

// An activation by its config name: gelu (erf), gelu_new / gelu_tanh / gelu_pytorch_tanh (tanh approximation),
// relu, silu.
at::Tensor bert_activation(const std::string& hidden_act, const at::Tensor& x);

}  // namespace bk
