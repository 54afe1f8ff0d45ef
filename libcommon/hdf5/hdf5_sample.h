// One BERT pretraining sample as the HDF5 layouts hold it, independent of the layout.
//
// Two layouts exist on disk (see bertkit-formats(5)):
//   nvidia     NVIDIA DeepLearningExamples: fixed-width rows, input_ids i4 [N,L], input_mask i1 [N,L],
//              segment_ids i1 [N,L], masked_lm_positions i4 [N,P], masked_lm_ids i4 [N,P],
//              next_sentence_labels i1 [N]. Padding is 0; the first 0 in masked_lm_positions ends the predictions
//              (position 0 is always [CLS], which is never masked).
//   varlength  MLPerf's variable-length rows: input_ids vlen<i2>, segment_ids vlen<i1>, masked_lm_positions
//              vlen<i2>, masked_lm_ids vlen<i2>, next_sentence_labels i1 [N]; no input_mask (length = vlen length).
//   packed     several samples back to back in each fixed-width row (written by `pack`), the layout of Graphcore's
//              packed BERT as Habana's MLPerf loader reads it: input_ids i4 [N,L], input_mask i1 [N,L] (the
//              1-based index of the sample each token belongs to, 0 for padding), segment_ids i1 [N,L], positions
//              i4 [N,L] (restarting at 0 with each sample), masked_lm_positions i4 [N,P] and masked_lm_ids i4 [N,P]
//              (positions within the row, 0-padded), next_sentence_positions i4 [N,S] (where each sample's [CLS]
//              is), next_sentence_labels i1 [N,S], next_sentence_weights i4 [N,S] (1 for a sample, 0 for a slot
//              without one).
// Unmasked files (mkpretrain --masking none, and pack of such files): the same datasets without masked_lm_positions
// and masked_lm_ids, and sample_ids, the identity each sample's masks are drawn from: i8 [N] in the nvidia and
// varlength layouts, i8 [N,S] in the packed layout (one per sample of the row, -1 for a slot without one).
// In memory only the real tokens and the real predictions are kept; input_mask is implied by the length.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bk {

enum class Hdf5Layout { nvidia, varlength, packed };

const char* layout_name(Hdf5Layout layout);
// Parses "nvidia" or "varlength" (the layouts a sample writer may choose; `pack` alone writes packed rows);
// returns false for anything else.
bool parse_layout(std::string_view text, Hdf5Layout& layout);

struct PretrainSample {
  std::vector<int32_t> input_ids;            // the real tokens: [CLS] a [SEP] b [SEP], no padding
  std::vector<int32_t> segment_ids;          // same length as input_ids
  std::vector<int32_t> masked_lm_positions;  // only the real predictions, each in [1, input_ids.size())
  std::vector<int32_t> masked_lm_ids;        // same length as masked_lm_positions
  int32_t next_sentence_label = 0;           // 1 = random next
  // A packed row: the lengths of the samples it holds, in order (they sum to length()), and each one's
  // next_sentence_label; masked_lm_positions count from the row's start. Empty for a row of one sample.
  std::vector<int32_t> pack_lengths, pack_labels;
  // An unmasked sample (mkpretrain --masking none): no predictions yet, and the identity its masks are drawn from
  // at every epoch (pretraining_data/dynamic_masks.h); -1 in masked files.
  int64_t sample_id = -1;
  // A packed row of unmasked samples: each one's sample_id, in the order of pack_lengths (sample_id stays -1).
  std::vector<int64_t> pack_sample_ids;

  size_t length() const { return input_ids.size(); }  // = sum(input_mask) in the NVIDIA layout
  size_t sequences() const { return pack_lengths.empty() ? 1 : pack_lengths.size(); }
  bool unmasked() const { return sample_id >= 0 || !pack_sample_ids.empty(); }
  bool operator==(const PretrainSample&) const = default;
};

// The names of the datasets, in the order NVIDIA's loader lists them.
// The root attribute holding the vocabulary stamp (tok/vocab_stamp.h) of the vocabulary the ids are of.
inline constexpr const char* kAttributeVocab = "bertkit_vocab";
inline constexpr const char* kDatasetInputIds = "input_ids";
inline constexpr const char* kDatasetInputMask = "input_mask";
inline constexpr const char* kDatasetSegmentIds = "segment_ids";
inline constexpr const char* kDatasetMaskedPositions = "masked_lm_positions";
inline constexpr const char* kDatasetMaskedIds = "masked_lm_ids";
inline constexpr const char* kDatasetNextSentence = "next_sentence_labels";
// Unmasked files (no masked_lm_positions, no masked_lm_ids): each sample's identity, int64 [N] ([N,S] packed).
inline constexpr const char* kDatasetSampleIds = "sample_ids";
// The packed layout's own datasets.
inline constexpr const char* kDatasetPositions = "positions";
inline constexpr const char* kDatasetNextSentencePositions = "next_sentence_positions";
inline constexpr const char* kDatasetNextSentenceWeights = "next_sentence_weights";

// Checks the invariants every layout relies on; returns "" if the sample is fine, else what is wrong
// (naming the dataset, e.g. "masked_lm_positions: position 130 is beyond the sample's 128 tokens").
std::string check_sample(const PretrainSample& sample);

}  // namespace bk
