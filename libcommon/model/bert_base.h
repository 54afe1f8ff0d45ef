// What every BERT model here shares (bert.h pretraining, finetune_models.h question answering and classification):
// the config, the parameters under HF names in registration order, BERT's initialisation, and state dicts.
//
// Vocabulary padding: the word embeddings (and the MLM decoder bias) hold padded_vocab_size(8) rows so the decoder
// matmul has a friendly shape; the extra rows are zero, are never looked up, and are cut off every output and every
// export (state_dict): outside these classes the vocabulary is vocab_size. The padded rows get zero gradients, so an
// optimizer leaves them at zero. Only named_parameter_list() (for optimizers) shows the padded tensors.
#pragma once

#include "model_config/bert_config.h"
#include "model/parameters.h"

#include <ATen/Tensor.h>
#include <torch/nn/module.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace bk {

class BertModelBase : public torch::nn::Module {
 public:
  const BertConfig& config() const { return config_; }
  int64_t padded_vocab_size() const { return padded_vocab_; }

  // BERT's initialisation: Linear and Embedding weights ~ normal(0, initializer_range), biases 0, LayerNorm 1 and 0,
  // padded vocabulary rows 0, in registration order; ModernBERT's as HF's (truncated normals, bert_base.cpp). Draws from LibTorch's default generator (seed it with
  // at::manual_seed).
  void reset_parameters();

  // Every trainable tensor with its HF name, in registration order (embeddings, layers, pooler, heads).
  std::vector<NamedParameter> named_parameter_list() const { return params_.list(); }
  // The rows of one of those tensors that are the model's: vocab_size for the padded vocabulary's, all for the others.
  int64_t real_rows(const at::Tensor& t) const { return is_vocab_rows(t) ? config_.vocab_size : t.size(0); }

  // HF names -> detached views of the live parameters, vocabulary cut to vocab_size (clone for a snapshot).
  std::map<std::string, at::Tensor> state_dict() const;

  // Copies the tensors in (any dtype/device; converted). Shapes must match the config exactly (errors name the
  // tensor). strict: a missing or unexpected key is an error listing all of them; otherwise absent tensors keep
  // their values and unknown ones are ignored. `where` names the source in errors (a file). Tensors that
  // checkpoints may carry but a model needs none of (tied decoder copies, the position_ids buffer) are ignored.
  void load_state_dict(const std::map<std::string, at::Tensor>& tensors, bool strict = true,
                       const std::string& where = "state dict");

 protected:
  BertModelBase(const char* name, const BertConfig& config);

  // A tensor whose rows are the padded vocabulary (cut to vocab_size in state dicts).
  void add_vocab_rows(const at::Tensor& tensor) { vocab_rows_.push_back(tensor); }

  BertConfig config_;
  int64_t padded_vocab_ = 0;
  ParameterSet params_;  // registration order, HF names

 private:
  bool is_vocab_rows(const at::Tensor& t) const;
  std::vector<at::Tensor> vocab_rows_;
};

}  // namespace bk
