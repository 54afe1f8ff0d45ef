#include "datasets/bin4.h"

#include "bertkit/version.h"
#include "io/output_over_input.h"
#include "util/error.h"
#include "io/progress.h"
#include "io/cleanup.h"
#include "hdf5/hdf5_reader.h"
#include "hdf5/hdf5_writer.h"
#include "io/created_dirs.h"
#include "io/durable.h"
#include "io/output.h"
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

void prepare_output_dir(const std::string& dir, bool force, CreatedDirs& created) {
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec)) fail("{}: exists and is not a directory", dir);
    if (!fs::is_empty(dir, ec) && !force) fail("{}: output directory exists and is not empty; use --force", dir);
    // An old marker would claim this run finished before it has; remove it first.
    fs::remove(fs::path(dir) / kMarkerName, ec);
  }
  created.create(dir);
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

Bin4Result run_bin4(const Bin4Config& o) {
  o.validate();

  // Open every input once first: a missing or malformed file fails before anything is written, and the
  // NVIDIA inputs' widths decide the output's.
  std::vector<InputInfo> inputs;
  for (const auto& path : o.inputs) {
    PretrainReader reader(path);
    if (reader.layout() == Hdf5Layout::packed) fail("{}: packed rows (pack(1)) cannot be binned by length", path);
    std::error_code ec;
    uint64_t bytes = fs::file_size(path, ec);
    inputs.push_back({path, reader.layout(), reader.rows(), ec ? 0 : bytes, reader.seq_len(), reader.max_predictions()});
  }
  Hdf5Layout layout = inputs.front().layout;
  if (!o.layout.empty()) parse_layout(o.layout, layout);  // a known name: validate() checked it
  int widest_input = 0, max_predictions = o.max_predictions.value_or(0);
  for (const auto& in : inputs) {
    widest_input = std::max(widest_input, in.layout == Hdf5Layout::nvidia ? in.seq_len : o.bins.back());
    if (!o.max_predictions) max_predictions = std::max(max_predictions, in.max_predictions);
  }
  if (layout == Hdf5Layout::nvidia && max_predictions == 0)
    usage_fail("--max-predictions is needed to write the NVIDIA layout from varlength inputs");

  const int K = o.shards_per_bin;
  const int directories = CreatedDirs::missing(o.output_dir) + static_cast<int>(o.bins.size());
  const int max_files = max_shard_files(directories);
  if (static_cast<long long>(K) * static_cast<long long>(o.bins.size()) > max_files)
    usage_fail("--shards-per-bin: {} bins x {} shards = {} files open at once, more than the {} this run can have "
               "(at most {} temporaries, fewer with a low ulimit -n)",
               o.bins.size(), K, static_cast<long long>(K) * static_cast<long long>(o.bins.size()), max_files,
               kMaxCleanupPaths);

  CreatedDirs created;  // declared before the writers, so it runs after they have removed their temporaries
  prepare_output_dir(o.output_dir, o.force, created);
  ChunkCompressor compressor(worker_threads(o.threads));  // outlives the writers
  std::vector<std::vector<std::unique_ptr<PretrainWriter>>> writers(o.bins.size());
  for (size_t b = 0; b < o.bins.size(); ++b) {
    fs::path dir = fs::path(o.output_dir) / std::to_string(o.bins[b]);
    created.create(dir);
    PretrainWriterOptions w;
    w.layout = layout;
    w.seq_len = o.trim ? o.bins[b] : widest_input;
    w.max_predictions = max_predictions;
    w.gzip_level = o.gzip_level.value_or(layout == Hdf5Layout::nvidia ? 4 : 0);
    w.chunk_rows = layout == Hdf5Layout::nvidia ? std::max<size_t>(64, 65536 / w.seq_len) : 1024;
    w.overwrite = o.force;
    w.compressor = &compressor;
    for (int k = 0; k < K; ++k)
      writers[b].push_back(std::make_unique<PretrainWriter>((dir / shard_file_name(k, K)).string(), w));
  }

  Bin4Result result;
  result.per_bin.assign(o.bins.size(), 0);
  Progress progress(o.quiet);
  std::vector<uint64_t> bytes_before;  // of the inputs before each one, for the progress line
  uint64_t input_bytes = 0;
  for (const auto& in : inputs) bytes_before.push_back(input_bytes), input_bytes += in.bytes;
  progress.set_total(input_bytes);
  // The inputs' blocks are read and checked on a thread of their own, a few blocks ahead of the dealing below
  // (libhdf5 is built thread-safe and serialises the two threads' calls; reading and building the samples runs
  // beside the dealing, appending and writing). The blocks arrive in input order, so the deal does not change.
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
    {
      const InputInfo& in = inputs[block.input];
      uint64_t row = block.next_row - block.samples.size();
      for (const auto& sample : block.samples) {
        int b = bin_index(o.bins, sample.length());
        if (b < 0) {
          if (!o.drop_long)
            fail("{}: row {}: {} tokens, longer than the last bin ({}); use --drop-long to skip such samples", in.path,
                 row, sample.length(), o.bins.back());
          ++result.dropped;
        } else {
          auto& writer = *writers[b][result.per_bin[b] % K];
          if (layout == Hdf5Layout::nvidia && sample.masked_lm_positions.size() > size_t(max_predictions))
            fail("{}: row {}: {} predictions do not fit --max-predictions {}", in.path, row,
                 sample.masked_lm_positions.size(), max_predictions);
          if (layout == Hdf5Layout::nvidia && sample.length() > size_t(writer.options().seq_len))
            fail("{}: row {}: {} tokens do not fit the output's sequence length {}", in.path, row, sample.length(),
                 writer.options().seq_len);
          writer.append(sample);
          ++result.per_bin[b];
        }
        ++result.samples;
        ++row;
      }
      if (progress.wants_update())
        progress.update(bytes_before[block.input] + in.bytes * block.next_row / std::max<uint64_t>(1, in.rows),
                        fmt::format("{} samples", result.samples));
    }
  }
  const uint64_t bytes_done = input_bytes;
  for (auto& bin : writers)
    for (auto& writer : bin) writer->commit();

  nlohmann::json marker;
  marker["tool"] = "bin4";
  marker["version"] = BERTKIT_VERSION;
  marker["layout"] = layout_name(layout);
  marker["inputs"] = inputs.size();
  marker["samples"] = result.samples;
  marker["dropped"] = result.dropped;
  marker["bins"] = nlohmann::json::array();
  for (size_t b = 0; b < o.bins.size(); ++b) {
    nlohmann::json bin{{"dir", std::to_string(o.bins[b])},
                       {"min_length", b == 0 ? 1 : o.bins[b - 1] + 1},
                       {"max_length", o.bins[b]},
                       {"samples", result.per_bin[b]},
                       {"shards", K}};
    if (layout == Hdf5Layout::nvidia) {
      bin["seq_len"] = writers[b].front()->options().seq_len;
      bin["max_predictions"] = max_predictions;
    }
    marker["bins"].push_back(bin);
  }
  created.sync();
  write_file_atomic((fs::path(o.output_dir) / kMarkerName).string(), marker.dump(2) + "\n", true);
  created.commit();

  std::string what = fmt::format("{} samples from {} file{} ({})", result.samples, inputs.size(),
                                 inputs.size() == 1 ? "" : "s", bin_summary(o.bins, result.per_bin));
  if (result.dropped > 0) what += fmt::format(", {} too long dropped", result.dropped);
  progress.finish(bytes_done, what);
  return result;
}

}  // namespace bk
