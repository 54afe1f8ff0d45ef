#include "datasets/shared_vocab_stamp.h"

#include "hdf5/hdf5_reader.h"
#include "util/error.h"

#include <fmt/format.h>

namespace bk {

void SharedVocabStamp::add(const PretrainReader& reader) {
  // A stamp of a form this version does not know is left alone rather than misread.
  const std::optional<VocabStamp> mine = parse_vocab_stamp(reader.vocab_stamp());
  if (!mine) {
    if (first_unstamped_.empty()) first_unstamped_ = reader.path();
    return;
  }
  if (!stamp_) {
    stamp_ = StampedVocab{*mine, reader.path()};
    return;
  }
  if (!mine->same_tokens(stamp_->stamp) || mine->lower_case != stamp_->stamp.lower_case)
    fail("{} ({}) and {} ({}) were made with different vocabularies; give files of one vocabulary", stamp_->where,
         stamp_->stamp.describe(), reader.path(), mine->describe());
}

std::string SharedVocabStamp::unstamped_note() const {
  if (!stamp_ || first_unstamped_.empty()) return "";
  return fmt::format("{} records no vocabulary; taken as {}'s ({}), which the others record", first_unstamped_,
                     stamp_->where, stamp_->stamp.describe());
}

}  // namespace bk
