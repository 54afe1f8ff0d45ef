#include "model/parameters.h"

#include <ATen/ATen.h>

#include <memory>

namespace bk {

at::Tensor ParameterSet::add(const std::string& dotted, at::IntArrayRef shape) {
  torch::nn::Module* module = &owner_;
  size_t start = 0;
  for (size_t dot = dotted.find('.'); dot != std::string::npos; start = dot + 1, dot = dotted.find('.', start)) {
    const std::string part = dotted.substr(start, dot - start);
    auto children = module->named_children();
    if (auto* found = children.find(part)) {
      module = found->get();
    } else {
      module = module->register_module(part, std::make_shared<torch::nn::Module>(part)).get();
    }
  }
  at::Tensor t = module->register_parameter(dotted.substr(start), at::empty(shape, at::kFloat));
  list_.push_back({dotted, t});
  return t;
}

at::Tensor dropout_if(const at::Tensor& x, double p, bool training) {
  return training && p > 0 ? at::dropout(x, p, true) : x;
}

at::Tensor bert_activation(const std::string& hidden_act, const at::Tensor& x) {
  if (hidden_act == "gelu") return at::gelu(x);
  if (hidden_act == "relu") return at::relu(x);
  if (hidden_act == "silu") return at::silu(x);
  return at::gelu(x, "tanh");  // gelu_new / gelu_tanh / gelu_pytorch_tanh (BertConfig::validate admits nothing else)
}

}  // namespace bk
