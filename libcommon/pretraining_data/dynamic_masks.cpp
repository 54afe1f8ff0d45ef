#include "pretraining_data/dynamic_masks.h"

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

size_t mask_sample(PretrainSample& sample, const DynamicMasking& masking, uint64_t seed, uint32_t epoch) {
  thread_local std::vector<MaskedToken> masks;
  masks.clear();
  draw_dynamic_masks(sample.input_ids, masking.rule, masking.vocab, seed, epoch, static_cast<uint64_t>(sample.sample_id),
                     masks);
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

}  // namespace bk
