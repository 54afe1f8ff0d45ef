#include "train/batch.h"

namespace bk {

PretrainBatch PretrainBatch::to(const at::Device& device, bool non_blocking) const {
  auto move = [&](const at::Tensor& t) { return t.defined() ? t.to(device, non_blocking) : t; };
  return {move(input_ids), move(segment_ids), move(attention_mask), move(masked_lm_positions), move(masked_lm_ids),
          move(next_sentence_labels)};
}

}  // namespace bk
