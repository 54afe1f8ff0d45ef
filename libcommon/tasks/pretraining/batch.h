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
//   next_sentence_labels  int64 [S]      1 = random next; one per sequence (S = B unless rows are packed)
// With unpadded attention the batch also carries its token stream (TokenStream below) and masked_tokens, int64
// [B, P]: each masked position's index in that stream (0 in unused slots). Packed rows (pack(1): several samples
// per row, hdf5/hdf5_sample.h) exist only in that form: their attention must not cross the samples.
#pragma once

#include "hdf5/hdf5_sample.h"
#include "model/token_stream.h"

#include <ATen/Tensor.h>

#include <cstdint>
#include <vector>

namespace bk {

struct PretrainBatch {
  at::Tensor input_ids, segment_ids, attention_mask;
  at::Tensor masked_lm_positions, masked_lm_ids;
  at::Tensor next_sentence_labels;
  TokenStream stream;        // defined for unpadded attention
  at::Tensor masked_tokens;  // int64 [B, P], with the stream

  int64_t size() const { return input_ids.defined() ? input_ids.size(0) : 0; }
  int64_t seq_len() const { return input_ids.defined() ? input_ids.size(1) : 0; }
  PretrainBatch to(const at::Device& device, bool non_blocking = false) const;
  // Every tensor field but the stream's (undefined ones included).
  std::vector<at::Tensor*> tensors() {
    return {&input_ids, &segment_ids, &attention_mask, &masked_lm_positions, &masked_lm_ids, &next_sentence_labels,
            &masked_tokens};
  }
};

// One batch from samples: T = the longest of them (at least min_length), masked_lm_positions padded with 0 and masked_lm_ids with -1 to
// max_predictions (the loader's collation, also bert-eval's). bk::Error if a sample has more than max_predictions
// masked positions, or if a row is packed and `unpadded` is false. unpadded: with the token stream.
// pin_memory: page-locked tensors for fast copies to a CUDA device.
PretrainBatch collate_pretrain_batch(const std::vector<PretrainSample>& samples, int64_t max_predictions,
                                     bool pin_memory = false, bool unpadded = false, int64_t min_length = 0);

// The token stream of rows [B, T] whose real tokens come first: row b holds the sequences of row_lengths[b], back
// to back. Also sets batch.masked_tokens from masked_lm_positions.
void add_token_stream(PretrainBatch& batch, const std::vector<std::vector<int64_t>>& row_lengths);

// Rows [first, first + rows) of a batch, cut to the longest of them, or to `length` columns when it is positive
// (bin4's bound, for micro-batches of one shape; at least the longest row, at most the batch's width), with the
// stream when the batch has one. Rows of one sample each (bin4's batches, never packed ones).
PretrainBatch slice_rows(const PretrainBatch& batch, int64_t first, int64_t rows, int64_t length = 0);

}  // namespace bk
