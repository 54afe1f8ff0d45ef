#include "glue/glue_features.h"

#include "tfrecord/example.h"
#include "tok/text_tokenizer.h"
#include "util/error.h"

#include <algorithm>

namespace bk {

void GlueFeatureOptions::validate() const {
  if (max_seq_length < 3) usage_fail("--max-seq-length must be at least 3 ([CLS] and two [SEP]), got {}", max_seq_length);
}

void truncate_seq_pair(std::vector<int32_t>& a, std::vector<int32_t>& b, size_t max_length) {
  // The reference trims one piece at a time from the end of the longer list, so a long text loses more than a
  // short one.
  while (a.size() + b.size() > max_length) {
    if (a.size() > b.size()) a.pop_back();
    else b.pop_back();
  }
}

void truncate_longest_first(std::vector<int32_t>& a, std::vector<int32_t>& b, size_t max_length) {
  if (a.size() + b.size() <= max_length) return;
  const bool swap = a.size() > b.size();
  size_t shorter = std::min(a.size(), b.size()), longer = std::max(a.size(), b.size());
  longer = shorter > max_length ? shorter : std::max(shorter, max_length - shorter);
  if (shorter + longer > max_length) {
    shorter = max_length / 2;
    longer = shorter + max_length % 2;
  }
  a.resize(std::min(a.size(), swap ? longer : shorter));
  b.resize(std::min(b.size(), swap ? shorter : longer));
}

GlueFeatures GlueFeatures::convert(const GlueTask& task, const GlueExamples& examples, const TextTokenizer& tokenizer,
                                   const GlueFeatureOptions& options) {
  options.validate();
  const SequenceTemplate wrap = tokenizer.sequence_template();
  if (static_cast<size_t>(options.max_seq_length) < wrap.pair_specials())
    usage_fail("--max-seq-length must be at least {} (the tokenizer's special tokens of a pair), got {}",
               wrap.pair_specials(), options.max_seq_length);
  TextTokenizer::Encoder encoder = tokenizer.encoder();

  GlueFeatures out;
  out.options_ = options;
  out.regression_ = task.regression();
  const size_t n = examples.examples.size();
  out.begin_.reserve(n + 1);
  out.segment_a_.reserve(n);
  out.label_ids_.reserve(n);
  out.label_values_.reserve(n);
  const auto L = static_cast<size_t>(options.max_seq_length);
  std::vector<int32_t> a, b, ids;
  for (const GlueExample& example : examples.examples) {
    encoder.encode(example.text_a, a);
    b.clear();
    if (!example.text_b.empty()) encoder.encode(example.text_b, b);  // `if example.text_b:`
    // The reference's `if tokens_b:`: B's pieces, not its text, make a pair, and a pair that truncation empties
    // of B is written as one text.
    if (!b.empty() && tokenizer.byte_level()) truncate_longest_first(a, b, L - wrap.pair_specials());
    else if (!b.empty()) truncate_seq_pair(a, b, L - wrap.pair_specials());
    else if (a.size() > L - wrap.single_specials()) a.resize(L - wrap.single_specials());
    const std::span<const int32_t> second(b);
    wrap.wrap(a, b.empty() ? nullptr : &second, ids);
    out.ids_.insert(out.ids_.end(), ids.begin(), ids.end());
    const size_t segment_a = b.empty() ? ids.size() : wrap.before_a.size() + a.size() + wrap.between.size();
    out.segment_a_.push_back(static_cast<uint32_t>(segment_a));
    out.begin_.push_back(static_cast<uint32_t>(out.ids_.size()));
    out.label_ids_.push_back(example.label_id);
    out.label_values_.push_back(example.label_value);
  }
  out.unknown_ = encoder.take_unknown();
  return out;
}

void GlueFeatures::to_example(size_t i, Example& out) const {
  const auto L = static_cast<size_t>(options_.max_seq_length);
  const auto ids = input_ids(i);
  Int64List input(ids.begin(), ids.end()), mask(L, 0), segments(L, 0);
  input.resize(L, 0);
  std::fill_n(mask.begin(), ids.size(), 1);
  std::fill(segments.begin() + static_cast<ptrdiff_t>(segment_a_[i]), segments.begin() + static_cast<ptrdiff_t>(ids.size()), 1);
  // file_based_convert_examples_to_features' order.
  out.clear();
  out.set_int64("input_ids", std::move(input));
  out.set_int64("input_mask", std::move(mask));
  out.set_int64("segment_ids", std::move(segments));
  if (regression_) out.set_float("label_ids", {label_values_[i]});
  else out.set_int64("label_ids", {label_ids_[i]});
  out.set_int64("is_real_example", {1});
}

}  // namespace bk
