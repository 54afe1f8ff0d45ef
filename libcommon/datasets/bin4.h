// bin4: split pretraining samples into length bins (Samsung's "bin4" scheme), one directory per bin.
//
// A sample of n real tokens (n = sum(input_mask)) goes to the first bin whose bound b satisfies n <= b, so with
// the default bounds 128,256,384,512 the bins hold [1,128], [129,256], [257,384], [385,512]. Within a bin,
// samples are dealt round-robin to K shards in input order (deterministic): DIR/<b>/part-00000-of-0000K.hdf5.
// Every shard file exists, even when empty. DIR/bin4.json, written last, records the counts; its presence
// means the run finished.
//
// Memory: bins x K writers, each buffering one HDF5 chunk (about 64k token slots, ~0.4 MB in the NVIDIA layout),
// up to 5 blocks of 1024 input rows (one being dealt, 4 read ahead), and with deflate the compressor's window of chunks in flight (ChunkCompressor:
// 64 chunks, a few MB); it does not grow with the input.
//
// Threads: the output's deflate (the NVIDIA layout's default level 4 is most of bin4's CPU time) runs on --threads
// workers; the inputs are read on a thread of their own, up to 4 blocks ahead; dealing, appending and the writers'
// HDF5 calls stay on the calling thread.
#pragma once

#include "hdf5/hdf5_sample.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace bk {

struct Bin4Config {
  std::vector<int> bins = {128, 256, 384, 512};  // strictly increasing upper bounds
  int shards_per_bin = 1;
  bool trim = false;                  // NVIDIA output: each bin's rows are as wide as its bound
  std::string layout;                 // output layout, nvidia or varlength; "": the first input's
  std::optional<int> gzip_level;      // 0-9; none: the layout's usual (NVIDIA 4, as its h5py writer; varlength 0)
  std::optional<int> max_predictions; // P of NVIDIA output; none: the NVIDIA inputs' largest P
  bool drop_long = false;             // skip samples longer than the last bound instead of failing
  int threads = 1;                    // deflate workers (0 = all cores); the files are the same for any number
  bool force = false;                 // replace an existing DIR holding an earlier bin4 output
  bool quiet = false;
  std::string output_dir;
  std::vector<std::string> inputs;

  // bk::UsageError naming the flag for a value no run can use.
  void validate() const;
};

struct Bin4Result {
  std::vector<uint64_t> per_bin;  // samples written to each bin
  uint64_t samples = 0;           // samples read
  uint64_t dropped = 0;           // samples longer than the last bound (with drop_long)
  double reading_cpu_seconds = 0; // CPU time of the thread that read the inputs (bench/pipeline.sh's projection)
};

// Index of the bin for a sample of `length` tokens, or -1 if it is longer than the last bound.
int bin_index(const std::vector<int>& bounds, size_t length);

// "part-00003-of-00016.hdf5"
std::string shard_file_name(int shard, int shards);

// --bins as text: "128,256,384,512" <-> {128, 256, 384, 512}. parse_bins throws UsageError (naming --bins) for an
// item that is not an integer; whether the bounds can be used is validate()'s to say.
std::vector<int> parse_bins(const std::string& text);
std::string format_bins(const std::vector<int>& bins);

// Validates the config, then writes the bins; throws bk::Error naming the file and row of a sample that does not fit.
Bin4Result run_bin4(const Bin4Config& config);

}  // namespace bk
