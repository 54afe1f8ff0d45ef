// The masked-LM loss's cross entropy on the CPU over the decoder's product with a padded vocabulary, as an autograd
// function of its own: ATen's ops on the cut view ([rows, vocab] of [rows, padded_vocab]) read strided rows, and
// their backward fills a zero tensor of the padded width before copying the gradient in. Here the forward takes
// log-softmax on one contiguous copy and the backward writes softmax - one-hot straight into the padded gradient
// (its padded columns 0): a tenth of a small model's training step (bench/bert_train.sh).
#pragma once

#include "model/fused_cross_entropy.h"

namespace bk {

// The same contract as fused_masked_lm_scores (model/fused_cross_entropy.h), for float32 logits on the CPU that
// require grad and carry padded columns; std::nullopt elsewhere.
std::optional<MaskedLmScores> cpu_masked_lm_scores(const at::Tensor& padded_logits, int64_t vocab,
                                                   const at::Tensor& labels);

}  // namespace bk
