// Shared by the data loader tests: scratch directories, samples that carry their own id, HDF5 files written
// with our PretrainWriter, and reading batches back into samples.
#pragma once

#include "../scratch_dir.h"
#include "hdf5/hdf5_writer.h"
#include "tasks/pretraining/data_loader.h"

#include <ATen/ATen.h>
// After LibTorch's headers: c10's logging defines a CHECK macro of its own, doctest's must win.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace loader_test {

namespace fs = std::filesystem;

using bk_test::ScratchDir;

// Sample `id` (< 28000): token 1 is 1000 + id, so a batch row tells which sample it is; everything else follows
// from the id too, so a row can be compared with the sample written.
inline bk::PretrainSample make_sample(int id, int length, int predictions) {
  bk::PretrainSample s;
  for (int i = 0; i < length; ++i) {
    s.input_ids.push_back(i == 0 ? 101 : i == 1 ? 1000 + id : i == length - 1 ? 102 : 2000 + (id * 7 + i) % 500);
    s.segment_ids.push_back(i > length / 2 ? 1 : 0);
  }
  for (int j = 0; j < predictions && 2 + 2 * j < length; ++j) {
    s.masked_lm_positions.push_back(2 + 2 * j);
    s.masked_lm_ids.push_back(3000 + (id + j) % 100);
  }
  s.next_sentence_label = id % 2;
  return s;
}

inline int default_length(int id) { return 4 + (id * 37) % 60; }
inline int default_predictions(int id) { return 1 + id % 4; }
inline bk::PretrainSample sample_of(int id) { return make_sample(id, default_length(id), default_predictions(id)); }

// Writes samples ids [first, first + count) to path.
inline void write_ids(const std::string& path, int first, int count, bk::Hdf5Layout layout = bk::Hdf5Layout::nvidia) {
  bk::PretrainWriterOptions options;
  options.layout = layout;
  options.seq_len = 128;
  options.max_predictions = 8;
  options.chunk_rows = 4;
  bk::PretrainWriter writer(path, options);
  for (int id = first; id < first + count; ++id) writer.append(sample_of(id));
  writer.commit();
}

// Files of the given sizes, ids numbered on across them; returns their paths.
inline std::vector<std::string> write_files(const ScratchDir& dir, const std::vector<int>& sizes) {
  std::vector<std::string> paths;
  int next = 0;
  for (size_t f = 0; f < sizes.size(); ++f) {
    paths.push_back(dir / ("part-" + std::to_string(f) + ".hdf5"));
    write_ids(paths.back(), next, sizes[f], f % 2 ? bk::Hdf5Layout::varlength : bk::Hdf5Layout::nvidia);
    next += sizes[f];
  }
  return paths;
}

// Row b of a batch as a sample (the inverse of the collation).
inline bk::PretrainSample row_sample(const bk::PretrainBatch& batch, int64_t b) {
  bk::PretrainSample s;
  auto ids = batch.input_ids[b], segments = batch.segment_ids[b], mask = batch.attention_mask[b];
  auto length = mask.sum().item<int64_t>();
  for (int64_t t = 0; t < length; ++t) {
    s.input_ids.push_back(static_cast<int32_t>(ids[t].item<int64_t>()));
    s.segment_ids.push_back(static_cast<int32_t>(segments[t].item<int64_t>()));
  }
  for (int64_t p = 0; p < batch.masked_lm_positions.size(1); ++p) {
    int64_t id = batch.masked_lm_ids[b][p].item<int64_t>();
    if (id < 0) break;
    s.masked_lm_positions.push_back(static_cast<int32_t>(batch.masked_lm_positions[b][p].item<int64_t>()));
    s.masked_lm_ids.push_back(static_cast<int32_t>(id));
  }
  s.next_sentence_label = static_cast<int32_t>(batch.next_sentence_labels[b].item<int64_t>());
  return s;
}

inline int row_id(const bk::PretrainBatch& batch, int64_t b) {
  return static_cast<int>(batch.input_ids[b][1].item<int64_t>()) - 1000;
}

inline std::vector<int> batch_ids(const bk::PretrainBatch& batch) {
  std::vector<int> ids;
  for (int64_t b = 0; b < batch.size(); ++b) ids.push_back(row_id(batch, b));
  return ids;
}

// The batches of the loader's current epoch, as sample ids (next() is called until it returns false).
inline std::vector<std::vector<int>> epoch_ids(bk::PretrainDataLoader& loader) {
  std::vector<std::vector<int>> batches;
  bk::PretrainBatch batch;
  while (loader.next(batch)) batches.push_back(batch_ids(batch));
  return batches;
}

inline bk::DataLoaderConfig config_for(std::vector<std::string> inputs, int64_t batch_size, int rank = 0,
                                       int world = 1) {
  bk::DataLoaderConfig c;
  c.inputs = bk::resolve_pretrain_inputs(inputs);
  c.batch_size = batch_size;
  c.max_predictions = 8;
  c.seed = 1234;
  c.rank = rank;
  c.world = world;
  return c;
}

// What message a call throws ("" if none).
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace loader_test
