#include "tasks/pretraining/pretrain_loss.h"

#include "model/cpu_cross_entropy.h"
#include "model/fused_cross_entropy.h"

#include <ATen/ATen.h>

namespace bk {

PretrainLoss pretraining_loss(const BertOutput& output, const PretrainBatch& batch) {
  PretrainLoss r;
  const at::Tensor labels = batch.masked_lm_ids.reshape({-1});
  const at::Tensor nsp_labels = batch.next_sentence_labels.reshape({-1});
  const at::Tensor valid = labels.ge(0);
  r.mlm_total = valid.sum();
  // Unused prediction slots hold -1; cross entropy skips them and averages over the rest (0 / 0 = NaN without any).
  at::Tensor predicted;
  const at::Tensor& padded = output.mlm_logits_padded;
  const at::Tensor rows = padded.defined() ? padded.reshape({-1, padded.size(-1)}) : padded;
  const int64_t vocab = output.mlm_logits.size(-1);
  std::optional<MaskedLmScores> fused = fused_masked_lm_scores(rows, vocab, labels);
  if (!fused) fused = cpu_masked_lm_scores(rows, vocab, labels);
  if (fused) {
    r.mlm_loss = fused->row_losses.sum() / r.mlm_total;
    predicted = fused->predicted;
  } else {
    r.mlm_loss = at::cross_entropy_loss(output.mlm_logits, labels, {}, at::Reduction::Mean, -1);
  }
  const bool nsp = output.nsp_logits.defined();  // an architecture without the head: masked LM alone
  r.nsp_loss = nsp ? at::cross_entropy_loss(output.nsp_logits, nsp_labels) : at::zeros_like(r.mlm_loss);
  r.loss = r.mlm_loss + r.nsp_loss;
  at::NoGradGuard no_grad;
  if (!predicted.defined()) predicted = output.mlm_logits.argmax(-1);
  r.mlm_correct = predicted.eq(labels).logical_and(valid).sum();
  r.nsp_correct = nsp ? output.nsp_logits.argmax(-1).eq(nsp_labels).sum() : at::zeros_like(r.mlm_correct);
  r.sequences = at::scalar_tensor(nsp_labels.size(0), nsp_labels.options());
  r.nsp_total = nsp ? r.sequences : at::zeros_like(r.sequences);
  return r;
}

PretrainLoss pretraining_loss(BertForPreTraining& model, const PretrainBatch& batch) {
  if (batch.stream.defined())
    return pretraining_loss(
        model.forward_stream(batch.input_ids, batch.segment_ids, batch.stream, batch.masked_tokens), batch);
  return pretraining_loss(
      model.forward(batch.input_ids, batch.segment_ids, batch.attention_mask, batch.masked_lm_positions), batch);
}

}  // namespace bk
