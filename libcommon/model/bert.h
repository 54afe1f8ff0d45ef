// BertForPreTraining in LibTorch: the encoder of Devlin et al. (post-LayerNorm) with the masked-LM and
// next-sentence heads, parameter for parameter what HF transformers' BertForPreTraining and NVIDIA's
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

#include <ATen/Tensor.h>
#include <torch/nn/module.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace bk {

struct NamedParameter {
  std::string name;
  at::Tensor tensor;
};

struct BertOutput {
  // With masked_lm_positions [B, P]: [B*P, vocab_size] (row b*P + j = sample b, slot j); without: [B, T, vocab_size].
  at::Tensor mlm_logits;
  at::Tensor nsp_logits;  // [B, 2]; index 1 = random next
};

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
  struct Layer {
    at::Tensor q_w, q_b, k_w, k_b, v_w, v_b;     // attention.self.{query,key,value}
    at::Tensor ao_w, ao_b, ao_ln_w, ao_ln_b;    // attention.output.dense, attention.output.LayerNorm
    at::Tensor in_w, in_b;                      // intermediate.dense
    at::Tensor out_w, out_b, out_ln_w, out_ln_b;  // output.dense, output.LayerNorm
  };
  at::Tensor activation(const at::Tensor& x) const;
  at::Tensor dropout(const at::Tensor& x, double p);
  at::Tensor layer_forward(const Layer& layer, const at::Tensor& x, const at::Tensor& mask);

  BertConfig config_;
  int64_t padded_vocab_ = 0;
  std::vector<NamedParameter> params_;  // registration order, HF names
  at::Tensor word_emb_, pos_emb_, type_emb_, emb_ln_w_, emb_ln_b_;
  std::vector<Layer> layers_;
  at::Tensor pool_w_, pool_b_;
  at::Tensor tr_w_, tr_b_, tr_ln_w_, tr_ln_b_, mlm_bias_;
  at::Tensor nsp_w_, nsp_b_;
};

}  // namespace bk
