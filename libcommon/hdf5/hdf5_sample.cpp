#include "hdf5/hdf5_sample.h"

#include <fmt/format.h>

namespace bk {

const char* layout_name(Hdf5Layout layout) {
  switch (layout) {
    case Hdf5Layout::nvidia: return "nvidia";
    case Hdf5Layout::varlength: return "varlength";
    case Hdf5Layout::packed: return "packed";
  }
  return "?";
}

bool parse_layout(std::string_view text, Hdf5Layout& layout) {
  if (text == "nvidia") layout = Hdf5Layout::nvidia;
  else if (text == "varlength") layout = Hdf5Layout::varlength;
  else return false;
  return true;
}

std::string check_sample(const PretrainSample& s) {
  if (s.input_ids.empty()) return "input_ids: the sample has no tokens";
  if (s.segment_ids.size() != s.input_ids.size())
    return fmt::format("segment_ids: {} values for {} input_ids", s.segment_ids.size(), s.input_ids.size());
  if (s.masked_lm_ids.size() != s.masked_lm_positions.size())
    return fmt::format("masked_lm_ids: {} values for {} masked_lm_positions", s.masked_lm_ids.size(),
                       s.masked_lm_positions.size());
  for (int32_t id : s.input_ids)
    if (id < 0) return fmt::format("input_ids: negative token id {}", id);
  for (int32_t seg : s.segment_ids)
    if (seg < 0 || seg > 127) return fmt::format("segment_ids: value {} is outside [0, 127]", seg);
  for (int32_t pos : s.masked_lm_positions) {
    // Position 0 is [CLS]; in the NVIDIA layout a 0 would also end the prediction list early.
    if (pos < 1) return fmt::format("masked_lm_positions: position {} (must be at least 1)", pos);
    if (static_cast<size_t>(pos) >= s.input_ids.size())
      return fmt::format("masked_lm_positions: position {} is beyond the sample's {} tokens", pos, s.input_ids.size());
  }
  for (int32_t id : s.masked_lm_ids)
    if (id < 0) return fmt::format("masked_lm_ids: negative token id {}", id);
  if (s.next_sentence_label != 0 && s.next_sentence_label != 1)
    return fmt::format("next_sentence_labels: value {} is not 0 or 1", s.next_sentence_label);
  if (s.pack_labels.size() != s.pack_lengths.size())
    return fmt::format("next_sentence_labels: {} labels for {} packed samples", s.pack_labels.size(),
                       s.pack_lengths.size());
  if (!s.pack_sample_ids.empty() && s.pack_sample_ids.size() != s.pack_lengths.size())
    return fmt::format("sample_ids: {} ids for {} packed samples", s.pack_sample_ids.size(), s.pack_lengths.size());
  for (size_t k = 0; k < s.pack_sample_ids.size(); ++k)
    if (s.pack_sample_ids[k] < 0)
      return fmt::format("sample_ids: value {} of packed sample {} is negative", s.pack_sample_ids[k], k + 1);
  size_t packed = 0;
  for (size_t k = 0; k < s.pack_lengths.size(); ++k) {
    if (s.pack_lengths[k] < 2) return fmt::format("input_mask: packed sample {} has {} tokens", k + 1, s.pack_lengths[k]);
    if (s.pack_labels[k] != 0 && s.pack_labels[k] != 1)
      return fmt::format("next_sentence_labels: value {} of packed sample {} is not 0 or 1", s.pack_labels[k], k + 1);
    packed += static_cast<size_t>(s.pack_lengths[k]);
  }
  if (!s.pack_lengths.empty() && packed != s.input_ids.size())
    return fmt::format("input_mask: the packed samples' lengths sum to {}, the row holds {} tokens", packed,
                       s.input_ids.size());
  return "";
}

}  // namespace bk
