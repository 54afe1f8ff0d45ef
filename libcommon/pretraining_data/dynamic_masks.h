// The masks a data loader draws for a sample at every epoch (dynamic masking, as NVIDIA's LDDL and RoBERTa mask):
// create_masked_lm_predictions' rule (masking.h) over the sample's unmasked input_ids, from a random stream that
// is a pure function of (seed, epoch, index). So a sample's masks are the same for any number of ranks, bins,
// packing, prefetch depth or threads, and after a resume in the middle of an epoch. Torch-free.
//
// The stream is CPython's random.Random(n) with n = seed * 2**96 + epoch * 2**64 + index: google-research/bert's
// own create_masked_lm_predictions, given that generator and the sample's tokens, draws the same masks
// (tests/compat/test_dynamic_masks.py).
#pragma once

#include "hdf5/hdf5_sample.h"
#include "pretraining_data/masking.h"
#include "util/batch_schedule.h"

#include <cstdint>
#include <span>
#include <vector>

namespace bk {

// n = seed * 2**96 + epoch * 2**64 + index as the 32-bit words random.Random(n) seeds from (least significant
// first, without high zero words).
std::vector<uint32_t> dynamic_mask_seed_words(uint64_t seed, uint32_t epoch, uint64_t index);

// Appends the masks of sample `index` in `epoch` to `masks`, in position order; returns how many (0 when the
// sample holds no token but [CLS] and [SEP], which the caller reports).
size_t draw_dynamic_masks(std::span<const int32_t> input_ids, const MaskingRule& rule, const MaskingVocab& vocab,
                          uint64_t seed, uint32_t epoch, uint64_t index, std::vector<MaskedToken>& masks);

// What a loader masks unmasked samples with (bert-train --masking dynamic): the rule, whose rate may move
// linearly from rule.masked_lm_prob at the run's first step to final_prob at its last (mmBERT's falling rate).
struct DynamicMasking {
  MaskingVocab vocab;
  MaskingRule rule;
  double final_prob = -1;  // < 0: the rate holds
  int64_t steps = 0;       // the run's optimizer steps (the schedule's length)
  BatchSchedule batches;   // each rank's micro-batches per step

  bool scheduled() const { return final_prob >= 0 && steps > 1; }
  // The rule for a rank's micro-batch `batch` of the run (from 0): its step s (from 0, batches.step_of) masks at
  // rate p0 + (final_prob - p0) s / (steps - 1), final_prob from the last step on.
  MaskingRule rule_at(int64_t batch) const;
  // The rule at the higher of the two rates: what the prediction slots are sized for.
  MaskingRule widest_rule() const;
};

// Masks an unmasked sample (sample_id set, no predictions) for `epoch`, as a masked file would hold it: the
// replacements in input_ids, the positions and original ids in masked_lm_*. A packed row (pack_sample_ids set):
// each of its samples gets the masks it would get alone, at its place in the row. Returns the predictions made (0:
// a sample has no token but [CLS] and [SEP]).
size_t mask_sample(PretrainSample& sample, const MaskingRule& rule, const MaskingVocab& vocab, uint64_t seed,
                   uint32_t epoch);

// The most masks `rule` can give a packed row of row_length tokens and max_sequences samples: the prediction slots
// its batches need.
size_t packed_row_predictions(const MaskingRule& rule, int row_length, int max_sequences);

}  // namespace bk
