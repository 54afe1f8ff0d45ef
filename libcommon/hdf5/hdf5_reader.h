// Reading BERT pretraining samples from an HDF5 file in either layout (see hdf5/hdf5_sample.h).
//
// The layout is detected from the file: input_ids with a variable-length type means MLPerf's varlength layout,
// a 2-D integer input_ids the NVIDIA one, unless next_sentence_positions is there too (the packed layout). The constructor checks that every dataset the layout needs is there,
// has an integer type and a shape consistent with the others; read_block() then reads rows in blocks (memory is
// one block, never the whole file) and checks each sample. Every error names the file, and where it applies the
// dataset and the 0-based row.
#pragma once

#include "hdf5/hdf5_handle.h"
#include "hdf5/hdf5_sample.h"

#include <cstdint>
#include <string>
#include <vector>

namespace bk {

class PretrainReader {
 public:
  explicit PretrainReader(const std::string& path);

  Hdf5Layout layout() const { return layout_; }
  const std::string& path() const { return path_; }
  uint64_t rows() const { return rows_; }
  uint64_t next_row() const { return next_row_; }     // rows handed out so far
  int seq_len() const { return seq_len_; }            // L of the NVIDIA layout; 0 for varlength
  int max_predictions() const { return max_pred_; }   // P of the NVIDIA layout; 0 for varlength
  int max_sequences() const { return max_seqs_; }     // S, the samples a row may hold, of the packed layout; else 1
  // False for unmasked instances (mkpretrain --masking none): samples without predictions, with a sample_id.
  bool masked() const { return masked_; }
  // The root attribute bertkit_vocab: the stamp (tok/vocab_stamp.h) of the vocabulary the ids are of, as bertkit's
  // writers record it; empty when the file has none (Google's, NVIDIA's).
  const std::string& vocab_stamp() const { return vocab_stamp_; }

  // The sample_id of `row` of an unmasked file that is not packed; -1 for other files.
  int64_t sample_id_at(uint64_t row);

  // Replaces `out` with the next up to max_rows samples; returns false (and leaves `out` empty) at the end.
  bool read_block(std::vector<PretrainSample>& out, size_t max_rows = 1024);

 private:
  struct Dataset {
    const char* name = nullptr;
    Hid id;
    uint64_t width = 0;  // columns of a 2-D dataset; 0 for 1-D datasets
  };
  Dataset open_dataset(const char* name, bool vlen, bool two_d_ok);
  std::vector<int64_t> read_fixed(const Dataset& d, uint64_t first, uint64_t count);
  std::vector<std::vector<int64_t>> read_vlen(const Dataset& d, uint64_t first, uint64_t count);
  void read_nvidia(std::vector<PretrainSample>& out, uint64_t first, uint64_t count);
  void read_varlength(std::vector<PretrainSample>& out, uint64_t first, uint64_t count);
  void read_packed(std::vector<PretrainSample>& out, uint64_t first, uint64_t count);
  [[noreturn]] void row_error(uint64_t row, const std::string& what) const;

  std::string path_;
  Hid file_;
  Hdf5Layout layout_ = Hdf5Layout::nvidia;
  uint64_t rows_ = 0, next_row_ = 0;
  int seq_len_ = 0, max_pred_ = 0, max_seqs_ = 1;
  bool masked_ = true;
  std::string vocab_stamp_;
  Dataset input_ids_, input_mask_, segment_ids_, positions_, masked_ids_, next_sentence_;
  Dataset token_positions_, next_sentence_positions_, next_sentence_weights_;  // the packed layout's
  Dataset sample_ids_;                                                        // unmasked files
  bool sample_ids_clipped_ = false;                                           // unsigned 64-bit on disk
  void read_sample_ids(std::vector<PretrainSample>& out, uint64_t first, uint64_t count);
  int64_t checked_sample_id(uint64_t row, int64_t id) const;
};

}  // namespace bk
