#include "datasets/bin4.h"

#include "pretraining_data/masking_kind.h"
#include "bertkit/version.h"
#include "io/output_over_input.h"
#include "util/error.h"
#include "util/tool_name.h"
#include "io/progress.h"
#include "io/cleanup.h"
#include "datasets/shared_vocab_stamp.h"
#include "hdf5/hdf5_reader.h"
#include "hdf5/hdf5_writer.h"
#include "io/created_dirs.h"
#include "io/durable.h"
#include "io/output.h"
#include "io/staged_output.h"
#include "util/prefetcher.h"
#include "util/cpu_time.h"
#include "util/ordered_parallel.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <memory>
#include <set>
#include <sys/resource.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace bk {

namespace {

constexpr const char* kMarkerName = "bin4.json";
constexpr size_t kBlockRows = 1024;
constexpr size_t kBlocksAhead = 4;
// The NVIDIA layout as NVIDIA's files are written: deflate level 4 (--gzip overrides it), chunks of about 64k tokens.
constexpr int kNvidiaGzipLevel = 4;
constexpr size_t kNvidiaChunkTokens = 65536;
constexpr size_t kVarlengthChunkRows = 1024;

// A block of one input's samples, as the reading thread hands it over.
struct InputBlock {
  size_t input = 0;         // index into the inputs
  uint64_t next_row = 0;    // the input's row after the block's last
  std::vector<PretrainSample> samples;
};

struct InputInfo {
  std::string path;
  Hdf5Layout layout;
  uint64_t rows, bytes;
  int seq_len, max_predictions;
};

// What bin4 writes in its output directory: the marker, and a directory per bin holding only its shards.
constexpr const char* kBin4OutputDescription = "an earlier bin4 output (bin4.json and its bins' shards)";

bool is_bin4_output(const fs::directory_entry& entry) {
  std::error_code ec;
  const std::string name = entry.path().filename().string();
  if (name == kMarkerName) return entry.is_regular_file(ec);
  if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos || !entry.is_directory(ec))
    return false;
  for (const auto& shard : fs::directory_iterator(entry.path(), ec)) {
    const std::string file = shard.path().filename().string();
    if (!shard.is_regular_file(ec) || file.rfind("part-", 0) != 0 || shard.path().extension() != ".hdf5") return false;
  }
  return !ec;
}

// The output directory is built under a hidden name beside it and put in place whole when the run succeeds. An
// existing empty directory is replaced; a non-empty one only under --force, and only when it holds nothing but an
// earlier bin4 output (old shards mixed with new ones would be a dataset no run can use).
bool replaces_existing_output(const Bin4Config& o) {
  recover_killed_commit(o.output_dir);
  std::error_code ec;
  if (!fs::exists(o.output_dir, ec)) return false;
  if (!fs::is_directory(o.output_dir, ec)) fail("{}: exists and is not a directory", o.output_dir);
  if (fs::is_empty(o.output_dir, ec)) return true;
  if (!o.force) fail("{}: output directory exists and is not empty; use --force to replace it", o.output_dir);
  refuse_foreign_entries(o.output_dir, is_bin4_output, kBin4OutputDescription);
  return true;
}

// The most shard files one run can write: all of them are open at once, each holding a file descriptor and a
// slot in the signal-safe cleanup table (cli/run_tool.h), beside the directories and the marker's temporary.
int max_shard_files(int directories) {
  int limit = kMaxCleanupPaths - directories - 1;
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY)
    limit = static_cast<int>(std::min<rlim_t>(static_cast<rlim_t>(limit), files.rlim_cur > 16 ? files.rlim_cur - 16 : 0));
  return limit;
}

std::string bin_summary(const std::vector<int>& bins, const std::vector<uint64_t>& counts) {
  std::string text;
  for (size_t i = 0; i < bins.size(); ++i) text += fmt::format("{}{}: {}", i ? ", " : "", bins[i], counts[i]);
  return text;
}

}  // namespace

int bin_index(const std::vector<int>& bounds, size_t length) {
  auto it = std::lower_bound(bounds.begin(), bounds.end(), static_cast<int64_t>(length),
                             [](int bound, int64_t n) { return bound < n; });
  return it == bounds.end() ? -1 : static_cast<int>(it - bounds.begin());
}

std::string shard_file_name(int shard, int shards) { return fmt::format("part-{:05}-of-{:05}.hdf5", shard, shards); }

std::vector<int> parse_bins(const std::string& text) {
  std::vector<int> bins;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = std::min(text.find(',', start), text.size());
    int value = 0;
    auto [end, ec] = std::from_chars(text.data() + start, text.data() + comma, value);
    if (ec != std::errc() || end != text.data() + comma)
      usage_fail("--bins: '{}' is not a positive integer", text.substr(start, comma - start));
    bins.push_back(value);
    start = comma + 1;
  }
  return bins;
}

std::string format_bins(const std::vector<int>& bins) { return fmt::format("{}", fmt::join(bins, ",")); }

void Bin4Config::validate() const {
  if (bins.empty()) usage_fail("--bins: at least one bound is needed");
  for (size_t i = 0; i < bins.size(); ++i) {
    if (bins[i] < 1) usage_fail("--bins: '{}' is not a positive integer", bins[i]);
    if (i > 0 && bins[i] <= bins[i - 1])
      usage_fail("--bins: bounds must increase, but {} follows {}", bins[i], bins[i - 1]);
  }
  Hdf5Layout parsed;
  if (!layout.empty() && !parse_layout(layout, parsed))
    usage_fail("--layout must be nvidia or varlength, got '{}'", layout);
  if (gzip_level && (*gzip_level < 0 || *gzip_level > 9)) usage_fail("--gzip must be in [0, 9], got {}", *gzip_level);
  if (max_predictions && *max_predictions <= 0)
    usage_fail("--max-predictions must be positive, got {}", *max_predictions);
  if (shards_per_bin < 1) usage_fail("--shards-per-bin must be positive, got {}", shards_per_bin);
  if (threads < 0) usage_fail("--threads must be 0 (all cores) or positive, got {}", threads);
  if (inputs.empty()) usage_fail("no input files");
  refuse_stdout_output(output_dir, "the output", "it is a directory of HDF5 files", "bins");
  refuse_output_over_inputs("-o", output_dir, OutputKind::directory, inputs);
}

namespace {

// What the inputs decide before anything is written: every input opened once (a missing or malformed file fails
// first), the output's layout, its width (the NVIDIA inputs' widest) and its predictions per row.
struct Bin4Plan {
  std::vector<InputInfo> inputs;
  Hdf5Layout layout = Hdf5Layout::nvidia;
  int widest_input = 0;
  int max_predictions = 0;
  uint64_t input_bytes = 0;
  SharedVocabStamp vocab;  // the inputs' vocabulary, passed on to every shard
  bool masked = true;      // false: unmasked instances (mkpretrain --masking none), binned with their sample_ids
};

Bin4Plan plan_bin4(const Bin4Config& o) {
  Bin4Plan plan;
  MaskingKinds kinds;
  for (const auto& path : o.inputs) {
    PretrainReader reader(path);
    if (reader.layout() == Hdf5Layout::packed) fail("{}: packed rows (pack(1)) cannot be binned by length", path);
    plan.vocab.add(reader);
    kinds.add(path, reader.masked());
    plan.masked = kinds.masked();
    std::error_code ec;
    const uint64_t bytes = fs::file_size(path, ec);
    plan.inputs.push_back({path, reader.layout(), reader.rows(), ec ? 0 : bytes, reader.seq_len(),
                           reader.max_predictions()});
    plan.input_bytes += plan.inputs.back().bytes;
  }
  plan.layout = plan.inputs.front().layout;
  if (!o.layout.empty()) parse_layout(o.layout, plan.layout);  // a known name: validate() checked it
  plan.max_predictions = o.max_predictions.value_or(0);
  for (const auto& in : plan.inputs) {
    plan.widest_input = std::max(plan.widest_input, in.layout == Hdf5Layout::nvidia ? in.seq_len : o.bins.back());
    if (!o.max_predictions) plan.max_predictions = std::max(plan.max_predictions, in.max_predictions);
  }
  if (plan.layout == Hdf5Layout::nvidia && plan.max_predictions == 0 && plan.masked)
    usage_fail("--max-predictions is needed to write the NVIDIA layout from varlength inputs");
  // The output's missing parents, the staging directory, the bins and the marker.
  const int directories = CreatedDirs::missing(o.output_dir) + static_cast<int>(o.bins.size()) + 2;
  const int max_files = max_shard_files(directories);
  const long long files = static_cast<long long>(o.shards_per_bin) * static_cast<long long>(o.bins.size());
  if (files > max_files)
    usage_fail("--shards-per-bin: {} bins x {} shards = {} files open at once, more than the {} this run can have "
               "(at most {} temporaries, fewer with a low ulimit -n)",
               o.bins.size(), o.shards_per_bin, files, max_files, kMaxCleanupPaths);
  return plan;
}

using BinWriters = std::vector<std::vector<std::unique_ptr<PretrainWriter>>>;

// OUTPUT/<bound>/part-K-of-N.hdf5 for every bin, each bin's directory made (and removed again unless the run
// succeeds); the NVIDIA layout as NVIDIA's files are written, a varlength file in chunks of rows.
BinWriters open_bin_writers(const Bin4Config& o, const Bin4Plan& plan, ChunkCompressor& compressor,
                            StagedDirectory& output) {
  BinWriters writers(o.bins.size());
  for (size_t b = 0; b < o.bins.size(); ++b) {
    const fs::path dir = output.subdirectory(std::to_string(o.bins[b]).c_str());
    PretrainWriterOptions w;
    w.layout = plan.layout;
    w.seq_len = o.trim ? o.bins[b] : plan.widest_input;
    w.max_predictions = plan.max_predictions;
    w.gzip_level = o.gzip_level.value_or(plan.layout == Hdf5Layout::nvidia ? kNvidiaGzipLevel : 0);
    w.chunk_rows = plan.layout == Hdf5Layout::nvidia
                       ? std::max<size_t>(64, kNvidiaChunkTokens / static_cast<size_t>(w.seq_len))
                       : kVarlengthChunkRows;
    w.compressor = &compressor;
    w.vocab_stamp = plan.vocab.text();
    w.masked = plan.masked;
    for (int k = 0; k < o.shards_per_bin; ++k)
      writers[b].push_back(std::make_unique<PretrainWriter>((dir / shard_file_name(k, o.shards_per_bin)).string(), w));
  }
  return writers;
}

// One sample to its bin, to the bin's shards in turn; one longer than the last bin fails or, with --drop-long, is
// counted and left out.
void deal_sample(const Bin4Config& o, const Bin4Plan& plan, const InputInfo& in, uint64_t row,
                 const PretrainSample& sample, BinWriters& writers, Bin4Result& result) {
  const int b = bin_index(o.bins, sample.length());
  if (b < 0) {
    if (!o.drop_long)
      fail("{}: row {}: {} tokens, longer than the last bin ({}); use --drop-long to skip such samples", in.path, row,
           sample.length(), o.bins.back());
    ++result.dropped;
    return;
  }
  const auto bin = static_cast<size_t>(b);
  auto& writer = *writers[bin][result.per_bin[bin] % static_cast<uint64_t>(o.shards_per_bin)];
  if (plan.layout == Hdf5Layout::nvidia && sample.masked_lm_positions.size() > size_t(plan.max_predictions))
    fail("{}: row {}: {} predictions do not fit --max-predictions {}", in.path, row, sample.masked_lm_positions.size(),
         plan.max_predictions);
  if (plan.layout == Hdf5Layout::nvidia && sample.length() > size_t(writer.options().seq_len))
    fail("{}: row {}: {} tokens do not fit the output's sequence length {}", in.path, row, sample.length(),
         writer.options().seq_len);
  writer.append(sample);
  ++result.per_bin[bin];
}

// Every sample of every input, dealt. The inputs' blocks are read and checked on a thread of their own, a few
// blocks ahead of the dealing (libhdf5 is built thread-safe and serialises the two threads' calls); they arrive in
// input order, so the deal does not change.
void deal_samples(const Bin4Config& o, const Bin4Plan& plan, BinWriters& writers, Bin4Result& result,
                  Progress& progress) {
  const auto& inputs = plan.inputs;
  std::vector<uint64_t> bytes_before;  // of the inputs before each one, for the progress line
  uint64_t before = 0;
  for (const auto& in : inputs) bytes_before.push_back(before), before += in.bytes;
  progress.set_total(plan.input_bytes);
  size_t reading = 0;
  std::unique_ptr<PretrainReader> reader;
  Prefetcher<InputBlock> blocks(kBlocksAhead, [&](InputBlock& b) {
    if (reading == inputs.size()) return false;  // asked again after the end (the prefetcher reads ahead)
    for (; reading < inputs.size(); ++reading, reader.reset()) {
      if (!reader) reader = std::make_unique<PretrainReader>(inputs[reading].path);
      if (reader->read_block(b.samples, kBlockRows)) {
        b.input = reading;
        b.next_row = reader->next_row();
        return true;
      }
    }
    // Written once, before the end marker is queued: the dealing thread reads it after taking that marker.
    result.reading_cpu_seconds = cpu_seconds(RUSAGE_THREAD);
    return false;
  });
  InputBlock block;
  while (blocks.next(block)) {
    const InputInfo& in = inputs[block.input];
    uint64_t row = block.next_row - block.samples.size();
    for (const auto& sample : block.samples) {
      deal_sample(o, plan, in, row++, sample, writers, result);
      ++result.samples;
    }
    if (progress.wants_update())
      progress.update(bytes_before[block.input] + in.bytes * block.next_row / std::max<uint64_t>(1, in.rows),
                      fmt::format("{} samples", result.samples));
  }
}

// bin4.json: the layout, the counts and every bin's bounds, shards and (NVIDIA) widths.
nlohmann::json bin4_marker(const Bin4Config& o, const Bin4Plan& plan, const BinWriters& writers,
                           const Bin4Result& result) {
  nlohmann::json marker;
  marker["tool"] = "bin4";
  marker["version"] = BERTKIT_VERSION;
  marker["layout"] = layout_name(plan.layout);
  marker["inputs"] = plan.inputs.size();
  marker["samples"] = result.samples;
  marker["dropped"] = result.dropped;
  marker["bins"] = nlohmann::json::array();
  for (size_t b = 0; b < o.bins.size(); ++b) {
    nlohmann::json bin{{"dir", std::to_string(o.bins[b])},
                       {"min_length", b == 0 ? 1 : o.bins[b - 1] + 1},
                       {"max_length", o.bins[b]},
                       {"samples", result.per_bin[b]},
                       {"shards", o.shards_per_bin}};
    if (plan.layout == Hdf5Layout::nvidia) {
      bin["seq_len"] = writers[b].front()->options().seq_len;
      bin["max_predictions"] = plan.max_predictions;
    }
    marker["bins"].push_back(bin);
  }
  return marker;
}

}  // namespace

Bin4Result run_bin4(const Bin4Config& o) {
  o.validate();
  const Bin4Plan plan = plan_bin4(o);
  // Declared before the writers, so that it goes after they have removed their temporaries.
  StagedDirectory output(o.output_dir, replaces_existing_output(o));
  output.replaces_only(is_bin4_output, kBin4OutputDescription);
  Bin4Result result;
  Progress progress(o.quiet);
  if (const std::string note = plan.vocab.unstamped_note(); !note.empty() && !o.quiet) print_warning(note);
  try {
    ChunkCompressor compressor(worker_threads(o.threads));  // outlives the writers
    BinWriters writers = open_bin_writers(o, plan, compressor, output);
    result.per_bin.assign(o.bins.size(), 0);
    deal_samples(o, plan, writers, result, progress);
    for (auto& bin : writers)
      for (auto& writer : bin) writer->commit();
    write_file_atomic(output.file(kMarkerName), bin4_marker(o, plan, writers, result).dump(2) + "\n", true);
    output.commit();
  } catch (const Error& e) {
    throw Error(output.as_destination(e.what()));  // the shard as the user knows it, not its staging name
  }
  std::string what = fmt::format("{} samples from {} file{} ({})", result.samples, plan.inputs.size(),
                                 plan.inputs.size() == 1 ? "" : "s", bin_summary(o.bins, result.per_bin));
  if (result.dropped > 0) what += fmt::format(", {} too long dropped", result.dropped);
  progress.finish(plan.input_bytes, what);
  return result;
}

}  // namespace bk
