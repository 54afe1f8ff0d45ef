// BertForPreTraining in LibTorch: the encoder of Devlin et al. (encoder.h) with the masked-LM and next-sentence
// heads (pretraining_heads.h), parameter for parameter what HF transformers' BertForPreTraining and NVIDIA's
// DeepLearningExamples model hold, under the same names.
//
// Names (state_dict(), named_parameter_list()): bert.embeddings.{word,position,token_type}_embeddings.weight,
// bert.embeddings.LayerNorm.{weight,bias}, bert.encoder.layer.N.attention.self.{query,key,value}.{weight,bias},
// bert.encoder.layer.N.attention.output.{dense,LayerNorm}.{weight,bias}, bert.encoder.layer.N.intermediate.dense.*,
// bert.encoder.layer.N.output.{dense,LayerNorm}.*, bert.pooler.dense.*, cls.predictions.transform.{dense,LayerNorm}.*,
// cls.predictions.bias, cls.seq_relationship.{weight,bias}.
//
// The MLM decoder is tied to the word embeddings, so there is no cls.predictions.decoder.weight of its own; the state
// dict leaves it out, as transformers' save_pretrained does (from_pretrained ties it back). load_state_dict accepts and
// ignores cls.predictions.decoder.weight / cls.predictions.decoder.bias (copies of tied tensors) and the
// bert.embeddings.position_ids buffer older transformers versions saved.
//
// Vocabulary padding: the word embeddings and the decoder bias hold padded_vocab_size(8) rows so the decoder matmul
// has a friendly shape; the extra rows are zero, are never looked up, and are cut off every output (logits) and every
// export (state_dict) — outside this class the vocabulary is vocab_size. The padded rows get zero gradients, so an
// optimizer leaves them at zero. Only named_parameter_list() (for optimizers) shows the padded tensors.
#pragma once

#include "ckpt/bert_config.h"
#include "model/encoder.h"
#include "model/parameters.h"
#include "model/pretraining_heads.h"

#include <ATen/Tensor.h>
#include <torch/nn/module.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace bk {

class BertForPreTraining : public torch::nn::Module {
 public:
  explicit BertForPreTraining(const BertConfig& config);

  // input_ids, segment_ids, attention_mask: int64 [B, T] (attention_mask 1 = real token; an undefined mask means no
  // padding, which lets SDPA pick its fastest kernel). masked_lm_positions: int64 [B, P] or undefined.
  // Dropout follows train()/eval().
  BertOutput forward(const at::Tensor& input_ids, const at::Tensor& segment_ids, const at::Tensor& attention_mask,
                     const at::Tensor& masked_lm_positions = {});

  const BertConfig& config() const { return config_; }
  int64_t padded_vocab_size() const { return padded_vocab_; }

  // BERT's initialisation: Linear and Embedding weights ~ normal(0, initializer_range), biases 0, LayerNorm 1 and 0,
  // padded vocabulary rows 0. Draws from LibTorch's default generator (seed it with torch::manual_seed / at::manual_seed).
  void reset_parameters();

  // Every trainable tensor with its HF name, in a fixed order (embeddings, layers, pooler, heads). The word embeddings
  // and cls.predictions.bias are the padded tensors; see the note above.
  std::vector<NamedParameter> named_parameter_list() const;

  // HF names -> detached views of the live parameters, vocabulary cut to vocab_size (clone for a snapshot).
  std::map<std::string, at::Tensor> state_dict() const;

  // Copies the tensors in (any dtype/device; converted). Shapes must match the config exactly (errors name the
  // tensor). strict: a missing or unexpected key is an error listing all of them; otherwise absent tensors keep
  // their values and unknown ones are ignored. `where` names the source in errors (a file).
  void load_state_dict(const std::map<std::string, at::Tensor>& tensors, bool strict = true,
                       const std::string& where = "state dict");

 private:
  BertConfig config_;
  int64_t padded_vocab_ = 0;
  ParameterSet params_;  // registration order, HF names
  BertEncoder encoder_;
  PretrainingHeads heads_;
};

}  // namespace bk
