#include "tasks/pretraining/sampler.h"

#include "util/error.h"
#include "hdf5/hdf5_reader.h"
#include "pretraining_data/dynamic_masks.h"
#include "util/py_random.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <numeric>

namespace bk {

namespace {

// Tags that keep the random streams of the file order and of the sample order apart.
constexpr uint32_t kFileOrderTag = 0x46494c45;   // "FILE"
constexpr uint32_t kSampleOrderTag = 0x53414d50;  // "SAMP"

// One generator per (seed, epoch, purpose...): MT19937 seeded by init_by_array over all the words, so
// neighbouring seeds and epochs give unrelated streams.
PyRandom keyed_random(uint64_t seed, int64_t epoch, std::initializer_list<uint32_t> more) {
  auto e = static_cast<uint64_t>(epoch);
  std::vector<uint32_t> key = {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32),
                               static_cast<uint32_t>(e), static_cast<uint32_t>(e >> 32)};
  key.insert(key.end(), more.begin(), more.end());
  PyRandom rng;
  rng.seed_words(key);
  return rng;
}

}  // namespace

std::vector<size_t> epoch_file_order(size_t files, uint64_t seed, int64_t epoch, int source) {
  std::vector<size_t> order(files);
  std::iota(order.begin(), order.end(), size_t{0});
  PyRandom rng = keyed_random(seed, epoch, {kFileOrderTag, static_cast<uint32_t>(source)});
  rng.shuffle(order);
  return order;
}

std::vector<FileSlice> epoch_slices(const std::vector<SampleFile>& files, uint64_t seed, int64_t epoch, int source,
                                    int rank, int world) {
  if (world < 1 || rank < 0 || rank >= world) fail("rank {} is not in [0, {})", rank, world);
  std::vector<size_t> order = epoch_file_order(files.size(), seed, epoch, source);
  auto W = static_cast<uint64_t>(world);
  size_t whole = order.size() - order.size() % W;
  std::vector<FileSlice> slices;
  for (size_t i = static_cast<size_t>(rank); i < whole; i += W) {
    size_t f = order[i];
    if (files[f].rows > 0) slices.push_back({f, 0, 1, files[f].rows});
  }
  // The shared tail: rows numbered across the tail files, rank r takes those numbered r mod W.
  uint64_t offset = 0;
  for (size_t i = whole; i < order.size(); ++i) {
    size_t f = order[i];
    uint64_t rows = files[f].rows;
    uint64_t first = (static_cast<uint64_t>(rank) + W - offset % W) % W;
    if (rows > first) slices.push_back({f, first, W, (rows - first + W - 1) / W});
    offset += rows;
  }
  return slices;
}

uint64_t slice_samples(const std::vector<FileSlice>& slices) {
  uint64_t n = 0;
  for (const auto& s : slices) n += s.count;
  return n;
}

std::vector<int64_t> scale_bin_ratio(const std::vector<int>& ratio, int64_t batch_size) {
  if (batch_size < 1) fail("batch size must be positive, not {}", batch_size);
  int64_t sum = 0;
  for (int r : ratio) {
    if (r < 0) fail("bin ratio {}: parts must not be negative", fmt::join(ratio, ":"));
    sum += r;
  }
  if (sum == 0) fail("bin ratio {}: needs a positive part", fmt::join(ratio, ":"));
  std::vector<int64_t> counts(ratio.size());
  std::vector<int64_t> remainder(ratio.size());
  int64_t assigned = 0;
  for (size_t b = 0; b < ratio.size(); ++b) {
    counts[b] = batch_size * ratio[b] / sum;
    remainder[b] = batch_size * ratio[b] % sum;
    assigned += counts[b];
  }
  std::vector<size_t> by_remainder(ratio.size());
  std::iota(by_remainder.begin(), by_remainder.end(), size_t{0});
  std::stable_sort(by_remainder.begin(), by_remainder.end(),
                   [&](size_t a, size_t b) { return remainder[a] > remainder[b]; });
  for (size_t i = 0; assigned < batch_size; ++i, ++assigned) ++counts[by_remainder[i]];
  return counts;
}

int64_t epoch_batch_count(const std::vector<std::vector<SampleFile>>& sources, const std::vector<int64_t>& per_batch,
                          uint64_t seed, int64_t epoch, int world) {
  int64_t batches = std::numeric_limits<int64_t>::max();
  for (size_t s = 0; s < sources.size(); ++s) {
    if (per_batch[s] == 0) continue;
    for (int r = 0; r < world; ++r) {
      uint64_t n = slice_samples(epoch_slices(sources[s], seed, epoch, static_cast<int>(s), r, world));
      batches = std::min(batches, static_cast<int64_t>(n / static_cast<uint64_t>(per_batch[s])));
    }
  }
  return batches == std::numeric_limits<int64_t>::max() ? 0 : batches;
}

SampleStream::SampleStream(const std::vector<SampleFile>& files, std::vector<FileSlice> slices, uint64_t seed,
                           int64_t epoch, int source, int64_t max_predictions, const DynamicMasking* masking,
                           const std::atomic<bool>* cancel)
    : files_(files),
      slices_(std::move(slices)),
      seed_(seed),
      epoch_(epoch),
      source_(source),
      max_predictions_(max_predictions),
      masking_(masking),
      cancel_(cancel) {}

SampleStream::~SampleStream() = default;

void SampleStream::skip(uint64_t n) {
  uint64_t now = std::min<uint64_t>(n, buffer_.size() - buffer_pos_);
  buffer_pos_ += now;
  pending_skip_ += n - now;
}

void SampleStream::draw_masks_of(PretrainSample& sample, uint64_t row, const MaskingRule& rule) const {
  const std::string& path = files_[slice_file_].path;
  if (mask_sample(sample, rule, masking_->vocab, seed_, static_cast<uint32_t>(epoch_)) == 0)
    fail("{}: row {}: no token to mask (the sample holds only [CLS] and [SEP])", path, row);
  if (static_cast<int64_t>(sample.masked_lm_positions.size()) > max_predictions_)
    fail("{}: row {}: {} masked positions, more than the {} max predictions", path, row,
         sample.masked_lm_positions.size(), max_predictions_);
}

bool SampleStream::load_next_slice() {
  buffer_.clear();
  buffer_pos_ = 0;
  // Whole slices that fall inside a skip are never read.
  while (next_slice_ < slices_.size() && slices_[next_slice_].count <= pending_skip_)
    pending_skip_ -= slices_[next_slice_++].count;
  if (next_slice_ >= slices_.size()) return false;
  const FileSlice& slice = slices_[next_slice_++];
  const SampleFile& file = files_[slice.file];
  slice_file_ = slice.file;
  PretrainReader reader(file.path);
  if (reader.rows() != file.rows)
    fail("{}: now holds {} samples, not the {} it held when training started", file.path, reader.rows(), file.rows);
  buffer_.reserve(slice.count);
  std::vector<PretrainSample> block;
  uint64_t row = 0;
  while (reader.read_block(block)) {
    if (cancel_ && cancel_->load()) return false;
    for (auto& sample : block) {
      if (row >= slice.first && (row - slice.first) % slice.step == 0) {
        // An unmasked sample's masks are drawn as it is taken (next()), by the rule of the batch it goes to.
        if (file.masked && sample.masked_lm_positions.empty())  // it would train at mlm_loss 0
          fail("{}: row {}: no masked-LM prediction (masked_lm_positions all 0); masked data holds at least one per "
               "row (mkpretrain), unmasked data (--masking none) holds sample_ids and no masked_lm_* columns",
               file.path, row);
        if (file.masked && static_cast<int64_t>(sample.masked_lm_positions.size()) > max_predictions_)
          fail("{}: row {}: {} masked positions, more than the {} max predictions", file.path, row,
               sample.masked_lm_positions.size(), max_predictions_);
        buffer_.push_back({std::move(sample), row});
      }
      ++row;
    }
  }
  PyRandom rng = keyed_random(seed_, epoch_, {kSampleOrderTag, static_cast<uint32_t>(source_),
                                              static_cast<uint32_t>(slice.file), static_cast<uint32_t>(slice.first)});
  rng.shuffle(buffer_);
  buffer_pos_ = std::min<size_t>(pending_skip_, buffer_.size());
  pending_skip_ -= buffer_pos_;
  return true;
}

bool SampleStream::next(PretrainSample& sample, const MaskingRule* rule) {
  while (buffer_pos_ >= buffer_.size()) {
    if (cancel_ && cancel_->load()) return false;
    if (!load_next_slice()) return false;
  }
  Buffered& taken = buffer_[buffer_pos_++];
  sample = std::move(taken.sample);
  if (!files_[slice_file_].masked) draw_masks_of(sample, taken.row, rule ? *rule : masking_->rule);
  return true;
}

}  // namespace bk
