// Writing BERT pretraining samples to an HDF5 file in either layout (see hdf5/hdf5_sample.h).
//
// Streaming: the datasets are chunked and extendible in N; append() buffers up to chunk_rows rows and writes
// them as one chunk-aligned block, so memory is one chunk per dataset whatever the number of rows. The file is
// written under a temporary name and renamed by commit(); without commit() (an error, SIGINT) nothing is left.
// The dtypes are the ones NVIDIA's and MLPerf's own writers produce, so their loaders read our files unchanged.
#pragma once

#include "hdf5/hdf5_chunk_compressor.h"
#include "hdf5/hdf5_handle.h"
#include "hdf5/hdf5_sample.h"

#include <cstdint>
#include <string>
#include <vector>

namespace bk {

struct PretrainWriterOptions {
  Hdf5Layout layout = Hdf5Layout::nvidia;
  int seq_len = 512;          // L: the row width of the NVIDIA layout (ignored for varlength)
  int max_predictions = 76;   // P: the prediction slots of the NVIDIA layout (ignored for varlength)
  int max_sequences = 3;      // S: the samples a row may hold in the packed layout
  int gzip_level = 0;         // 0 = uncompressed, 1..9 = deflate level
  size_t chunk_rows = 256;    // rows per HDF5 chunk, and rows buffered in memory between writes
  bool overwrite = false;     // replace an existing file (the tools' --force)
  // false: unmasked instances: no masked_lm_* datasets, each sample's sample_id in sample_ids instead (a packed
  // row's pack_sample_ids; hdf5_sample.h); max_predictions is ignored.
  bool masked = true;
  // Not owned. With gzip_level > 0, full chunks of the NVIDIA and packed layouts are deflated on its workers and
  // stored as they are (the bytes HDF5's filter would write); commit() flushes it, so it must outlive the writer's
  // appends. Null: HDF5 compresses on the calling thread.
  ChunkCompressor* compressor = nullptr;
  // The stamp (tok/vocab_stamp.h) of the vocabulary the ids are of, stored as the root attribute bertkit_vocab;
  // empty: not known (none is stored).
  std::string vocab_stamp;
};

class PretrainWriter {
 public:
  PretrainWriter(const std::string& path, const PretrainWriterOptions& options);
  ~PretrainWriter();
  PretrainWriter(const PretrainWriter&) = delete;
  PretrainWriter& operator=(const PretrainWriter&) = delete;

  // Checks the sample (fails naming the file and row) and buffers it.
  void append(const PretrainSample& sample);
  // Writes what is buffered, closes the file and renames it into place.
  void commit();

  const std::string& path() const { return file_.path(); }
  uint64_t rows() const { return written_ + buffered_; }
  const PretrainWriterOptions& options() const { return options_; }

 private:
  struct Column {
    const char* name;
    Hid dataset;
    hid_t memory_type;   // native type of the buffer
    uint64_t width;      // values per row of a 2-D dataset; 0 for 1-D and vlen datasets
  };
  void create_column(Column& column, const char* name, hid_t file_type, hid_t memory_type, uint64_t width);
  void append_pack(const PretrainSample& sample, size_t row);
  void write_fixed(Column& column, const void* data);
  void flush();
  [[noreturn]] void row_error(const std::string& what) const;

  Hdf5TempFile file_;
  PretrainWriterOptions options_;
  uint64_t written_ = 0;
  size_t buffered_ = 0;
  Column input_ids_{}, input_mask_{}, segment_ids_{}, positions_{}, masked_ids_{}, next_sentence_{};
  Column token_positions_{}, next_sentence_positions_{}, next_sentence_weights_{};  // the packed layout's
  Column sample_ids_{};                                                              // unmasked files
  std::vector<int64_t> sample_ids_flat_;
  Hid vlen_i16_, vlen_i8_, vlen_file_i16_, vlen_file_i8_;  // varlength memory and file types
  // NVIDIA and packed layouts: flat row-major buffers of chunk_rows rows.
  std::vector<int32_t> ids_flat_, positions_flat_, masked_flat_, token_positions_flat_, nsp_positions_flat_,
      nsp_weights_flat_;
  std::vector<int8_t> mask_flat_, segments_flat_;
  // varlength layout: one vector per row.
  std::vector<std::vector<int16_t>> ids_rows_, positions_rows_, masked_rows_;
  std::vector<std::vector<int8_t>> segments_rows_;
  std::vector<int8_t> labels_;
};

}  // namespace bk
