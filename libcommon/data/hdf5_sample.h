// One BERT pretraining sample as the HDF5 layouts hold it, independent of the layout.
//
// Two layouts exist on disk (see bertkit-formats(5)):
//   nvidia     NVIDIA DeepLearningExamples: fixed-width rows, input_ids i4 [N,L], input_mask i1 [N,L],
//              segment_ids i1 [N,L], masked_lm_positions i4 [N,P], masked_lm_ids i4 [N,P],
//              next_sentence_labels i1 [N]. Padding is 0; the first 0 in masked_lm_positions ends the predictions
//              (position 0 is always [CLS], which is never masked).
//   varlength  MLPerf's variable-length rows: input_ids vlen<i2>, segment_ids vlen<i1>, masked_lm_positions
//              vlen<i2>, masked_lm_ids vlen<i2>, next_sentence_labels i1 [N]; no input_mask (length = vlen length).
// In memory only the real tokens and the real predictions are kept; input_mask is implied by the length.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bk {

enum class Hdf5Layout { nvidia, varlength };

const char* layout_name(Hdf5Layout layout);
// Parses "nvidia" or "varlength"; returns false for anything else.
bool parse_layout(std::string_view text, Hdf5Layout& layout);

struct PretrainSample {
  std::vector<int32_t> input_ids;            // the real tokens: [CLS] a [SEP] b [SEP], no padding
  std::vector<int32_t> segment_ids;          // same length as input_ids
  std::vector<int32_t> masked_lm_positions;  // only the real predictions, each in [1, input_ids.size())
  std::vector<int32_t> masked_lm_ids;        // same length as masked_lm_positions
  int32_t next_sentence_label = 0;           // 1 = random next

  size_t length() const { return input_ids.size(); }  // = sum(input_mask) in the NVIDIA layout
  bool operator==(const PretrainSample&) const = default;
};

// The names of the datasets, in the order NVIDIA's loader lists them.
inline constexpr const char* kDatasetInputIds = "input_ids";
inline constexpr const char* kDatasetInputMask = "input_mask";
inline constexpr const char* kDatasetSegmentIds = "segment_ids";
inline constexpr const char* kDatasetMaskedPositions = "masked_lm_positions";
inline constexpr const char* kDatasetMaskedIds = "masked_lm_ids";
inline constexpr const char* kDatasetNextSentence = "next_sentence_labels";

// Checks the invariants every layout relies on; returns "" if the sample is fine, else what is wrong
// (naming the dataset, e.g. "masked_lm_positions: position 130 is beyond the sample's 128 tokens").
std::string check_sample(const PretrainSample& sample);

}  // namespace bk
