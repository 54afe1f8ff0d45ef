#include "model/bert.h"

#include "util/error.h"

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>

#include <fmt/format.h>

#include <memory>

namespace bk {

namespace {

// Registers a parameter under a dotted HF name, creating the intermediate modules ("bert", "encoder", "layer", "0",
// ...) on the way, so that Module::named_parameters() and our own list spell the same names.
at::Tensor register_dotted(torch::nn::Module& root, const std::string& dotted, at::IntArrayRef shape) {
  torch::nn::Module* module = &root;
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
  return module->register_parameter(dotted.substr(start), at::empty(shape, at::kFloat));
}

// Concatenates weights for one fused GEMM. Under autocast the parts are cast first through autocast's cache (one
// cast per weight per autocast region), so the concatenation is done in the low precision and not repeated in fp32.
at::Tensor fuse(std::initializer_list<at::Tensor> parts) {
  const at::DeviceType device = parts.begin()->device().type();
  if (!at::autocast::is_autocast_enabled(device)) return at::cat(parts);
  const at::ScalarType dtype = at::autocast::get_autocast_dtype(device);
  std::vector<at::Tensor> cast;
  for (const auto& p : parts) cast.push_back(at::autocast::cached_cast(dtype, p, device));
  return at::cat(cast);
}

}  // namespace

BertForPreTraining::BertForPreTraining(const BertConfig& config)
    : torch::nn::Module("BertForPreTraining"), config_(config) {
  config_.validate("BertForPreTraining");
  padded_vocab_ = config_.padded_vocab_size(8);
  const int64_t h = config_.hidden_size, f = config_.intermediate_size;
  auto add = [&](const std::string& name, at::IntArrayRef shape) {
    at::Tensor t = register_dotted(*this, name, shape);
    params_.push_back({name, t});
    return t;
  };
  word_emb_ = add("bert.embeddings.word_embeddings.weight", {padded_vocab_, h});
  pos_emb_ = add("bert.embeddings.position_embeddings.weight", {config_.max_position_embeddings, h});
  type_emb_ = add("bert.embeddings.token_type_embeddings.weight", {config_.type_vocab_size, h});
  emb_ln_w_ = add("bert.embeddings.LayerNorm.weight", {h});
  emb_ln_b_ = add("bert.embeddings.LayerNorm.bias", {h});
  for (int64_t i = 0; i < config_.num_hidden_layers; ++i) {
    const std::string p = fmt::format("bert.encoder.layer.{}.", i);
    Layer l;
    l.q_w = add(p + "attention.self.query.weight", {h, h});
    l.q_b = add(p + "attention.self.query.bias", {h});
    l.k_w = add(p + "attention.self.key.weight", {h, h});
    l.k_b = add(p + "attention.self.key.bias", {h});
    l.v_w = add(p + "attention.self.value.weight", {h, h});
    l.v_b = add(p + "attention.self.value.bias", {h});
    l.ao_w = add(p + "attention.output.dense.weight", {h, h});
    l.ao_b = add(p + "attention.output.dense.bias", {h});
    l.ao_ln_w = add(p + "attention.output.LayerNorm.weight", {h});
    l.ao_ln_b = add(p + "attention.output.LayerNorm.bias", {h});
    l.in_w = add(p + "intermediate.dense.weight", {f, h});
    l.in_b = add(p + "intermediate.dense.bias", {f});
    l.out_w = add(p + "output.dense.weight", {h, f});
    l.out_b = add(p + "output.dense.bias", {h});
    l.out_ln_w = add(p + "output.LayerNorm.weight", {h});
    l.out_ln_b = add(p + "output.LayerNorm.bias", {h});
    layers_.push_back(std::move(l));
  }
  pool_w_ = add("bert.pooler.dense.weight", {h, h});
  pool_b_ = add("bert.pooler.dense.bias", {h});
  tr_w_ = add("cls.predictions.transform.dense.weight", {h, h});
  tr_b_ = add("cls.predictions.transform.dense.bias", {h});
  tr_ln_w_ = add("cls.predictions.transform.LayerNorm.weight", {h});
  tr_ln_b_ = add("cls.predictions.transform.LayerNorm.bias", {h});
  mlm_bias_ = add("cls.predictions.bias", {padded_vocab_});
  nsp_w_ = add("cls.seq_relationship.weight", {2, h});
  nsp_b_ = add("cls.seq_relationship.bias", {2});
  reset_parameters();
}

void BertForPreTraining::reset_parameters() {
  at::NoGradGuard no_grad;
  const double std = config_.initializer_range;
  for (auto& [name, t] : params_) {
    const bool layer_norm = name.find("LayerNorm.") != std::string::npos;
    if (layer_norm) {
      if (name.ends_with(".weight")) t.fill_(1.0);
      else t.zero_();
    } else if (name.ends_with(".bias")) {
      t.zero_();
    } else {
      t.normal_(0.0, std);
    }
  }
  if (padded_vocab_ > config_.vocab_size) word_emb_.narrow(0, config_.vocab_size, padded_vocab_ - config_.vocab_size).zero_();
}

at::Tensor BertForPreTraining::activation(const at::Tensor& x) const {
  if (config_.hidden_act == "gelu") return at::gelu(x);
  if (config_.hidden_act == "relu") return at::relu(x);
  return at::gelu(x, "tanh");  // gelu_new / gelu_tanh
}

at::Tensor BertForPreTraining::dropout(const at::Tensor& x, double p) {
  return is_training() && p > 0 ? at::dropout(x, p, true) : x;
}

at::Tensor BertForPreTraining::layer_forward(const Layer& l, const at::Tensor& x, const at::Tensor& mask) {
  const int64_t b = x.size(0), t = x.size(1), h = config_.hidden_size, heads = config_.num_attention_heads;
  // One GEMM for Q, K and V: the three weights are concatenated (autograd splits the gradient back).
  const at::Tensor qkv = at::linear(x, fuse({l.q_w, l.k_w, l.v_w}), fuse({l.q_b, l.k_b, l.v_b}));
  // [B, T, 3, heads, d] -> [3, B, heads, T, d]: strided views, the layout SDPA's kernels take as they are.
  const auto parts = qkv.view({b, t, 3, heads, h / heads}).permute({2, 0, 3, 1, 4}).unbind(0);
  const double attn_p = is_training() ? config_.attention_probs_dropout_prob : 0.0;
  at::Tensor context = at::scaled_dot_product_attention(
      parts[0], parts[1], parts[2], mask.defined() ? std::optional<at::Tensor>(mask) : std::nullopt, attn_p);
  context = context.transpose(1, 2).reshape({b, t, h});
  at::Tensor attn = at::linear(context, l.ao_w, l.ao_b);
  attn = at::layer_norm(dropout(attn, config_.hidden_dropout_prob) + x, {h}, l.ao_ln_w, l.ao_ln_b,
                        config_.layer_norm_eps);
  at::Tensor ff = activation(at::linear(attn, l.in_w, l.in_b));
  ff = at::linear(ff, l.out_w, l.out_b);
  return at::layer_norm(dropout(ff, config_.hidden_dropout_prob) + attn, {h}, l.out_ln_w, l.out_ln_b,
                        config_.layer_norm_eps);
}

BertOutput BertForPreTraining::forward(const at::Tensor& input_ids, const at::Tensor& segment_ids,
                                       const at::Tensor& attention_mask, const at::Tensor& masked_lm_positions) {
  if (input_ids.dim() != 2) fail("BertForPreTraining: input_ids must be [batch, seq], got {} dimensions", input_ids.dim());
  const int64_t b = input_ids.size(0), t = input_ids.size(1), h = config_.hidden_size;
  if (t > config_.max_position_embeddings)
    fail("BertForPreTraining: sequence length {} exceeds max_position_embeddings {}", t, config_.max_position_embeddings);

  at::Tensor x = at::embedding(word_emb_, input_ids) + pos_emb_.narrow(0, 0, t);
  x = segment_ids.defined() ? x + at::embedding(type_emb_, segment_ids) : x + type_emb_[0];
  x = dropout(at::layer_norm(x, {h}, emb_ln_w_, emb_ln_b_, config_.layer_norm_eps), config_.hidden_dropout_prob);

  // Boolean mask [B, 1, 1, T] (true = attend), broadcast over heads and queries by SDPA.
  at::Tensor mask;
  if (attention_mask.defined()) mask = attention_mask.ne(0).view({b, 1, 1, t});
  for (const Layer& layer : layers_) x = layer_forward(layer, x, mask);

  BertOutput out;
  const at::Tensor pooled = at::tanh(at::linear(x.select(1, 0), pool_w_, pool_b_));
  out.nsp_logits = at::linear(pooled, nsp_w_, nsp_b_);

  // The MLM head runs on the masked positions only: gather rows b*T + position from the flattened [B*T, H].
  at::Tensor hidden = x;
  if (masked_lm_positions.defined()) {
    const at::Tensor rows = masked_lm_positions + at::arange(b, masked_lm_positions.options()).unsqueeze(1) * t;
    hidden = x.reshape({b * t, h}).index_select(0, rows.reshape({-1}));
  }
  hidden = activation(at::linear(hidden, tr_w_, tr_b_));
  hidden = at::layer_norm(hidden, {h}, tr_ln_w_, tr_ln_b_, config_.layer_norm_eps);
  out.mlm_logits = at::linear(hidden, word_emb_, mlm_bias_).narrow(-1, 0, config_.vocab_size);
  return out;
}

}  // namespace bk
