// The pretraining objective: masked-LM cross entropy over the real masked positions plus next-sentence cross
// entropy, and the counts behind the accuracies (the MLPerf metric is mlm_correct / mlm_total).
#pragma once

#include "model/bert.h"
#include "tasks/pretraining/batch.h"

#include <ATen/Tensor.h>

namespace bk {

// All members are tensors on the batch's device, so a training step never waits for the GPU; call .item() when a
// number is needed. The counts are int64 scalars and do not carry gradients.
struct PretrainLoss {
  at::Tensor loss;         // mlm_loss + nsp_loss (differentiable)
  at::Tensor mlm_loss;     // mean cross entropy over masked positions with masked_lm_ids >= 0 (NaN if there are none)
  at::Tensor nsp_loss;     // mean cross entropy over the batch (0, with nsp_total 0, without a next-sentence head)
  at::Tensor mlm_correct;  // masked positions whose arg-max prediction is the original token
  at::Tensor mlm_total;    // masked positions counted (masked_lm_ids >= 0)
  at::Tensor nsp_correct;
  at::Tensor nsp_total;    // the sequences scored for next-sentence prediction: all of them, or 0 without the head
  at::Tensor sequences;    // the samples of the batch (several per packed row)
};

// Runs the model on the batch (positions gathered before the MLM head) and scores it. The batch must be on the
// model's device.
PretrainLoss pretraining_loss(BertForPreTraining& model, const PretrainBatch& batch);

// The same scoring for outputs already computed (mlm_logits [B*P, V] against masked_lm_ids [B, P]).
PretrainLoss pretraining_loss(const BertOutput& output, const PretrainBatch& batch);

}  // namespace bk
