// pack: several pretraining samples per fixed-width row, so that a trainer computes on real tokens instead of
// padding (Graphcore's packed BERT, arXiv 2107.02027; MLPerf's packed data). The rows are written in the packed
// HDF5 layout (hdf5/hdf5_sample.h), which bert-train reads with attention kept inside each sample.
//
// The plan: best-fit decreasing over the samples' lengths. Samples are taken longest first (ties in input order);
// each goes into the open row whose free space is the smallest that still holds it (and whose prediction slots
// and sample slots still have room), or opens a new row. Open rows are kept in a histogram by free space, so a
// sample costs at most L probes: O(N * L) for N samples of at most L tokens. Like SPFHP (the paper's
// shortest-pack-first histogram packing) it works from the length histogram's long end, but it places samples one
// by one, so it never leaves a row open that a later sample could have filled. Every sample lands in exactly one
// row; the rows are then written in an order shuffled by --seed (the plan itself puts long samples first).
//
// Memory: the input samples (about 9 bytes per token plus ~120 per sample) while the output is written; pack works
// on one shard at a time, so it grows with a shard, not with the dataset.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace bk {

struct PackConfig {
  std::optional<int> seq_len;          // L, the row width; none: the inputs' (NVIDIA layout) or 512
  int max_sequences = 3;               // S: samples per row at most (NVIDIA's MLPerf packing uses 3)
  std::optional<int> max_predictions;  // P of a row; none: the inputs' largest per sample, plus S - 1
  uint64_t seed = 12345;               // the order of the rows in the output
  int gzip_level = 0;
  bool force = false;
  bool quiet = false;
  std::string output;
  std::vector<std::string> inputs;

  void validate() const;  // bk::UsageError naming the flag
};

// One sample's share of a row: its length and its prediction count.
struct PackItem {
  int length = 0;
  int predictions = 0;
};

// The plan: rows of sample indices (into items), each row's lengths summing to at most seq_len, its predictions to
// at most max_predictions, at most max_sequences samples; every index exactly once. bk::Error if one sample alone
// does not fit a row.
std::vector<std::vector<uint32_t>> plan_packs(const std::vector<PackItem>& items, int seq_len, int max_sequences,
                                              int max_predictions);

struct PackResult {
  uint64_t samples = 0, rows = 0, tokens = 0;
  int seq_len = 0, max_predictions = 0;
  double real_fraction_before = 0;  // tokens / (samples * L): one sample per row of width L
  double real_fraction_after = 0;   // tokens / (rows * L)
};

PackResult run_pack(const PackConfig& config);

}  // namespace bk
