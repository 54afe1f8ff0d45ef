#include "model/pretraining_heads.h"

#include <ATen/ATen.h>

namespace bk {

PretrainingHeads::PretrainingHeads(const BertConfig& config, int64_t padded_vocab, ParameterSet& params)
    : config_(config), transform_(config, params) {
  const int64_t h = config_.hidden_size;
  if (config_.is_modernbert()) {  // HF's decoder after ModernBertPredictionHead; no next-sentence head
    if (config_.modern.decoder_bias) mlm_bias_ = params.add("decoder.bias", {padded_vocab});
    return;
  }
  mlm_bias_ = params.add("cls.predictions.bias", {padded_vocab});
  nsp_w_ = params.add("cls.seq_relationship.weight", {2, h});
  nsp_b_ = params.add("cls.seq_relationship.bias", {2});
}

BertOutput PretrainingHeads::forward(const EncoderOutput& encoded, const at::Tensor& masked_lm_positions,
                                     const at::Tensor& decoder) const {
  const at::Tensor& x = encoded.sequence;
  if (!masked_lm_positions.defined()) return forward_rows(encoded, {}, decoder);
  // Rows b*T + position of the flattened [B*T, H], so the vocabulary-sized matmul sees only masked tokens.
  const int64_t b = x.size(0), t = x.size(1), h = config_.hidden_size;
  const at::Tensor rows = masked_lm_positions + at::arange(b, masked_lm_positions.options()).unsqueeze(1) * t;
  return forward_rows({x.reshape({b * t, h}), encoded.pooled}, rows, decoder);
}

BertOutput PretrainingHeads::forward_rows(const EncoderOutput& encoded, const at::Tensor& rows,
                                          const at::Tensor& decoder) const {
  BertOutput out;
  if (nsp_w_.defined()) out.nsp_logits = at::linear(encoded.pooled, nsp_w_, nsp_b_);
  at::Tensor hidden = rows.defined() ? encoded.sequence.index_select(0, rows.reshape({-1})) : encoded.sequence;
  out.mlm_logits_padded = at::linear(transform_.forward(hidden), decoder, mlm_bias_);
  out.mlm_logits = out.mlm_logits_padded.narrow(-1, 0, config_.vocab_size);
  return out;
}

}  // namespace bk
