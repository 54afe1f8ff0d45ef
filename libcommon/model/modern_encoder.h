// ModernBERT's encoder (Warner et al. 2024), tensor for tensor HF transformers' ModernBertModel under its names:
//   model.embeddings.tok_embeddings.weight, model.embeddings.norm.weight;
//   model.layers.N.attn_norm.weight (none in layer 0), .attn.Wqkv.weight (q, k, v as row blocks), .attn.Wo.weight,
//   .mlp_norm.weight, .mlp.Wi.weight (input rows, then gate rows), .mlp.Wo.weight;  model.final_norm.weight
// (each LayerNorm's .bias and each Linear's .bias only where the config's norm_bias / attention_bias / mlp_bias says).
//
// x = dropout(norm(embedding(ids))); per layer, pre-LN: x += Wo(attention(rotary(Wqkv(attn_norm(x))))),
// x += Wo(act(input) * gate) of Wi(mlp_norm(x)); then final_norm. Rotary embeddings rotate halves (GPT-NeoX style)
// with the layer type's theta; local layers attend within |query - key| <= local_attention / 2. No token types:
// segment ids are ignored. No pooler: with_pooler gives EncoderOutput::pooled as ModernBertForSequenceClassification
// pools before its head, the CLS token's state or the mean over the sequence's real tokens (classifier_pooling);
// without it pooled is undefined.
#pragma once

#include "model/attention.h"
#include "model/encoder.h"

#include <utility>

namespace bk {

class ModernBertEncoder : public Encoder {
 public:
  ModernBertEncoder(const BertConfig& config, int64_t padded_vocab, ParameterSet& params, bool with_pooler);

  EncoderOutput forward(const at::Tensor& input_ids, const at::Tensor& segment_ids, const at::Tensor& attention_mask,
                        bool training) const override;
  EncoderOutput forward_stream(const at::Tensor& input_ids, const at::Tensor& segment_ids, const TokenStream& stream,
                               bool training) const override;
  const at::Tensor& word_embeddings() const override { return tok_emb_; }

 private:
  struct Layer {
    bool global = true;
    at::Tensor attn_norm_w, attn_norm_b;  // undefined in layer 0 (HF's nn.Identity)
    at::Tensor wqkv_w, wqkv_b, wo_w, wo_b;
    at::Tensor mlp_norm_w, mlp_norm_b, wi_w, wi_b, mlp_wo_w, mlp_wo_b;
  };
  // cos and (-sin, sin) of each layer type for `positions` ([..., 1, 1, head size]: over q and k, and the heads).
  struct Rotary {
    at::Tensor global_cos, global_sin, local_cos, local_sin;
  };
  Rotary rotary(const at::Tensor& positions) const;
  // The keys global and local layers see in one pass, over the real tokens of key_mask ([B, T] rows, or the
  // stream's padded layout).
  struct Scopes {
    AttentionScope global, local;
  };
  Scopes attention_scopes(const at::Tensor& key_mask) const;
  // x: the residual stream, [B, T, H], or [N, H] with `stream`.
  at::Tensor layer_forward(const Layer& l, const at::Tensor& x, const Rotary& rope, const Scopes& scopes,
                           const TokenStream* stream, bool training) const;
  at::Tensor norm(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b) const;
  at::Tensor embed(const at::Tensor& input_ids, bool training) const;
  void check_length(int64_t length) const;

  BertConfig config_;
  bool with_pooler_ = false;
  at::Tensor tok_emb_, emb_norm_w_, emb_norm_b_, final_norm_w_, final_norm_b_;
  std::vector<Layer> layers_;
};

}  // namespace bk
