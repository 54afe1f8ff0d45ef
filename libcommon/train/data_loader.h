// The pretraining data loader of bert-train: HDF5 samples in, PretrainBatch (train/batch.h) out.
//
// Inputs (DataLoaderConfig::inputs), each one of
//   - an HDF5 file in the NVIDIA or MLPerf varlength layout (data/hdf5_reader.h);
//   - a directory: all its *.hdf5 and *.h5 files, sorted by name;
//   - a bin4 directory (one holding bin4.json, see bin4(1)): its bins' part-*.hdf5 files, one source per bin.
// Plain inputs and bin4 directories cannot be mixed; several bin4 directories must have the same bins.
// The constructor opens every file once (layout checked, rows counted), so a missing, non-HDF5 or malformed
// input fails before training starts, with an error naming the file.
//
// Order: per epoch, from the seed, the files of each source are shuffled and dealt to the ranks, and the
// samples are shuffled within each file (see train/sampler.h). Batches of batch_size samples are cut from
// the rank's stream; with bin4 inputs each batch takes a fixed number of samples from every bin (bin_ratio,
// default 6:3:2:5, scaled to batch_size as scale_bin_ratio() says), so every batch mixes lengths the same
// way. Every rank yields the same number of batches per epoch (the leftover samples of the epoch are not
// used), so collectives stay in step.
//
// Batches: T = the longest sample in the batch (dynamic truncation), masked_lm_positions padded with 0 and
// masked_lm_ids with -1 to max_predictions (a sample with more predictions is an error naming file and row).
//
// Memory: one file's share per source (one file, or four with bin4) plus `prefetch` batches built ahead by a
// background thread. An error in that thread is raised by next() with its original message.
//
// Resume: position() is (epoch, batches consumed in it); restore() on a loader with the same configuration
// continues with exactly the batch an uninterrupted run would have produced next.
#pragma once

#include "train/batch.h"

#include "data/hdf5_sample.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace bk {

struct DataLoaderConfig {
  std::vector<std::string> inputs;
  int64_t batch_size = 0;       // samples per batch, per rank and micro-step
  int64_t max_predictions = 0;  // P of the batches
  uint64_t seed = 0;
  int rank = 0, world = 1;
  int prefetch = 4;             // batches built ahead by a background thread; 0 builds them inside next()
  std::vector<int> bin_ratio;   // bin4 inputs only: parts per bin; empty = 6:3:2:5 (four bins)
  bool pin_memory = false;      // page-locked batches for fast copies to a CUDA device
  // Every rank reads the whole stream a single process would read and keeps its slice of each global batch of
  // world * batch_size samples, so N ranks see exactly the batches of one rank with N times the batch size (for
  // checking data parallelism; it costs world times the reading).
  bool global_order = false;
};

struct DataPosition {
  int64_t epoch = 0;
  int64_t batch = 0;            // batches consumed in that epoch
  uint64_t fingerprint = 0;     // inputs, seed, world and batch shape it belongs to; 0 = unchecked

  std::string to_json() const;  // {"epoch":..,"batch":..,"fingerprint":".."}
  static DataPosition from_json(const std::string& text);  // bk::Error on malformed text
  bool operator==(const DataPosition&) const = default;
};

class PretrainDataLoader {
 public:
  explicit PretrainDataLoader(DataLoaderConfig config);
  ~PretrainDataLoader();
  PretrainDataLoader(const PretrainDataLoader&) = delete;
  PretrainDataLoader& operator=(const PretrainDataLoader&) = delete;

  // The next batch of this rank; false at the end of an epoch (the position moves on to the next epoch, and
  // the following call starts it).
  bool next(PretrainBatch& batch);

  DataPosition position() const;
  // Continues from `position` (taken from a loader with the same configuration; bk::Error otherwise).
  void restore(const DataPosition& position);

  int64_t batches_per_epoch() const;    // per rank, in the current epoch (equal on every rank)
  int64_t samples_per_epoch() const;    // used by all ranks together: batches_per_epoch * batch_size * world
  uint64_t total_samples() const;       // in all input files
  size_t files() const;
  bool binned() const;                  // bin4 inputs
  const std::vector<int64_t>& per_batch() const;  // samples per batch from each source (bin)

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One batch from samples (the loader's collation, exposed for bert-eval and tests). bk::Error if a sample has
// more than max_predictions masked positions.
PretrainBatch collate_pretrain_batch(const std::vector<PretrainSample>& samples, int64_t max_predictions,
                                     bool pin_memory = false);

}  // namespace bk
