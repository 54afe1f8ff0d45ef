#include "tasks/pretraining/batch.h"

#include "util/error.h"

#include <ATen/ATen.h>

#include <algorithm>

namespace bk {

PretrainBatch PretrainBatch::to(const at::Device& device, bool non_blocking) const {
  auto move = [&](const at::Tensor& t) { return t.defined() ? t.to(device, non_blocking) : t; };
  return {move(input_ids), move(segment_ids), move(attention_mask), move(masked_lm_positions), move(masked_lm_ids),
          move(next_sentence_labels)};
}


PretrainBatch collate_pretrain_batch(const std::vector<PretrainSample>& samples, int64_t max_predictions,
                                     bool pin_memory) {
  auto B = static_cast<int64_t>(samples.size());
  int64_t T = 0;
  for (const auto& s : samples) T = std::max<int64_t>(T, static_cast<int64_t>(s.length()));
  const int64_t P = max_predictions;
  PretrainBatch batch;
  batch.input_ids = at::zeros({B, T}, at::kLong);
  batch.segment_ids = at::zeros({B, T}, at::kLong);
  batch.attention_mask = at::zeros({B, T}, at::kLong);
  batch.masked_lm_positions = at::zeros({B, P}, at::kLong);
  batch.masked_lm_ids = at::full({B, P}, -1, at::kLong);
  batch.next_sentence_labels = at::zeros({B}, at::kLong);
  int64_t* ids = batch.input_ids.data_ptr<int64_t>();
  int64_t* segments = batch.segment_ids.data_ptr<int64_t>();
  int64_t* mask = batch.attention_mask.data_ptr<int64_t>();
  int64_t* positions = batch.masked_lm_positions.data_ptr<int64_t>();
  int64_t* masked = batch.masked_lm_ids.data_ptr<int64_t>();
  int64_t* labels = batch.next_sentence_labels.data_ptr<int64_t>();
  for (int64_t b = 0; b < B; ++b) {
    const PretrainSample& s = samples[static_cast<size_t>(b)];
    if (static_cast<int64_t>(s.masked_lm_positions.size()) > P)
      fail("sample {} of the batch has {} masked positions, more than the {} max predictions", b,
           s.masked_lm_positions.size(), P);
    for (size_t t = 0; t < s.length(); ++t) {
      ids[b * T + static_cast<int64_t>(t)] = s.input_ids[t];
      segments[b * T + static_cast<int64_t>(t)] = s.segment_ids[t];
      mask[b * T + static_cast<int64_t>(t)] = 1;
    }
    for (size_t p = 0; p < s.masked_lm_positions.size(); ++p) {
      positions[b * P + static_cast<int64_t>(p)] = s.masked_lm_positions[p];
      masked[b * P + static_cast<int64_t>(p)] = s.masked_lm_ids[p];
    }
    labels[b] = s.next_sentence_label;
  }
  if (pin_memory) {
    for (at::Tensor* t : {&batch.input_ids, &batch.segment_ids, &batch.attention_mask, &batch.masked_lm_positions,
                          &batch.masked_lm_ids, &batch.next_sentence_labels})
      *t = t->pin_memory();
  }
  return batch;
}

}  // namespace bk
