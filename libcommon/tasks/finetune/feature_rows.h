// Fine-tuning features as the training side consumes them: fixed-width rows of token ids, mask and segments with
// their targets, read from the TFRecords Google's scripts write (run_squad.py's FeatureWriter: unique_ids,
// input_ids, input_mask, segment_ids [, start_positions, end_positions, is_impossible]; run_classifier.py's
// file_based_convert_examples_to_features: input_ids, input_mask, segment_ids, label_ids, is_real_example) and what
// `bert-finetune features` writes in the same layouts. Torch-free.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bk {

struct FeatureRows {
  int64_t seq_len = 0;
  std::vector<int32_t> input_ids, input_mask, segment_ids;  // size() * seq_len each
  std::vector<int64_t> unique_ids;                          // SQuAD features; empty otherwise
  std::vector<int32_t> start_positions, end_positions;      // SQuAD training features; empty otherwise
  std::vector<float> labels;                                // GLUE: class index, or the value (regression)
  std::vector<uint8_t> real;                                // is_real_example (1 unless padding for TPUs)

  size_t size() const { return seq_len > 0 ? input_ids.size() / static_cast<size_t>(seq_len) : 0; }
  bool has_spans() const { return !start_positions.empty(); }
  bool has_labels() const { return !labels.empty(); }
  int64_t length(size_t row) const;  // real tokens of a row (its mask's sum)
};

// Reads every record; a record whose features disagree with the first one's (missing feature, another width) is
// an error naming the file and the record. label_ids may be int64 (classification) or float (regression).
FeatureRows read_feature_records(const std::string& path);

}  // namespace bk
