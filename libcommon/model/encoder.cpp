#include "model/encoder.h"

#include "model/attention.h"
#include "model/fused_gelu.h"
#include "model/fused_layer_norm.h"
#include "model/token_stream.h"
#include "model/weight_cast.h"
#include "util/error.h"

#include <ATen/ATen.h>

#include <fmt/format.h>

namespace bk {

BertEncoder::BertEncoder(const BertConfig& config, int64_t padded_vocab, ParameterSet& params, bool with_pooler)
    : config_(config) {
  const int64_t h = config_.hidden_size, f = config_.intermediate_size;
  word_emb_ = params.add("bert.embeddings.word_embeddings.weight", {padded_vocab, h});
  pos_emb_ = params.add("bert.embeddings.position_embeddings.weight", {config_.max_position_embeddings, h});
  type_emb_ = params.add("bert.embeddings.token_type_embeddings.weight", {config_.type_vocab_size, h});
  emb_ln_w_ = params.add("bert.embeddings.LayerNorm.weight", {h});
  emb_ln_b_ = params.add("bert.embeddings.LayerNorm.bias", {h});
  for (int64_t i = 0; i < config_.num_hidden_layers; ++i) {
    const std::string p = fmt::format("bert.encoder.layer.{}.", i);
    Layer l;
    l.q_w = params.add(p + "attention.self.query.weight", {h, h});
    l.q_b = params.add(p + "attention.self.query.bias", {h});
    l.k_w = params.add(p + "attention.self.key.weight", {h, h});
    l.k_b = params.add(p + "attention.self.key.bias", {h});
    l.v_w = params.add(p + "attention.self.value.weight", {h, h});
    l.v_b = params.add(p + "attention.self.value.bias", {h});
    l.ao_w = params.add(p + "attention.output.dense.weight", {h, h});
    l.ao_b = params.add(p + "attention.output.dense.bias", {h});
    l.ao_ln_w = params.add(p + "attention.output.LayerNorm.weight", {h});
    l.ao_ln_b = params.add(p + "attention.output.LayerNorm.bias", {h});
    l.in_w = params.add(p + "intermediate.dense.weight", {f, h});
    l.in_b = params.add(p + "intermediate.dense.bias", {f});
    l.out_w = params.add(p + "output.dense.weight", {h, f});
    l.out_b = params.add(p + "output.dense.bias", {h});
    l.out_ln_w = params.add(p + "output.LayerNorm.weight", {h});
    l.out_ln_b = params.add(p + "output.LayerNorm.bias", {h});
    layers_.push_back(std::move(l));
  }
  if (!with_pooler) return;
  pool_w_ = params.add("bert.pooler.dense.weight", {h, h});
  pool_b_ = params.add("bert.pooler.dense.bias", {h});
}

NormOutput BertEncoder::layer_forward(const Layer& l, const NormOutput& x, const AttentionScope& scope,
                                      const TokenStream* stream, bool training) const {
  // Under autocast the weights are cast where they are first needed, in three groups of one launch each
  // (model/weight_cast.h): backward then hands each group's gradients on (to the all-reduce's buckets) as soon as
  // the part of the layer that used them is done.
  // One GEMM for Q, K and V: the three weights (and biases) concatenated, by the cast itself where it can.
  const std::vector<at::Tensor> qkv_wb = autocast_concatenated({l.q_w, l.k_w, l.v_w, l.q_b, l.k_b, l.v_b}, {3, 3});
  const int64_t h = config_.hidden_size, heads = config_.num_attention_heads;
  const at::Tensor qkv = at::linear(x.hidden, qkv_wb[0], qkv_wb[1]);
  const double attn_p = training ? config_.attention_probs_dropout_prob : 0.0;
  const at::Tensor context =
      stream != nullptr
          ? stream_attention(qkv.view({qkv.size(0), 3, heads, h / heads}), *stream, scope, attn_p)
          : padded_attention(qkv.view({x.hidden.size(0), x.hidden.size(1), 3, heads, h / heads}), scope, attn_p);
  const double p = config_.hidden_dropout_prob, eps = config_.layer_norm_eps;
  const std::vector<at::Tensor> ao = autocast_weights({l.ao_w, l.ao_b, l.ao_ln_w, l.ao_ln_b});
  const NormOutput attn =
      dense_dropout_add_layer_norm(context, ao[0], ao[1], x.residual, ao[2], ao[3], p, eps, training);
  const std::vector<at::Tensor> ffn = autocast_weights({l.in_w, l.in_b, l.out_w, l.out_b, l.out_ln_w, l.out_ln_b});
  const at::Tensor ff = dense_activation(config_.hidden_act, attn.hidden, ffn[0], ffn[1]);
  return dense_dropout_add_layer_norm(ff, ffn[2], ffn[3], attn.residual, ffn[4], ffn[5], p, eps, training);
}

// Token 0 ([PAD]) is the padding index, as HF's BertEmbeddings declares it: its row gets no gradient from the
// lookup (padded positions reach the loss in SQuAD's softmax over every position).
at::Tensor BertEncoder::embed(const at::Tensor& input_ids, const at::Tensor& positions, const at::Tensor& segment_ids,
                              bool training) const {
  at::Tensor x = at::embedding(word_emb_, input_ids, /*padding_idx=*/0) + positions;
  x = segment_ids.defined() ? x + at::embedding(type_emb_, segment_ids) : x + type_emb_[0];
  return dropout_if(autocast_layer_norm(x, emb_ln_w_, emb_ln_b_, config_.layer_norm_eps), config_.hidden_dropout_prob,
                    training);
}

EncoderOutput BertEncoder::forward(const at::Tensor& input_ids, const at::Tensor& segment_ids,
                                   const at::Tensor& attention_mask, bool training) const {
  if (input_ids.dim() != 2) fail("BERT: input_ids must be [batch, seq], got {} dimensions", input_ids.dim());
  const int64_t t = input_ids.size(1);
  if (t > config_.max_position_embeddings)
    fail("BERT: sequence length {} exceeds max_position_embeddings {}", t, config_.max_position_embeddings);

  const at::Tensor embedded = embed(input_ids, pos_emb_.narrow(0, 0, t), segment_ids, training);

  const AttentionScope scope(kNoAttentionWindow, attention_mask.defined() ? attention_mask.ne(0) : at::Tensor());
  NormOutput x{embedded, embedded};
  for (const Layer& layer : layers_) x = layer_forward(layer, x, scope, nullptr, training);
  if (!pool_w_.defined()) return {x.hidden, {}};
  return {x.hidden, at::tanh(at::linear(x.hidden.select(1, 0), pool_w_, pool_b_))};
}

EncoderOutput BertEncoder::forward_stream(const at::Tensor& input_ids, const at::Tensor& segment_ids,
                                          const TokenStream& stream, bool training) const {
  if (stream.max_seqlen > config_.max_position_embeddings)
    fail("BERT: sequence length {} exceeds max_position_embeddings {}", stream.max_seqlen,
         config_.max_position_embeddings);
  // Unpad once, before the first layer; everything after works on the [N, H] stream.
  const at::Tensor ids = input_ids.reshape({-1}).index_select(0, stream.token_index);
  const at::Tensor segments =
      segment_ids.defined() ? segment_ids.reshape({-1}).index_select(0, stream.token_index) : at::Tensor();
  const at::Tensor embedded = embed(ids, at::embedding(pos_emb_, stream.positions), segments, training);
  const AttentionScope scope(kNoAttentionWindow, stream.padded_mask);
  NormOutput x{embedded, embedded};
  for (const Layer& layer : layers_) x = layer_forward(layer, x, scope, &stream, training);
  if (!pool_w_.defined()) return {x.hidden, {}};
  return {x.hidden, at::tanh(at::linear(x.hidden.index_select(0, stream.first_tokens), pool_w_, pool_b_))};
}

}  // namespace bk
