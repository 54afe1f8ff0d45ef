// What `tfrecord2hdf5` does, behind the thin main in tools/tfrecord2hdf5.cpp: stream TFRecord files of
// tf.train.Example records into HDF5, as pretraining samples (NVIDIA or MLPerf layout) or, for any other
// records, as one generic column per feature.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bk {

struct Tfrecord2hdf5Config {
  std::vector<std::string> inputs;
  std::string output;       // one HDF5 file for all inputs, or
  std::string output_dir;   // one DIR/<input name>.hdf5 per input
  std::string layout = "auto";  // auto | nvidia | varlength | generic
  int max_seq_length = 0;   // 0 = from the first record
  int max_predictions = 0;  // 0 = from the first record
  int gzip_level = 0;       // deflate level 1-9, 0 = none
  bool skip_corrupt = false;
  bool force = false;
  bool quiet = false;

  // bk::UsageError naming the flag for a value or a combination no run can use.
  void validate() const;
};

struct Tfrecord2hdf5Stats {
  uint64_t records = 0, skipped = 0, bytes = 0, outputs = 0;
};

// Validates the config, then converts; throws bk::Error naming the file, record and byte offset of a bad record.
Tfrecord2hdf5Stats run_tfrecord2hdf5(const Tfrecord2hdf5Config& config);

}  // namespace bk
