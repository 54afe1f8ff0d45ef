#include "tasks/pretraining/batch.h"

#include "util/error.h"

#include <ATen/ATen.h>

#include <algorithm>

namespace bk {

PretrainBatch PretrainBatch::to(const at::Device& device, bool non_blocking) const {
  PretrainBatch out = *this;
  for (at::Tensor* t : out.tensors())
    if (t->defined()) *t = t->to(device, non_blocking);
  out.stream = stream.to(device, non_blocking);
  return out;
}

void add_token_stream(PretrainBatch& batch, const std::vector<std::vector<int64_t>>& row_lengths) {
  const int64_t B = batch.size(), T = batch.seq_len();
  batch.stream = make_token_stream(T, row_lengths);
  std::vector<int64_t> row_start(static_cast<size_t>(B));
  int64_t token = 0;
  for (int64_t b = 0; b < B; ++b) {
    row_start[static_cast<size_t>(b)] = token;
    for (int64_t length : row_lengths[static_cast<size_t>(b)]) token += length;
  }
  // Real tokens come first in every row, so a masked position p of row b is token row_start[b] + p of the stream.
  const int64_t P = batch.masked_lm_positions.size(1);
  batch.masked_tokens = at::zeros({B, P}, at::kLong);
  const int64_t* position = batch.masked_lm_positions.data_ptr<int64_t>();
  const int64_t* label = batch.masked_lm_ids.data_ptr<int64_t>();
  int64_t* masked = batch.masked_tokens.data_ptr<int64_t>();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t p = 0; p < P; ++p)
      if (label[b * P + p] >= 0) masked[b * P + p] = row_start[static_cast<size_t>(b)] + position[b * P + p];
}

PretrainBatch collate_pretrain_batch(const std::vector<PretrainSample>& samples, int64_t max_predictions,
                                     bool pin_memory, bool unpadded, int64_t min_length) {
  auto B = static_cast<int64_t>(samples.size());
  int64_t T = min_length, S = 0;
  for (const auto& s : samples) {
    T = std::max<int64_t>(T, static_cast<int64_t>(s.length()));
    S += static_cast<int64_t>(s.sequences());
  }
  const int64_t P = max_predictions;
  PretrainBatch batch;
  batch.input_ids = at::zeros({B, T}, at::kLong);
  batch.segment_ids = at::zeros({B, T}, at::kLong);
  batch.attention_mask = at::zeros({B, T}, at::kLong);
  batch.masked_lm_positions = at::zeros({B, P}, at::kLong);
  batch.masked_lm_ids = at::full({B, P}, -1, at::kLong);
  batch.next_sentence_labels = at::zeros({S}, at::kLong);
  int64_t* ids = batch.input_ids.data_ptr<int64_t>();
  int64_t* segments = batch.segment_ids.data_ptr<int64_t>();
  int64_t* mask = batch.attention_mask.data_ptr<int64_t>();
  int64_t* positions = batch.masked_lm_positions.data_ptr<int64_t>();
  int64_t* masked = batch.masked_lm_ids.data_ptr<int64_t>();
  int64_t* labels = batch.next_sentence_labels.data_ptr<int64_t>();
  std::vector<std::vector<int64_t>> row_lengths(static_cast<size_t>(B));
  int64_t seq = 0;
  for (int64_t b = 0; b < B; ++b) {
    const PretrainSample& s = samples[static_cast<size_t>(b)];
    if (static_cast<int64_t>(s.masked_lm_positions.size()) > P)
      fail("sample {} of the batch has {} masked positions, more than the {} max predictions", b,
           s.masked_lm_positions.size(), P);
    if (s.sequences() > 1 && !unpadded)
      fail("row {} of the batch packs {} samples: packed rows need unpadded attention", b, s.sequences());
    for (size_t t = 0; t < s.length(); ++t) {
      ids[b * T + static_cast<int64_t>(t)] = s.input_ids[t];
      segments[b * T + static_cast<int64_t>(t)] = s.segment_ids[t];
      mask[b * T + static_cast<int64_t>(t)] = 1;
    }
    for (size_t p = 0; p < s.masked_lm_positions.size(); ++p) {
      positions[b * P + static_cast<int64_t>(p)] = s.masked_lm_positions[p];
      masked[b * P + static_cast<int64_t>(p)] = s.masked_lm_ids[p];
    }
    if (s.pack_lengths.empty()) {
      row_lengths[static_cast<size_t>(b)] = {static_cast<int64_t>(s.length())};
      labels[seq++] = s.next_sentence_label;
    } else {
      row_lengths[static_cast<size_t>(b)].assign(s.pack_lengths.begin(), s.pack_lengths.end());
      for (int32_t label : s.pack_labels) labels[seq++] = label;
    }
  }
  if (unpadded) add_token_stream(batch, row_lengths);
  if (pin_memory) {
    for (at::Tensor* t : {&batch.input_ids, &batch.segment_ids, &batch.attention_mask, &batch.masked_lm_positions,
                          &batch.masked_lm_ids, &batch.next_sentence_labels, &batch.masked_tokens})
      if (t->defined()) *t = t->pin_memory();
    batch.stream.pin_memory();
  }
  return batch;
}

PretrainBatch slice_rows(const PretrainBatch& b, int64_t first, int64_t rows, int64_t length) {
  PretrainBatch part;
  // Page-locked as the loader made the batch, so the slices' copies to the GPU do not block the host: a row slice
  // is a view of the batch's memory as it is; one cut to fewer columns is copied once, straight into page-locked
  // memory.
  const bool pinned = b.input_ids.is_pinned();
  auto own = [&](const at::Tensor& view) {
    if (view.is_contiguous() || !pinned) return view.contiguous();
    return at::empty(view.sizes(), view.options().pinned_memory(true)).copy_(view);
  };
  const at::Tensor mask = b.attention_mask.narrow(0, first, rows);
  const at::Tensor lengths = mask.sum(1).contiguous();
  const int64_t longest = std::max<int64_t>(lengths.max().item<int64_t>(), 1);
  if (length > 0 && (length < longest || length > b.seq_len()))
    fail("slice_rows: {} columns for rows of up to {} in a batch of {}", length, longest, b.seq_len());
  const int64_t t = length > 0 ? length : longest;
  part.input_ids = own(b.input_ids.narrow(0, first, rows).narrow(1, 0, t));
  part.segment_ids = own(b.segment_ids.narrow(0, first, rows).narrow(1, 0, t));
  part.attention_mask = own(mask.narrow(1, 0, t));
  part.masked_lm_positions = own(b.masked_lm_positions.narrow(0, first, rows));
  part.masked_lm_ids = own(b.masked_lm_ids.narrow(0, first, rows));
  part.next_sentence_labels = own(b.next_sentence_labels.narrow(0, first, rows));
  if (b.stream.defined()) {
    std::vector<std::vector<int64_t>> row_lengths;
    const int64_t* length = lengths.data_ptr<int64_t>();
    for (int64_t r = 0; r < rows; ++r) row_lengths.push_back({length[r]});
    add_token_stream(part, row_lengths);
    if (pinned) {  // new host tensors, small
      part.masked_tokens = part.masked_tokens.pin_memory();
      part.stream.pin_memory();
    }
  }
  return part;
}

}  // namespace bk
