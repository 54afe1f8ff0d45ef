// The vocabulary several pretraining HDF5 files share (their bertkit_vocab attributes, tok/vocab_stamp.h), gathered
// as the files are opened, by the tools that read many: bin4, pack, bert-train and bert-eval. Torch-free.
#pragma once

#include "tok/vocab_stamp.h"

#include <optional>
#include <string>

namespace bk {

class PretrainReader;

// Two files with different stamps are a bk::Error naming both, since their ids are of different vocabularies (or
// the same tokens cased differently). A file without a stamp (Google's, NVIDIA's, tfrecord2hdf5's) goes with the
// stamped ones, and the stamp they record is kept for all: dropping it would let an output (or a run) take any
// vocabulary at all, while the unstamped file's ids are, at worst, as unchecked as they were. unstamped_note() says
// so in one line, for the tool to print.
class SharedVocabStamp {
 public:
  void add(const PretrainReader& reader);
  std::optional<StampedVocab> stamp() const { return stamp_; }
  // The stamp's text for a writer (PretrainWriterOptions::vocab_stamp); empty when no file records one.
  std::string text() const { return stamp_ ? stamp_->stamp.text() : std::string(); }
  // A warning when stamped and unstamped files were mixed; empty otherwise.
  std::string unstamped_note() const;

 private:
  std::optional<StampedVocab> stamp_;
  std::string first_unstamped_;  // a file that records no stamp
};

}  // namespace bk
