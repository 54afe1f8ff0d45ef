#include "glue/glue_features.h"

#include "tfrecord/example.h"
#include "tok/full_tokenizer.h"
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

GlueFeatures GlueFeatures::convert(const GlueTask& task, const GlueExamples& examples, FullTokenizer& tokenizer,
                                   const GlueFeatureOptions& options) {
  options.validate();
  const Vocab& vocab = tokenizer.vocab();
  const int32_t cls = vocab.require("[CLS]"), sep = vocab.require("[SEP]");

  GlueFeatures out;
  out.options_ = options;
  out.regression_ = task.regression();
  const size_t n = examples.examples.size();
  out.begin_.reserve(n + 1);
  out.segment_a_.reserve(n);
  out.label_ids_.reserve(n);
  out.label_values_.reserve(n);
  const auto L = static_cast<size_t>(options.max_seq_length);
  std::vector<int32_t> a, b;
  for (const GlueExample& example : examples.examples) {
    tokenizer.encode(example.text_a, a);
    b.clear();
    if (!example.text_b.empty()) tokenizer.encode(example.text_b, b);  // `if example.text_b:`
    if (!b.empty()) truncate_seq_pair(a, b, L - 3);                    // `if tokens_b:` [CLS] A [SEP] B [SEP]
    else if (a.size() > L - 2) a.resize(L - 2);                        // [CLS] A [SEP]
    out.ids_.push_back(cls);
    out.ids_.insert(out.ids_.end(), a.begin(), a.end());
    out.ids_.push_back(sep);
    out.segment_a_.push_back(static_cast<uint32_t>(a.size() + 2));
    // Truncation may have emptied B: the reference then writes no second segment (its `if tokens_b:` again).
    if (!b.empty()) {
      out.ids_.insert(out.ids_.end(), b.begin(), b.end());
      out.ids_.push_back(sep);
    }
    out.begin_.push_back(static_cast<uint32_t>(out.ids_.size()));
    out.label_ids_.push_back(example.label_id);
    out.label_values_.push_back(example.label_value);
  }
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
