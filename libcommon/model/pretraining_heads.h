// The pretraining heads on the encoder (encoder.h). BERT's: the masked-LM head (its transform, prediction_head.h,
// then a decoder tied to the word embeddings, with cls.predictions.bias) and the next-sentence head
// (cls.seq_relationship over the pooled output). ModernBERT's: the same masked-LM head (head.*, decoder.bias where
// decoder_bias says) and no next-sentence head.
#pragma once

#include "model_config/bert_config.h"
#include "model/encoder.h"
#include "model/parameters.h"
#include "model/prediction_head.h"

#include <ATen/Tensor.h>

namespace bk {

struct BertOutput {
  // With masked_lm_positions [B, P]: [B*P, vocab_size] (row b*P + j = sample b, slot j); without: [B, T, vocab_size].
  at::Tensor mlm_logits;
  // The decoder's product over the padded vocabulary ([rows, padded_vocab]), whose first vocab_size columns
  // mlm_logits views: the fused cross entropy reads it in place (model/fused_cross_entropy.h).
  at::Tensor mlm_logits_padded;
  at::Tensor nsp_logits;  // [B, 2] ([S, 2] for a token stream); index 1 = random next. Undefined without the head
};

class PretrainingHeads {
 public:
  // Registers the heads' parameters in `params` (cls.predictions.bias with padded_vocab rows).
  PretrainingHeads(const BertConfig& config, int64_t padded_vocab, ParameterSet& params);

  // The MLM head runs on the masked positions only when they are given (int64 [B, P]); `decoder` is the tied word
  // embedding matrix [padded_vocab, H]. Logits are cut to vocab_size.
  BertOutput forward(const EncoderOutput& encoded, const at::Tensor& masked_lm_positions, const at::Tensor& decoder) const;
  // The same on a token stream's output (encoded.sequence [N, H]): masked_tokens int64 [B, P] index the stream.
  BertOutput forward_rows(const EncoderOutput& encoded, const at::Tensor& masked_tokens, const at::Tensor& decoder) const;

  const at::Tensor& mlm_bias() const { return mlm_bias_; }  // [padded_vocab]; undefined without a decoder bias

 private:
  BertConfig config_;
  PredictionHead transform_;
  at::Tensor mlm_bias_;
  at::Tensor nsp_w_, nsp_b_;
};

}  // namespace bk
