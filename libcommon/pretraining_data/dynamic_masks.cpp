#include "pretraining_data/dynamic_masks.h"

#include <algorithm>
#include <cmath>

namespace bk {
namespace {

// A sample's unmasked input_ids as masking.h reads a sequence.
class SampleView {
 public:
  SampleView(std::span<const int32_t> ids, const MaskingVocab& vocab) : ids_(ids), vocab_(vocab) {}
  int32_t operator[](uint32_t pos) const { return ids_[pos]; }
  void candidates(std::vector<uint32_t>& out) const {
    out.resize(ids_.size());
    size_t n = 0;
    for (uint32_t pos = 0; pos < ids_.size(); ++pos) {  // written unconditionally, kept when the test passes
      out[n] = pos;
      n += ids_[pos] != vocab_.cls_id && ids_[pos] != vocab_.sep_id;
    }
    out.resize(n);
  }

 private:
  std::span<const int32_t> ids_;
  const MaskingVocab& vocab_;
};

}  // namespace

std::vector<uint32_t> dynamic_mask_seed_words(uint64_t seed, uint32_t epoch, uint64_t index) {
  std::vector<uint32_t> words = {static_cast<uint32_t>(index), static_cast<uint32_t>(index >> 32), epoch,
                                 static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)};
  while (words.size() > 1 && words.back() == 0) words.pop_back();  // CPython keys with the words n needs
  return words;
}

size_t draw_dynamic_masks(std::span<const int32_t> input_ids, const MaskingRule& rule, const MaskingVocab& vocab,
                          uint64_t seed, uint32_t epoch, uint64_t index, std::vector<MaskedToken>& masks) {
  thread_local PyRandom rng;
  rng.seed_words(dynamic_mask_seed_words(seed, epoch, index));
  const size_t before = masks.size();
  draw_masks(SampleView(input_ids, vocab), static_cast<uint32_t>(input_ids.size()), rule, vocab, rng, masks);
  return masks.size() - before;
}

MaskingRule DynamicMasking::rule_at(int64_t batch) const {
  if (!scheduled()) return rule;
  const int64_t step = std::min(batches.step_of(batch) - 1, steps - 1);
  MaskingRule at = rule;
  at.masked_lm_prob = rule.masked_lm_prob + (final_prob - rule.masked_lm_prob) * static_cast<double>(step) /
                                                static_cast<double>(steps - 1);
  return at;
}

MaskingRule DynamicMasking::widest_rule() const {
  MaskingRule widest = rule;
  widest.masked_lm_prob = std::max(rule.masked_lm_prob, final_prob);
  return widest;
}

size_t mask_sample(PretrainSample& sample, const MaskingRule& rule, const MaskingVocab& vocab, uint64_t seed,
                   uint32_t epoch) {
  thread_local std::vector<MaskedToken> masks;
  masks.clear();
  // Each sample of a packed row gets the masks it would get alone, its positions moved to where it starts; an
  // unpacked sample is a row of one.
  const bool packed = !sample.pack_sample_ids.empty();
  const size_t samples = packed ? sample.pack_sample_ids.size() : 1;
  const std::span<const int32_t> row = sample.input_ids;
  size_t start = 0;
  for (size_t k = 0; k < samples; ++k) {
    const size_t length = packed ? static_cast<size_t>(sample.pack_lengths[k]) : row.size();
    const int64_t id = packed ? sample.pack_sample_ids[k] : sample.sample_id;
    const size_t first = masks.size();
    if (draw_dynamic_masks(row.subspan(start, length), rule, vocab, seed, epoch,
                           static_cast<uint64_t>(id), masks) == 0)
      return 0;
    for (size_t m = first; m < masks.size(); ++m) masks[m].position += static_cast<uint32_t>(start);
    start += length;
  }
  sample.masked_lm_positions.resize(masks.size());
  sample.masked_lm_ids.resize(masks.size());
  for (size_t k = 0; k < masks.size(); ++k) {
    const uint32_t pos = masks[k].position;
    sample.masked_lm_positions[k] = static_cast<int32_t>(pos);
    sample.masked_lm_ids[k] = sample.input_ids[pos];
    if (masks[k].replacement != MaskedToken::kKeep) sample.input_ids[pos] = masks[k].replacement;
  }
  return masks.size();
}

size_t packed_row_predictions(const MaskingRule& rule, int row_length, int max_sequences) {
  // A sample of n tokens gets min(P, max(1, round(n * prob))) <= n * prob + 1 masks; the row's samples sum to at
  // most row_length tokens.
  const auto by_rate = static_cast<size_t>(std::floor(rule.masked_lm_prob * row_length)) + static_cast<size_t>(max_sequences);
  return std::min(by_rate, static_cast<size_t>(rule.max_predictions) * static_cast<size_t>(max_sequences));
}

}  // namespace bk
