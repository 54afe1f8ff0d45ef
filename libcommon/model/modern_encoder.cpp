#include "model/modern_encoder.h"

#include "model/attention.h"
#include "model/token_stream.h"
#include "util/error.h"

#include <ATen/ATen.h>

#include <fmt/format.h>

namespace bk {

namespace {

// The inverse frequencies of rotary embeddings with base theta over a head of size d, in float32 as transformers
// computes them: 1 / theta^(2i / d).
at::Tensor inverse_frequencies(double theta, int64_t d, const at::Device& device) {
  const at::Tensor exponents = at::arange(0, d, 2, at::TensorOptions().dtype(at::kFloat).device(device)) / d;
  return at::reciprocal(at::pow(theta, exponents));
}

// x * cos + rotate_half(x) * sin in float32, back in x's dtype, where rotate_half(x) = (-x2, x1) for x = (x1, x2):
// here the halves swapped (a flip) times signed_sin = (-sin, sin), in one multiply-add.
at::Tensor apply_rotary(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& signed_sin) {
  const at::Tensor xf = x.to(at::kFloat);
  const int64_t d = x.size(-1);
  const at::Tensor swapped = xf.unflatten(-1, {2, d / 2}).flip(-2).flatten(-2);
  return at::addcmul(xf * cos, swapped, signed_sin).to(x.scalar_type());
}

}  // namespace

ModernBertEncoder::ModernBertEncoder(const BertConfig& config, int64_t padded_vocab, ParameterSet& params,
                                     bool with_pooler)
    : config_(config), with_pooler_(with_pooler) {
  const ModernBertSettings& m = config_.modern;
  const int64_t h = config_.hidden_size, f = config_.intermediate_size;
  auto add_norm = [&](const std::string& name, at::Tensor& w, at::Tensor& b) {
    w = params.add(name + ".weight", {h});
    if (m.norm_bias) b = params.add(name + ".bias", {h});
  };
  auto add_linear = [&](const std::string& name, int64_t out, int64_t in, bool bias, at::Tensor& w, at::Tensor& b) {
    w = params.add(name + ".weight", {out, in});
    if (bias) b = params.add(name + ".bias", {out});
  };
  tok_emb_ = params.add("model.embeddings.tok_embeddings.weight", {padded_vocab, h});
  add_norm("model.embeddings.norm", emb_norm_w_, emb_norm_b_);
  for (int64_t i = 0; i < config_.num_hidden_layers; ++i) {
    const std::string p = fmt::format("model.layers.{}.", i);
    Layer l;
    l.global = m.is_global(i);
    if (i > 0) add_norm(p + "attn_norm", l.attn_norm_w, l.attn_norm_b);
    add_linear(p + "attn.Wqkv", 3 * h, h, m.attention_bias, l.wqkv_w, l.wqkv_b);
    add_linear(p + "attn.Wo", h, h, m.attention_bias, l.wo_w, l.wo_b);
    add_norm(p + "mlp_norm", l.mlp_norm_w, l.mlp_norm_b);
    add_linear(p + "mlp.Wi", 2 * f, h, m.mlp_bias, l.wi_w, l.wi_b);
    add_linear(p + "mlp.Wo", h, f, m.mlp_bias, l.mlp_wo_w, l.mlp_wo_b);
    layers_.push_back(std::move(l));
  }
  add_norm("model.final_norm", final_norm_w_, final_norm_b_);
}

at::Tensor ModernBertEncoder::norm(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b) const {
  return at::layer_norm(x, {config_.hidden_size}, w, b, config_.layer_norm_eps);
}

ModernBertEncoder::Rotary ModernBertEncoder::rotary(const at::Tensor& positions) const {
  const int64_t d = config_.hidden_size / config_.num_attention_heads;
  const at::Tensor pos = positions.to(at::kFloat).unsqueeze(-1);
  // [..., 1, 1, d]: over q and k, and over the heads.
  auto cos_sin = [&](double theta) {
    const at::Tensor freqs = pos * inverse_frequencies(theta, d, positions.device());
    const at::Tensor cos = at::cat({freqs, freqs}, -1).cos(), sin = freqs.sin();
    return std::pair{cos.unsqueeze(-2).unsqueeze(-2), at::cat({sin.neg(), sin}, -1).unsqueeze(-2).unsqueeze(-2)};
  };
  Rotary r;  // sin as signed_sin: (-sin, sin) over the halves
  std::tie(r.global_cos, r.global_sin) = cos_sin(config_.modern.global_rope_theta);
  std::tie(r.local_cos, r.local_sin) = cos_sin(config_.modern.local_rope_theta);
  return r;
}

at::Tensor ModernBertEncoder::layer_forward(const Layer& l, const at::Tensor& x, const Rotary& rope,
                                            const Scopes& scopes, const TokenStream* stream,
                                            bool training) const {
  const int64_t h = config_.hidden_size, heads = config_.num_attention_heads;
  const at::Tensor attn_in = l.attn_norm_w.defined() ? norm(x, l.attn_norm_w, l.attn_norm_b) : x;
  std::vector<int64_t> shape = x.sizes().vec();
  shape.back() = 3;
  shape.insert(shape.end(), {heads, h / heads});
  const at::Tensor qkv = at::linear(attn_in, l.wqkv_w, l.wqkv_b).view(shape);  // [..., 3, heads, d]
  const int64_t part = qkv.dim() - 3;
  const auto qk_v = qkv.split({2, 1}, part);  // one copy in backward, where three selects would make three
  const at::Tensor qk = l.global ? apply_rotary(qk_v[0], rope.global_cos, rope.global_sin)
                                 : apply_rotary(qk_v[0], rope.local_cos, rope.local_sin);
  const at::Tensor rotated = at::cat({qk, qk_v[1]}, part);
  const double p = config_.attention_probs_dropout_prob;
  const double attn_p = training ? p : 0.0;
  const AttentionScope& scope = l.global ? scopes.global : scopes.local;
  const at::Tensor context = stream != nullptr ? stream_attention(rotated, *stream, scope, attn_p)
                                               : padded_attention(rotated, scope, attn_p);
  const at::Tensor after_attn = x + dropout_if(at::linear(context, l.wo_w, l.wo_b), p, training);
  // Wi's rows are the input, then the gate: one product, unbound as a [..., 2, F] view (one copy in backward where
  // two slices would each allocate the product's size).
  const at::Tensor wi = at::linear(norm(after_attn, l.mlp_norm_w, l.mlp_norm_b), l.wi_w, l.wi_b);
  const auto input_gate = wi.unflatten(-1, {2, config_.intermediate_size}).unbind(-2);
  const at::Tensor glu = bert_activation(config_.hidden_act, input_gate[0]) * input_gate[1];
  return after_attn + at::linear(dropout_if(glu, config_.modern.mlp_dropout, training), l.mlp_wo_w, l.mlp_wo_b);
}

// The padding token is the embedding's padding index, as HF's nn.Embedding declares it: its row gets no gradient
// from the lookup.
at::Tensor ModernBertEncoder::embed(const at::Tensor& input_ids, bool training) const {
  const at::Tensor x = at::embedding(tok_emb_, input_ids, config_.modern.pad_token_id);
  return dropout_if(norm(x, emb_norm_w_, emb_norm_b_), config_.modern.embedding_dropout, training);
}

ModernBertEncoder::Scopes ModernBertEncoder::attention_scopes(const at::Tensor& key_mask) const {
  return {AttentionScope(kNoAttentionWindow, key_mask), AttentionScope(config_.modern.local_attention / 2, key_mask)};
}

void ModernBertEncoder::check_length(int64_t length) const {
  if (length > config_.max_position_embeddings)
    fail("ModernBERT: sequence length {} exceeds max_position_embeddings {}", length, config_.max_position_embeddings);
}

EncoderOutput ModernBertEncoder::forward(const at::Tensor& input_ids, const at::Tensor&,
                                         const at::Tensor& attention_mask, bool training) const {
  if (input_ids.dim() != 2) fail("ModernBERT: input_ids must be [batch, seq], got {} dimensions", input_ids.dim());
  const int64_t t = input_ids.size(1);
  check_length(t);
  const Rotary rope = rotary(at::arange(t, input_ids.options()).unsqueeze(0));  // [1, T, 1, 1, d]
  at::Tensor key_mask;
  if (attention_mask.defined()) key_mask = attention_mask.ne(0);
  at::Tensor x = embed(input_ids, training);
  const Scopes scopes = attention_scopes(key_mask);
  for (const Layer& layer : layers_) x = layer_forward(layer, x, rope, scopes, nullptr, training);
  const at::Tensor sequence = norm(x, final_norm_w_, final_norm_b_);
  if (!with_pooler_) return {sequence, {}};
  if (config_.modern.classifier_pooling == "cls") return {sequence, sequence.select(1, 0)};
  // The mean over the real tokens, summed then divided as transformers does (over all of them without a mask).
  const at::Tensor weights = key_mask.defined() ? key_mask.to(sequence.scalar_type())
                                                : at::ones({sequence.size(0), sequence.size(1)}, sequence.options());
  return {sequence, (sequence * weights.unsqueeze(-1)).sum(1) / weights.sum(1, /*keepdim=*/true)};
}

EncoderOutput ModernBertEncoder::forward_stream(const at::Tensor& input_ids, const at::Tensor&,
                                                const TokenStream& stream, bool training) const {
  check_length(stream.max_seqlen);
  const at::Tensor ids = input_ids.reshape({-1}).index_select(0, stream.token_index);
  const Rotary rope = rotary(stream.positions);  // [N, 1, 1, d]
  at::Tensor x = embed(ids, training);
  const Scopes scopes = attention_scopes(stream.padded_mask);
  for (const Layer& layer : layers_) x = layer_forward(layer, x, rope, scopes, &stream, training);
  const at::Tensor sequence = norm(x, final_norm_w_, final_norm_b_);
  if (!with_pooler_) return {sequence, {}};
  if (config_.modern.classifier_pooling == "cls") return {sequence, sequence.index_select(0, stream.first_tokens)};
  const at::TensorOptions longs = stream.first_tokens.options();
  const at::Tensor lengths = at::tensor(stream.lengths, longs.device(at::kCPU)).to(longs.device());
  const at::Tensor owner = at::repeat_interleave(at::arange(stream.sequences(), longs), lengths);  // [N]
  const at::Tensor sums = at::zeros({stream.sequences(), sequence.size(1)}, sequence.options()).index_add(0, owner, sequence);
  return {sequence, sums / lengths.to(sequence.scalar_type()).unsqueeze(1)};
}

}  // namespace bk
