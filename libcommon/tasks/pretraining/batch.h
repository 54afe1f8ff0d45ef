// One pretraining batch as the model consumes it: the contract between the data loader (data_loader.h), the
// pretraining task (pretraining_task.h), the model (model/bert.h) and bert-eval.
//
// All tensors are on the CPU when the loader hands them over (pinned when CUDA is in use); the trainer moves
// them to the device with to(device, non_blocking). Shapes, with B samples and T = the longest real sequence in
// the batch (dynamic truncation: padding beyond T is cut off) and P = max predictions:
//   input_ids             int64 [B, T]   token ids, 0 after the sequence
//   segment_ids           int64 [B, T]   0 for [CLS] A [SEP], 1 for B [SEP], 0 after
//   attention_mask        int64 [B, T]   1 for real tokens, 0 for padding
//   masked_lm_positions   int64 [B, P]   positions of the masked tokens, 0 in unused slots
//   masked_lm_ids         int64 [B, P]   original ids at those positions, -1 in unused slots (ignored by the loss)
//   next_sentence_labels  int64 [B]      1 = random next
#pragma once

#include "data/hdf5_sample.h"

#include <ATen/Tensor.h>

#include <cstdint>
#include <vector>

namespace bk {

struct PretrainBatch {
  at::Tensor input_ids, segment_ids, attention_mask;
  at::Tensor masked_lm_positions, masked_lm_ids;
  at::Tensor next_sentence_labels;

  int64_t size() const { return input_ids.defined() ? input_ids.size(0) : 0; }
  int64_t seq_len() const { return input_ids.defined() ? input_ids.size(1) : 0; }
  PretrainBatch to(const at::Device& device, bool non_blocking = false) const;
};

// One batch from samples: T = the longest of them, masked_lm_positions padded with 0 and masked_lm_ids with -1 to
// max_predictions (the loader's collation, also bert-eval's). bk::Error if a sample has more than max_predictions
// masked positions. pin_memory: page-locked tensors for fast copies to a CUDA device.
PretrainBatch collate_pretrain_batch(const std::vector<PretrainSample>& samples, int64_t max_predictions,
                                     bool pin_memory = false);

}  // namespace bk
