// How many micro-batches each optimizer step takes: the accumulation steps, or under a batch-size warm-up (as
// ModernBERT and mmBERT ramp their batch over the first tens of billions of tokens) fewer at first, rising linearly
// in whole micro-batches. Torch-free: the loop takes its steps by it, and dynamic masking finds a micro-batch's step.
#pragma once

#include <cstdint>

namespace bk {

struct BatchSchedule {
  int64_t full = 1;          // micro-batches per step after the warm-up (--gradient-accumulation-steps)
  int64_t start = 1;         // at step 1, with a warm-up
  int64_t warmup_steps = 0;  // 0: every step takes `full`

  // Step t (from 1) takes start + floor((full - start) (t - 1) / warmup_steps) while t <= warmup_steps, then full.
  int64_t micro_batches_at(int64_t step) const;
  // The micro-batches steps 1..step take together.
  int64_t micro_batches_through(int64_t step) const;
  // The step (from 1) that micro-batch `index` (from 0, counted over the run) belongs to.
  int64_t step_of(int64_t index) const;
};

}  // namespace bk
