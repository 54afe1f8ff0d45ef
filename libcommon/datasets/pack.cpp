#include "datasets/pack.h"

#include "pretraining_data/masking_kind.h"
#include "io/progress.h"
#include "datasets/shared_vocab_stamp.h"
#include "hdf5/hdf5_reader.h"
#include "hdf5/hdf5_writer.h"
#include "io/output_over_input.h"
#include "io/output.h"
#include "util/error.h"
#include "util/tool_name.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <random>

namespace bk {

namespace {

constexpr size_t kBlockRows = 1024;

// An index in [0, bound) from the generator, without modulo bias and the same on every platform (unlike
// std::uniform_int_distribution, whose algorithm the standard leaves open).
uint64_t bounded(std::mt19937_64& rng, uint64_t bound) {
  const uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
  uint64_t x = rng();
  while (x >= limit) x = rng();
  return x % bound;
}

PretrainSample join(const std::vector<PretrainSample>& samples, const std::vector<uint32_t>& row) {
  PretrainSample packed;
  for (uint32_t index : row) {
    const PretrainSample& s = samples[index];
    const auto offset = static_cast<int32_t>(packed.input_ids.size());
    packed.input_ids.insert(packed.input_ids.end(), s.input_ids.begin(), s.input_ids.end());
    packed.segment_ids.insert(packed.segment_ids.end(), s.segment_ids.begin(), s.segment_ids.end());
    for (int32_t p : s.masked_lm_positions) packed.masked_lm_positions.push_back(p + offset);
    packed.masked_lm_ids.insert(packed.masked_lm_ids.end(), s.masked_lm_ids.begin(), s.masked_lm_ids.end());
    packed.pack_lengths.push_back(static_cast<int32_t>(s.length()));
    packed.pack_labels.push_back(s.next_sentence_label);
    if (s.sample_id >= 0) packed.pack_sample_ids.push_back(s.sample_id);
  }
  packed.next_sentence_label = packed.pack_labels.front();
  return packed;
}

}  // namespace

void PackConfig::validate() const {
  if (seq_len && (*seq_len < 2 || *seq_len > 1 << 20)) usage_fail("--max-seq-length must be in [2, 1048576], got {}", *seq_len);
  if (max_sequences < 1 || max_sequences > 127) usage_fail("--max-sequences must be in [1, 127], got {}", max_sequences);
  if (max_predictions && *max_predictions < 1) usage_fail("--max-predictions must be positive, got {}", *max_predictions);
  if (gzip_level < 0 || gzip_level > 9) usage_fail("--gzip must be in [0, 9], got {}", gzip_level);
  if (output.empty()) usage_fail("-o OUTPUT.hdf5 is required");
  refuse_stdout_output(output, "HDF5 output", kHdf5NeedsFile, "packed/part-00000.hdf5");
  if (inputs.empty()) usage_fail("no input files");
  refuse_output_over_inputs("-o", output, OutputKind::file, inputs);
}

std::vector<std::vector<uint32_t>> plan_packs(const std::vector<PackItem>& items, int seq_len, int max_sequences,
                                              int max_predictions) {
  std::vector<uint32_t> order(items.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return items[a].length > items[b].length; });
  std::vector<std::vector<uint32_t>> rows;
  std::vector<int> free_tokens, free_predictions;
  // open[f]: rows with f tokens free that can still take a sample; the most recently opened at the back.
  std::vector<std::vector<uint32_t>> open(static_cast<size_t>(seq_len) + 1);
  for (uint32_t index : order) {
    const PackItem& item = items[index];
    if (item.length > seq_len || item.predictions > max_predictions)
      fail("sample {} ({} tokens, {} predictions) does not fit a row of {} tokens and {} predictions", index,
           item.length, item.predictions, seq_len, max_predictions);
    int64_t chosen = -1;
    for (int f = item.length; f <= seq_len && chosen < 0; ++f) {
      auto& candidates = open[static_cast<size_t>(f)];
      for (size_t k = candidates.size(); k-- > 0;) {
        if (free_predictions[candidates[k]] < item.predictions) continue;
        chosen = candidates[k];
        candidates.erase(candidates.begin() + static_cast<ptrdiff_t>(k));
        break;
      }
    }
    if (chosen < 0) {
      chosen = static_cast<int64_t>(rows.size());
      rows.emplace_back();
      free_tokens.push_back(seq_len);
      free_predictions.push_back(max_predictions);
    }
    const auto row = static_cast<size_t>(chosen);
    rows[row].push_back(index);
    free_tokens[row] -= item.length;
    free_predictions[row] -= item.predictions;
    // A sample has at least [CLS] and [SEP]: a row with fewer than 2 tokens free is full.
    if (static_cast<int>(rows[row].size()) < max_sequences && free_tokens[row] >= 2)
      open[static_cast<size_t>(free_tokens[row])].push_back(static_cast<uint32_t>(row));
  }
  // Within a row, samples in input order (the plan put the longest first).
  for (auto& row : rows) std::sort(row.begin(), row.end());
  return rows;
}

PackResult run_pack(const PackConfig& config) {
  config.validate();
  std::vector<PretrainSample> samples;
  int input_seq_len = 0, most_predictions = 0;
  MaskingKinds kinds;  // the inputs' kind: all masked, or all unmasked with their sample ids
  SharedVocabStamp vocab;  // the inputs' vocabulary, passed on to the output
  Progress progress(config.quiet);
  uint64_t input_bytes = 0;
  for (const auto& path : config.inputs) {
    std::error_code ec;
    input_bytes += std::filesystem::file_size(path, ec);
    if (ec) input_bytes = 0;
  }
  progress.stage("reading", input_bytes);
  uint64_t bytes_done = 0;
  std::vector<PretrainSample> block;
  for (const auto& path : config.inputs) {
    PretrainReader reader(path);
    if (reader.layout() == Hdf5Layout::packed) fail("{}: already packed (it has next_sentence_positions)", path);
    kinds.add(path, reader.masked());
    if (!kinds.masked() && config.max_predictions)
      usage_fail("--max-predictions: {} is unmasked (mkpretrain --masking none); bert-train's --max-predictions "
                 "bounds the masks it draws", path);
    vocab.add(reader);
    input_seq_len = std::max(input_seq_len, reader.seq_len());
    std::error_code ec;
    const uint64_t bytes = std::filesystem::file_size(path, ec);
    while (reader.read_block(block, kBlockRows)) {
      for (auto& sample : block) {
        most_predictions = std::max(most_predictions, static_cast<int>(sample.masked_lm_positions.size()));
        samples.push_back(std::move(sample));
      }
      if (progress.wants_update())
        progress.update(bytes_done + (ec ? 0 : bytes) * reader.next_row() / std::max<uint64_t>(1, reader.rows()),
                        fmt::format("{} samples", samples.size()));
    }
    bytes_done += ec ? 0 : bytes;
  }
  if (samples.size() > UINT32_MAX) fail("{} samples: pack takes at most {} per run", samples.size(), UINT32_MAX);

  PackResult result;
  result.seq_len = config.seq_len.value_or(input_seq_len > 0 ? input_seq_len : 512);
  // Each sample brings at most its own predictions; 15% of a row's tokens rounded per sample adds at most one per
  // extra sample (MLPerf's packed data: 76 + 3 slots for rows of 3).
  result.max_predictions = config.max_predictions.value_or(std::max(1, most_predictions + config.max_sequences - 1));
  std::vector<PackItem> items(samples.size());
  for (size_t i = 0; i < samples.size(); ++i) {
    items[i] = {static_cast<int>(samples[i].length()), static_cast<int>(samples[i].masked_lm_positions.size())};
    result.tokens += samples[i].length();
  }
  std::vector<std::vector<uint32_t>> rows;
  try {
    rows = plan_packs(items, result.seq_len, config.max_sequences, result.max_predictions);
  } catch (const Error& e) {
    fail("{}: {}; raise --max-seq-length{}", fmt::join(config.inputs, ", "), e.what(),
         kinds.masked() ? " or --max-predictions" : "");
  }
  std::mt19937_64 rng(config.seed);
  for (size_t i = rows.size(); i > 1; --i) std::swap(rows[i - 1], rows[bounded(rng, i)]);

  PretrainWriterOptions w;
  w.layout = Hdf5Layout::packed;
  w.seq_len = result.seq_len;
  w.max_predictions = result.max_predictions;
  w.max_sequences = config.max_sequences;
  w.gzip_level = config.gzip_level;
  w.chunk_rows = std::max<size_t>(64, 65536 / static_cast<size_t>(result.seq_len));
  w.overwrite = config.force;
  w.masked = kinds.masked();
  w.vocab_stamp = vocab.text();
  if (const std::string note = vocab.unstamped_note(); !note.empty() && !config.quiet) print_warning(note);
  PretrainWriter writer(config.output, w);
  progress.stage("writing", rows.size(), "rows");
  for (size_t r = 0; r < rows.size(); ++r) {
    writer.append(join(samples, rows[r]));
    if (progress.wants_update()) progress.update(r + 1);
  }
  writer.commit();

  result.samples = samples.size();
  result.rows = rows.size();
  const double width = result.seq_len;
  if (result.samples > 0) result.real_fraction_before = static_cast<double>(result.tokens) / (width * static_cast<double>(result.samples));
  if (result.rows > 0) result.real_fraction_after = static_cast<double>(result.tokens) / (width * static_cast<double>(result.rows));
  progress.finish(bytes_done, fmt::format("{} samples -> {} rows of {} tokens ({:.2f} samples per row); real tokens "
                                          "{:.1f}% unpacked, {:.1f}% packed",
                                          result.samples, result.rows, result.seq_len,
                                          result.rows ? static_cast<double>(result.samples) / static_cast<double>(result.rows) : 0.0,
                                          100 * result.real_fraction_before, 100 * result.real_fraction_after));
  return result;
}

}  // namespace bk
