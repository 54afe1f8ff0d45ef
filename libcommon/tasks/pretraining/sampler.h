// Which pretraining samples each rank reads in an epoch, and in which order (torch-free; the loader in
// data_loader.h builds batches from it).
//
// A "source" is a list of HDF5 files read as one stream: all input files, or with bin4 directories the files of
// one length bin. Per epoch and source, every rank derives the same file order from (seed, epoch, source) and
// takes its share of it:
//   - the first F - F mod W files of the shuffled order are dealt round-robin: rank r reads files r, r+W, ...
//     whole (NVIDIA's scheme: each rank reads its own files, no two ranks touch the same rows);
//   - the last F mod W files (all of them when there are fewer files than ranks) are shared: their rows, counted
//     across those files, are strided over the ranks, rank r taking rows r, r+W, ... so each rank gets its
//     share to within one row.
// A rank's share is read one slice (the part of one file it reads) at a time; the slice's samples are shuffled
// from (seed, epoch, source, file) before they are handed out. Memory is one slice per source, never the whole
// data set. Everything is derived from the seed with bk::PyRandom, so the order is the same on every machine.
#pragma once

#include "hdf5/hdf5_sample.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace bk {

class PyRandom;
class PretrainReader;
struct DynamicMasking;
struct MaskingRule;

struct SampleFile {
  std::string path;
  uint64_t rows = 0;
  int seq_len = 0;          // the NVIDIA and packed layouts' row width; 0 for varlength
  int max_predictions = 0;  // their masked_lm_positions width; 0 for varlength
  bool masked = true;       // false: unmasked instances (mkpretrain --masking none), masked as they are read
  int max_sequences = 1;    // S, the samples a row may hold: the packed layout's; 1 for the others
};

// The rows of one file that one rank reads in an epoch: first, first + step, ... (count of them).
struct FileSlice {
  size_t file = 0;  // index into the source's files
  uint64_t first = 0, step = 1, count = 0;
  bool operator==(const FileSlice&) const = default;
};

// The shuffled file order of a source in an epoch: a permutation of 0..files-1, the same on every rank.
std::vector<size_t> epoch_file_order(size_t files, uint64_t seed, int64_t epoch, int source);

// The slices `rank` of `world` reads from a source in an epoch, in reading order (see the header comment).
std::vector<FileSlice> epoch_slices(const std::vector<SampleFile>& files, uint64_t seed, int64_t epoch, int source,
                                    int rank, int world);

uint64_t slice_samples(const std::vector<FileSlice>& slices);

// Samples per batch taken from each bin: the ratio scaled to batch_size by largest remainder (each bin gets
// floor(batch_size * r / sum); the rows left go one each to the bins with the largest fractional parts, the
// lower bin first on ties). A ratio that sums to batch_size is used as it is. Throws bk::Error on a negative
// part or an all-zero ratio.
std::vector<int64_t> scale_bin_ratio(const std::vector<int>& ratio, int64_t batch_size);

// Batches every rank can build in an epoch: the smallest, over ranks and over sources with a non-zero count, of
// (samples of that rank in that source) / (samples a batch takes from the source). Equal on every rank, so
// collectives stay in step; what is left over is not used in that epoch.
int64_t epoch_batch_count(const std::vector<std::vector<SampleFile>>& sources, const std::vector<int64_t>& per_batch,
                          uint64_t seed, int64_t epoch, int world);

// The samples of one source that one rank reads in one epoch, in order.
class SampleStream {
 public:
  // max_predictions: a sample with more masked positions is an error naming the file and row.
  // masking: draws the masks of unmasked files' samples, from (seed, epoch, sample_id) (dynamic_masks.h); null
  // only when every file holds its masks (the loader checks).
  // cancel: when it becomes true, next() returns false at the next block boundary (for a quick shutdown).
  SampleStream(const std::vector<SampleFile>& files, std::vector<FileSlice> slices, uint64_t seed, int64_t epoch,
               int source, int64_t max_predictions, const DynamicMasking* masking = nullptr,
               const std::atomic<bool>* cancel = nullptr);
  ~SampleStream();

  // Drops the next n samples; whole slices are skipped without reading them.
  void skip(uint64_t n);
  // The next sample; false when the rank's share is used up (or on cancel). An unmasked file's sample gets its
  // masks here, by `rule` (the batch's, under a masking-rate schedule), else by masking's own.
  bool next(PretrainSample& sample, const MaskingRule* rule = nullptr);

 private:
  bool load_next_slice();
  void draw_masks_of(PretrainSample& sample, uint64_t row, const MaskingRule& rule) const;

  const std::vector<SampleFile>& files_;
  std::vector<FileSlice> slices_;
  uint64_t seed_;
  int64_t epoch_;
  int source_;
  int64_t max_predictions_;
  const DynamicMasking* masking_;
  const std::atomic<bool>* cancel_;
  size_t next_slice_ = 0;
  size_t slice_file_ = 0;  // the file of the slice in the buffer
  uint64_t pending_skip_ = 0;  // samples to drop from the next slice loaded
  struct Buffered {
    PretrainSample sample;
    uint64_t row = 0;  // in its file, for errors
  };
  std::vector<Buffered> buffer_;
  size_t buffer_pos_ = 0;
};

}  // namespace bk
