// create_masked_lm_predictions' rule (google-research/bert), in the reference's draw order, for both masking
// paths: mkpretrain's masks fixed in the data (instances.cpp, over an instance's two corpus spans) and the masks a
// loader draws at every epoch (dynamic_masks.h, over a sample's input_ids). One rule, so the two differ only in
// when the draw happens. Torch-free.
//
// A View gives the token at a position (operator[](uint32_t)) and the candidate positions, those whose token is
// neither [CLS] nor [SEP] (candidates(std::vector<uint32_t>&)), of a sequence of `length` tokens.
#pragma once

#include "util/py_random.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace bk {

// What masking needs to know about the vocabulary, in token ids.
struct MaskingVocab {
  int32_t cls_id = -1, sep_id = -1, mask_id = -1;
  // The reference draws random replacements from list(vocab.keys()): every distinct token in first-seen order,
  // mapped to the id the vocab gives it (the last line on which it appears).
  std::vector<int32_t> random_word_ids;
  // is_continuation[id]: the token starts with "##" (whole-word masking joins it to the previous word).
  std::vector<uint8_t> is_continuation;
};

class Vocab;
class TextTokenizer;
// The ids masking reads from a BERT vocabulary; bk::Error naming it when [CLS], [SEP] or [MASK] is missing.
MaskingVocab masking_vocab(const Vocab& vocab);
// The same from any tokenizer: a byte-level BPE's <s>, </s> and <mask> (or its template's), every id as a random
// replacement, and a piece without a leading space continuing the word before it (whole-word masking).
MaskingVocab masking_vocab(const TextTokenizer& tokenizer);

struct MaskedToken {
  static constexpr int32_t kKeep = -1;  // the original token stays (token ids are never negative)
  uint32_t position;     // in input_ids
  int32_t replacement;   // [MASK], kKeep, or a random vocabulary entry
};

struct MaskingRule {
  double masked_lm_prob = 0.15;
  int max_predictions = 20;
  bool whole_word_mask = false;

  // The reference's count: min(max_predictions, max(1, round(length * masked_lm_prob))), Python's round (half to
  // even), over the whole sequence's length ([CLS] and [SEP] included).
  size_t count(uint32_t length) const {
    const auto rounded = static_cast<int64_t>(std::nearbyint(static_cast<double>(length) * masked_lm_prob));
    return static_cast<size_t>(std::min<int64_t>(max_predictions, std::max<int64_t>(1, rounded)));
  }
};

namespace detail {

// One masked position: 80% [MASK], 10% kept, 10% a random vocabulary entry, in the reference's draw order.
// The draws do not depend on the token, so "kept" is returned as MaskedToken::kKeep rather than read here.
inline int32_t masked_token(const MaskingVocab& vocab, PyRandom& rng) {
  if (rng.random() < 0.8) return vocab.mask_id;
  if (rng.random_below_half()) return MaskedToken::kKeep;
  const auto& words = vocab.random_word_ids;
  return words[static_cast<size_t>(rng.randint(0, static_cast<int64_t>(words.size()) - 1))];
}

// The masked positions of one instance, collected in masking order and handed out in position order (the
// reference sorts them): a bitset over the positions, so no comparison sort.
class MaskedSet {
 public:
  void reset(uint32_t length) {
    bits_.assign((length + 63) / 64, 0);
    replacement_.resize(length);
    count_ = 0;
  }
  bool contains(uint32_t pos) const { return bits_[pos / 64] >> (pos % 64) & 1; }
  void add(uint32_t pos, int32_t replacement) {
    bits_[pos / 64] |= uint64_t{1} << (pos % 64);
    replacement_[pos] = replacement;
    ++count_;
  }
  size_t size() const { return count_; }
  void append_sorted(std::vector<MaskedToken>& masks) const {
    for (size_t w = 0; w < bits_.size(); ++w)
      for (uint64_t bits = bits_[w]; bits != 0; bits &= bits - 1) {
        const uint32_t pos = static_cast<uint32_t>(w * 64 + static_cast<size_t>(__builtin_ctzll(bits)));
        masks.push_back({pos, replacement_[pos]});
      }
  }

 private:
  std::vector<uint64_t> bits_;
  std::vector<int32_t> replacement_;
  size_t count_ = 0;
};

// Without whole-word masking every candidate is one position: the first num_to_predict of the shuffled
// candidates are masked. The random draws are exactly those of the general path below.
template <typename View>
void mask_single_tokens(const View& view, uint32_t length, size_t num_to_predict, const MaskingVocab& vocab,
                        PyRandom& rng, std::vector<MaskedToken>& masks) {
  thread_local std::vector<uint32_t> candidates;
  thread_local MaskedSet masked;
  view.candidates(candidates);
  rng.shuffle(candidates);
  masked.reset(length);
  const size_t count = std::min(num_to_predict, candidates.size());
  for (size_t k = 0; k < count; ++k) {
    const uint32_t pos = candidates[k];
    masked.add(pos, masked_token(vocab, rng));
  }
  masked.append_sorted(masks);
}

// Whole-word masking: a candidate is a group of positions, a word and its "##" pieces.
template <typename View>
void mask_whole_words(const View& view, uint32_t length, size_t num_to_predict, const MaskingVocab& vocab,
                      PyRandom& rng, std::vector<MaskedToken>& masks) {
  // Group g is members[group_begin[g] .. group_begin[g+1]). Scratch buffers are reused across instances.
  thread_local std::vector<uint32_t> group_begin, members, group_order;
  thread_local MaskedSet masked;
  group_begin.clear();
  members.clear();
  for (uint32_t pos = 0; pos < length; ++pos) {
    const int32_t t = view[pos];
    if (t == vocab.cls_id || t == vocab.sep_id) continue;
    const bool joins = !group_begin.empty() && t >= 0 && static_cast<size_t>(t) < vocab.is_continuation.size() &&
                       vocab.is_continuation[static_cast<size_t>(t)];
    if (!joins) group_begin.push_back(static_cast<uint32_t>(members.size()));
    members.push_back(pos);
  }
  const size_t num_groups = group_begin.size();
  group_begin.push_back(static_cast<uint32_t>(members.size()));
  group_order.resize(num_groups);
  for (size_t g = 0; g < num_groups; ++g) group_order[g] = static_cast<uint32_t>(g);
  rng.shuffle(group_order);

  masked.reset(length);
  for (uint32_t g : group_order) {
    if (masked.size() >= num_to_predict) break;
    const size_t size = group_begin[g + 1] - group_begin[g];
    if (masked.size() + size > num_to_predict) continue;  // a whole word that does not fit is skipped
    bool any_covered = false;
    for (size_t k = group_begin[g]; k < group_begin[g + 1]; ++k) any_covered |= masked.contains(members[k]);
    if (any_covered) continue;
    for (size_t k = group_begin[g]; k < group_begin[g + 1]; ++k)
      masked.add(members[k], masked_token(vocab, rng));
  }
  masked.append_sorted(masks);
}

}  // namespace detail

// Appends the masks of one sequence to `masks`, in position order, drawing from `rng` as the reference does.
template <typename View>
void draw_masks(const View& view, uint32_t length, const MaskingRule& rule, const MaskingVocab& vocab, PyRandom& rng,
                std::vector<MaskedToken>& masks) {
  if (rule.whole_word_mask) detail::mask_whole_words(view, length, rule.count(length), vocab, rng, masks);
  else detail::mask_single_tokens(view, length, rule.count(length), vocab, rng, masks);
}

}  // namespace bk
