// The masked-LM loss's cross entropy as one CUDA kernel each way (kernels/cross_entropy.h), with the experimental
// kernels on (--fused-kernels experimental) and where it applies: the decoder's product over the padded vocabulary
// in bf16/fp16 on CUDA, as a training step computes it (it requires grad). It reads the logits where the decoder
// wrote them, so the cut to vocab_size costs no copy, computes in fp32 (where the ATen ops under autocast take
// log-softmax in the 16-bit type), and gives each row's first arg-max for the accuracy from the same pass.
// Elsewhere pretraining_loss (tasks/pretraining/pretrain_loss.h) uses the ATen ops, which are also the reference
// the CUDA test compares the kernel with.
#pragma once

#include <ATen/Tensor.h>

#include <optional>

namespace bk {

struct MaskedLmScores {
  at::Tensor row_losses;  // fp32 [rows]: logsumexp - the label's logit, 0 for a row without a label (differentiable)
  at::Tensor predicted;   // int64 [rows]: the arg-max class
};

// padded_logits: [rows, padded_vocab], of which the first `vocab` columns are the classes; labels: int64 [rows],
// negative for a row without one. std::nullopt where the kernel does not apply (see above).
std::optional<MaskedLmScores> fused_masked_lm_scores(const at::Tensor& padded_logits, int64_t vocab,
                                                     const at::Tensor& labels);

}  // namespace bk
