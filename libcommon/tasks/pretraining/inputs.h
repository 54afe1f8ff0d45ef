// What bert-train's --input names, resolved to the HDF5 files the pretraining loader reads. Torch-free.
//
// Each input is one of
//   - an HDF5 file in the NVIDIA or MLPerf varlength layout (hdf5/hdf5_reader.h);
//   - a directory: all its *.hdf5 and *.h5 files, sorted by name;
//   - a bin4 directory (one holding bin4.json, see bin4(1)): its bins' part-*.hdf5 files, one source per bin.
// Plain inputs and bin4 directories cannot be mixed; several bin4 directories must have the same bins.
// Every file is opened once here (layout checked, rows counted), so a missing, non-HDF5 or malformed input fails
// before training starts, with an error naming the file; so does a file named twice. A tool resolves each set of
// inputs once: the loader, the evaluation and the checks take the value (PretrainInputs), never the names again.
#pragma once

#include "tasks/pretraining/sampler.h"
#include "tok/vocab_stamp.h"

#include <optional>
#include <string>
#include <vector>

namespace bk {

struct PretrainInputs {
  std::vector<std::string> names;                // as given (files, directories), for messages
  std::vector<std::vector<SampleFile>> sources;  // one source, or one per bin
  std::vector<int> bin_bounds;                   // bin4: each bin's max_length; empty otherwise
  std::optional<StampedVocab> vocab;             // the vocabulary the files record, if any (files of two fail)
  bool masked = true;                            // false: unmasked instances, all of them (a mix fails)
  // Every sample of the first file's first rows is labelled "is next": single-segment data (mkpretrain --no-nsp
  // or --full-sentences), on which a next-sentence head learns a constant.
  bool single_segment = false;
  // Some sample of those rows is labelled "random next": next-sentence data.
  bool next_sentence_labels = false;
  std::vector<std::string> warnings;  // one line each, for the caller to print: sample ids shared, a stamp missing

  std::vector<SampleFile> files() const;  // every source's files, in order
  uint64_t rows() const;                  // of all files
  std::string named() const;              // the names, comma-separated
};

PretrainInputs resolve_pretrain_inputs(const std::vector<std::string>& inputs);

// --max-predictions P: at most the inputs' longest row (a row of L tokens has fewer than L to mask), or for
// varlength files, which record no width, `max_positions` (the model's longest sequence). A usage error before any
// batch of B x P slots is allocated.
void check_max_predictions(int64_t max_predictions, const PretrainInputs& inputs, int64_t max_positions);

}  // namespace bk
