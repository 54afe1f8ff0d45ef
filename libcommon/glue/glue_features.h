// GLUE features as google-research/bert run_classifier.py's convert_single_example makes them, and the
// tf.train.Example its file_based_convert_examples_to_features writes for each.
//
// text_a (and text_b when it is not empty) through the WordPiece tokenizer; a pair is cut by _truncate_seq_pair
// to max_seq_length - 3 pieces, a single text to max_seq_length - 2; then [CLS] A [SEP], and B [SEP] when B still
// has pieces, padded with zeros to max_seq_length, segment 0 up to the first [SEP] and 1 after it.
// With a byte-level BPE tokenizer, the texts as HF's tokenizer(text_a, text_b, truncation=True, max_length=L)
// gives them, which run_glue.py trains RoBERTa and ModernBERT on: the tokenizer's template (<s> A </s></s> B </s>),
// a pair cut by HF's longest_first rule (truncate_longest_first); segment 1 starts after the separators that
// follow A. The record is
// input_ids, input_mask, segment_ids, label_ids and is_real_example (1). label_ids is an int64 (the label's
// position in the task's labels), except for a regression (STS-B), where it is the float label, as NVIDIA's and
// HF's regression heads read it.
#pragma once

#include "glue/glue_tasks.h"
#include "tok/vocab_fit.h"

#include <cstdint>
#include <span>
#include <vector>

namespace bk {

class Example;
class TextTokenizer;

// run_classifier.py's default.
struct GlueFeatureOptions {
  int max_seq_length = 128;

  // bk::UsageError naming --max-seq-length when it leaves no room for [CLS] A [SEP] B [SEP].
  void validate() const;
};

// _truncate_seq_pair: drops the last piece of the longer list (of b on a tie) until both fit in max_length.
void truncate_seq_pair(std::vector<int32_t>& a, std::vector<int32_t>& b, size_t max_length);
// HF tokenizers' longest_first: the longer list alone is cut when the shorter leaves it room; otherwise the shorter
// keeps max_length / 2 and the longer the rest (a counts as the shorter on a tie). Unlike _truncate_seq_pair, b
// keeps the extra piece of an odd max_length when the lists tie.
void truncate_longest_first(std::vector<int32_t>& a, std::vector<int32_t>& b, size_t max_length);

// Every example's features, one per example in order, the pieces of all of them back to back.
class GlueFeatures {
 public:
  // convert_single_example over every example. The tokenizer needs its template's tokens (bk::Error if not).
  static GlueFeatures convert(const GlueTask& task, const GlueExamples& examples, const TextTokenizer& tokenizer,
                              const GlueFeatureOptions& options);

  size_t size() const { return segment_a_.size(); }
  // [CLS] A [SEP] (B [SEP]) as ids, unpadded.
  std::span<const int32_t> input_ids(size_t i) const {
    return std::span(ids_).subspan(begin_[i], begin_[i + 1] - begin_[i]);
  }
  size_t segment_a_length(size_t i) const { return segment_a_[i]; }  // [CLS] A [SEP] (</s></s>): segment 0
  int32_t label_id(size_t i) const { return label_ids_[i]; }
  float label_value(size_t i) const { return label_values_[i]; }
  bool regression() const { return regression_; }
  const GlueFeatureOptions& options() const { return options_; }
  const UnknownCount& unknown() const { return unknown_; }  // the pieces made and the unknown ones among them

  // The record file_based_convert_examples_to_features writes.
  void to_example(size_t i, Example& out) const;

 private:
  GlueFeatureOptions options_;
  bool regression_ = false;
  std::vector<int32_t> ids_;
  std::vector<uint32_t> begin_{0};
  std::vector<uint32_t> segment_a_;
  std::vector<int32_t> label_ids_;
  std::vector<float> label_values_;
  UnknownCount unknown_;
};

}  // namespace bk
