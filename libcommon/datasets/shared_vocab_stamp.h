// The vocabulary several pretraining HDF5 files share (their bertkit_vocab attributes, tok/vocab_stamp.h), gathered
// as the files are opened, by the tools that read many: bin4, pack, bert-train and bert-eval. Torch-free.
#pragma once

#include "tok/vocab_stamp.h"

#include <optional>
#include <string>

namespace bk {

class PretrainReader;

// Two files with different stamps are a bk::Error naming both, since their ids are of different vocabularies (or
// the same tokens cased differently). A file without a stamp (Google's, NVIDIA's, tfrecord2hdf5's) goes with any,
// but then the files share no known vocabulary: stamp() is empty, so that an output never claims one for ids it
// cannot vouch for.
class SharedVocabStamp {
 public:
  void add(const PretrainReader& reader);
  std::optional<StampedVocab> stamp() const { return unstamped_ ? std::nullopt : stamp_; }
  // The stamp's text for a writer (PretrainWriterOptions::vocab_stamp); empty when the files share none.
  std::string text() const { return stamp() ? stamp_->stamp.text() : std::string(); }

 private:
  std::optional<StampedVocab> stamp_;
  bool unstamped_ = false;  // some file records no stamp
};

}  // namespace bk
