// The pretraining data loader of bert-train: HDF5 samples in, PretrainBatch (batch.h) out.
//
// Inputs: resolved by inputs.h (files, directories, bin4 directories); the loader opens each file again only to
// read its slice of an epoch.
//
// Order: per epoch, from the seed, the files of each source are shuffled and dealt to the ranks, and the
// samples are shuffled within each file (see sampler.h). Batches of batch_size samples are cut from the rank's
// stream; with bin4 inputs each batch takes a fixed number of samples from every bin (bin_ratio, default 6:3:2:5,
// scaled to batch_size as scale_bin_ratio() says), so every batch mixes lengths the same way. Every rank yields
// the same number of batches per epoch (the leftover samples of the epoch are not used), so collectives stay in
// step.
//
// Batches: T = the longest sample in the batch (dynamic truncation), masked_lm_positions padded with 0 and
// masked_lm_ids with -1 to max_predictions (a sample with more predictions is an error naming file and row).
//
// Memory: one file's share per source (one file, or four with bin4) plus `prefetch` batches built ahead by a
// background thread (util/prefetcher.h). An error in that thread is raised by next() with its original message.
//
// Resume: position() is (epoch, batches consumed in it); restore() on a loader with the same configuration
// continues with exactly the batch an uninterrupted run would have produced next.
#pragma once

#include "tasks/pretraining/batch.h"
#include "tasks/pretraining/inputs.h"
#include "train/feed/data_position.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace bk {

struct DynamicMasking;

struct DataLoaderConfig {
  PretrainInputs inputs;        // resolve_pretrain_inputs' value
  int64_t batch_size = 0;       // samples per batch, per rank and micro-step
  int64_t max_predictions = 0;  // P of the batches; 0: the widest masked_lm_positions of the inputs
  int64_t max_positions = 0;    // the model's longest sequence: P's bound for varlength inputs (0: none)
  uint64_t seed = 0;
  int rank = 0, world = 1;
  int prefetch = 4;             // batches built ahead by a background thread; 0 builds them inside next()
  std::vector<int> bin_ratio;   // bin4 inputs only: parts per bin; empty = 6:3:2:5 (four bins)
  bool pin_memory = false;      // page-locked batches for fast copies to a CUDA device
  bool unpadded = false;        // batches with their token stream (batch.h), for unpadded attention
  bool full_length = false;     // every batch as long as the inputs' longest sequence, not its own (one shape)
  // Every rank reads the whole stream a single process would read and keeps its slice of each global batch of
  // world * batch_size samples, so N ranks see exactly the batches of one rank with N times the batch size (for
  // checking data parallelism; it costs world times the reading).
  bool global_order = false;
  // Unmasked inputs (mkpretrain --masking none): each sample's masks drawn as it is read, from (seed, epoch,
  // sample_id) (pretraining_data/dynamic_masks.h); null when the inputs hold their masks.
  std::shared_ptr<const DynamicMasking> masking;
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
  int64_t max_predictions() const;      // P of the batches (given, or from the inputs)
  int64_t max_length() const;           // the longest row the inputs can hold (0: varlength, not known)
  const std::vector<int64_t>& per_batch() const;  // samples per batch from each source (bin)
  const std::vector<int>& bin_bounds() const;     // bin4 inputs: each bin's longest sample, in per_batch's order

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace bk
