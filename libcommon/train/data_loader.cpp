#include "train/data_loader.h"

#include "util/error.h"
#include "data/hdf5_reader.h"
#include "train/sampler.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

namespace bk {

namespace fs = std::filesystem;

namespace {

const std::vector<int> kDefaultBinRatio = {6, 3, 2, 5};  // Samsung's mix for a per-GPU batch of 16

struct ResolvedInputs {
  std::vector<std::vector<SampleFile>> sources;  // one source, or one per bin
  std::vector<int> bin_bounds;                   // bin4: each bin's max_length; empty otherwise
};

bool is_hdf5_name(const fs::path& p) { return p.extension() == ".hdf5" || p.extension() == ".h5"; }

std::vector<std::string> hdf5_files_in(const fs::path& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (is_hdf5_name(it->path()) && it->is_regular_file()) files.push_back(it->path().string());
  if (ec) fail("{}: cannot list the directory: {}", dir.string(), ec.message());
  std::sort(files.begin(), files.end());
  return files;
}

// Appends a bin4 directory's shards to `bins` (one list per bin), checking them against its bin4.json.
void add_bin4_dir(const fs::path& dir, std::vector<int>& bounds, std::vector<std::vector<std::string>>& bins) {
  fs::path marker = dir / "bin4.json";
  std::ifstream in(marker);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) fail("{}: cannot read", marker.string());
  nlohmann::json json;
  std::vector<int> these;
  std::vector<std::vector<std::string>> files;
  try {
    json = nlohmann::json::parse(text.str());
    for (const auto& bin : json.at("bins")) {
      these.push_back(bin.at("max_length").get<int>());
      fs::path bin_dir = dir / bin.at("dir").get<std::string>();
      files.push_back(hdf5_files_in(bin_dir));
      auto shards = bin.at("shards").get<size_t>();
      if (files.back().size() != shards)
        fail("{}: bin4.json lists {} shard{} for bin {}, {} holds {}", marker.string(), shards, shards == 1 ? "" : "s",
             these.back(), bin_dir.string(), files.back().size());
    }
  } catch (const nlohmann::json::exception& e) {
    fail("{}: not a bin4.json: {}", marker.string(), e.what());
  }
  if (these.empty()) fail("{}: lists no bins", marker.string());
  if (!bounds.empty() && these != bounds)
    fail("{}: bins {} differ from the other bin4 input's {}", marker.string(), fmt::join(these, ","),
         fmt::join(bounds, ","));
  bounds = these;
  bins.resize(files.size());
  for (size_t b = 0; b < files.size(); ++b) bins[b].insert(bins[b].end(), files[b].begin(), files[b].end());
}

ResolvedInputs resolve_inputs(const std::vector<std::string>& inputs) {
  if (inputs.empty()) fail("no training inputs given");
  std::vector<std::string> plain;
  ResolvedInputs resolved;
  std::vector<std::vector<std::string>> bins;
  for (const auto& input : inputs) {
    std::error_code ec;
    fs::file_status st = fs::status(input, ec);
    if (!fs::exists(st)) fail("{}: cannot open: No such file or directory", input);
    if (!fs::is_directory(st)) {
      plain.push_back(input);
    } else if (fs::exists(fs::path(input) / "bin4.json")) {
      add_bin4_dir(input, resolved.bin_bounds, bins);
    } else {
      std::vector<std::string> files = hdf5_files_in(input);
      if (files.empty()) fail("{}: no *.hdf5 or *.h5 files in the directory", input);
      plain.insert(plain.end(), files.begin(), files.end());
    }
  }
  if (!bins.empty() && !plain.empty())
    fail("{}: plain HDF5 inputs and bin4 directories cannot be mixed", plain.front());
  if (bins.empty()) bins.push_back(plain);
  // Every file is opened now, so a bad one fails before training starts.
  for (const auto& list : bins) {
    auto& source = resolved.sources.emplace_back();
    for (const auto& path : list) source.push_back({path, PretrainReader(path).rows()});
  }
  return resolved;
}

uint64_t fnv1a(uint64_t hash, std::string_view text) {
  for (unsigned char c : text) hash = (hash ^ c) * 0x100000001b3ull;
  return hash;
}

}  // namespace

PretrainBatch collate_pretrain_batch(const std::vector<PretrainSample>& samples, int64_t max_predictions,
                                     bool pin_memory) {
  auto B = static_cast<int64_t>(samples.size());
  int64_t T = 0;
  for (const auto& s : samples) T = std::max<int64_t>(T, static_cast<int64_t>(s.length()));
  const int64_t P = max_predictions;
  PretrainBatch batch;
  batch.input_ids = at::zeros({B, T}, at::kLong);
  batch.segment_ids = at::zeros({B, T}, at::kLong);
  batch.attention_mask = at::zeros({B, T}, at::kLong);
  batch.masked_lm_positions = at::zeros({B, P}, at::kLong);
  batch.masked_lm_ids = at::full({B, P}, -1, at::kLong);
  batch.next_sentence_labels = at::zeros({B}, at::kLong);
  int64_t* ids = batch.input_ids.data_ptr<int64_t>();
  int64_t* segments = batch.segment_ids.data_ptr<int64_t>();
  int64_t* mask = batch.attention_mask.data_ptr<int64_t>();
  int64_t* positions = batch.masked_lm_positions.data_ptr<int64_t>();
  int64_t* masked = batch.masked_lm_ids.data_ptr<int64_t>();
  int64_t* labels = batch.next_sentence_labels.data_ptr<int64_t>();
  for (int64_t b = 0; b < B; ++b) {
    const PretrainSample& s = samples[static_cast<size_t>(b)];
    if (static_cast<int64_t>(s.masked_lm_positions.size()) > P)
      fail("sample {} of the batch has {} masked positions, more than the {} max predictions", b,
           s.masked_lm_positions.size(), P);
    for (size_t t = 0; t < s.length(); ++t) {
      ids[b * T + static_cast<int64_t>(t)] = s.input_ids[t];
      segments[b * T + static_cast<int64_t>(t)] = s.segment_ids[t];
      mask[b * T + static_cast<int64_t>(t)] = 1;
    }
    for (size_t p = 0; p < s.masked_lm_positions.size(); ++p) {
      positions[b * P + static_cast<int64_t>(p)] = s.masked_lm_positions[p];
      masked[b * P + static_cast<int64_t>(p)] = s.masked_lm_ids[p];
    }
    labels[b] = s.next_sentence_label;
  }
  if (pin_memory) {
    for (at::Tensor* t : {&batch.input_ids, &batch.segment_ids, &batch.attention_mask, &batch.masked_lm_positions,
                          &batch.masked_lm_ids, &batch.next_sentence_labels})
      *t = t->pin_memory();
  }
  return batch;
}

std::string DataPosition::to_json() const {
  // The fingerprint is a string: JSON readers that hold numbers as doubles would round a 64-bit value.
  return nlohmann::json{{"epoch", epoch}, {"batch", batch}, {"fingerprint", fmt::format("{:016x}", fingerprint)}}
      .dump();
}

DataPosition DataPosition::from_json(const std::string& text) {
  DataPosition p;
  try {
    auto json = nlohmann::json::parse(text);
    p.epoch = json.at("epoch").get<int64_t>();
    p.batch = json.at("batch").get<int64_t>();
    p.fingerprint = std::stoull(json.at("fingerprint").get<std::string>(), nullptr, 16);
  } catch (const std::exception& e) {
    fail("not a data loader position: {}", e.what());
  }
  return p;
}

// Batches per rank in an epoch; with global_order, the global batches of world * per_batch one stream holds.
int64_t count_epoch_batches(const DataLoaderConfig& config, const std::vector<std::vector<SampleFile>>& sources,
                            const std::vector<int64_t>& per_batch, int64_t epoch) {
  if (!config.global_order) return epoch_batch_count(sources, per_batch, config.seed, epoch, config.world);
  std::vector<int64_t> global(per_batch);
  for (auto& n : global) n *= config.world;
  return epoch_batch_count(sources, global, config.seed, epoch, 1);
}

// Builds this rank's batches from a position on; runs in the prefetch thread (or in next() without one).
class BatchProducer {
 public:
  BatchProducer(const DataLoaderConfig& config, const std::vector<std::vector<SampleFile>>& sources,
                const std::vector<int64_t>& per_batch, DataPosition start, const std::atomic<bool>* cancel)
      : config_(config), sources_(sources), per_batch_(per_batch), cancel_(cancel) {
    open_epoch(start.epoch, start.batch);
  }

  // false at the end of an epoch (and the next epoch is set up).
  bool next(PretrainBatch& batch) {
    if (batch_ >= batches_) {
      open_epoch(epoch_ + 1, 0);
      return false;
    }
    samples_.clear();
    const int64_t before = config_.global_order ? config_.rank : 0;
    const int64_t after = config_.global_order ? config_.world - 1 - config_.rank : 0;
    for (size_t s = 0; s < sources_.size(); ++s) {
      streams_[s]->skip(static_cast<uint64_t>(before * per_batch_[s]));  // global order: the lower ranks' part
      for (int64_t k = 0; k < per_batch_[s]; ++k) {
        PretrainSample& sample = samples_.emplace_back();
        if (!streams_[s]->next(sample)) {
          if (cancel_ && cancel_->load()) return false;
          fail("source {} ran out of samples in epoch {} (input files changed?)", s, epoch_);
        }
      }
      streams_[s]->skip(static_cast<uint64_t>(after * per_batch_[s]));
    }
    batch = collate_pretrain_batch(samples_, config_.max_predictions, config_.pin_memory);
    ++batch_;
    return true;
  }

 private:
  void open_epoch(int64_t epoch, int64_t skip_batches) {
    epoch_ = epoch;
    batch_ = skip_batches;
    batches_ = count_epoch_batches(config_, sources_, per_batch_, epoch);
    if (batches_ == 0)
      fail("{}: too few samples for a batch of {} on each of {} ranks in epoch {}", fmt::join(config_.inputs, ", "),
           config_.batch_size, config_.world, epoch);
    streams_.clear();
    for (size_t s = 0; s < sources_.size(); ++s) {
      auto source = static_cast<int>(s);
      streams_.push_back(std::make_unique<SampleStream>(
          sources_[s],
          config_.global_order ? epoch_slices(sources_[s], config_.seed, epoch, source, 0, 1)
                               : epoch_slices(sources_[s], config_.seed, epoch, source, config_.rank, config_.world),
          config_.seed, epoch, source, config_.max_predictions, cancel_));
      const int64_t ranks_read = config_.global_order ? config_.world : 1;
      streams_.back()->skip(static_cast<uint64_t>(skip_batches * per_batch_[s] * ranks_read));
    }
  }

  const DataLoaderConfig& config_;
  const std::vector<std::vector<SampleFile>>& sources_;
  const std::vector<int64_t>& per_batch_;
  const std::atomic<bool>* cancel_;
  int64_t epoch_ = 0, batch_ = 0, batches_ = 0;
  std::vector<std::unique_ptr<SampleStream>> streams_;
  std::vector<PretrainSample> samples_;
};

struct PretrainDataLoader::Impl {
  struct Item {
    PretrainBatch batch;
    bool end_of_epoch = false;
    std::exception_ptr error;
  };

  DataLoaderConfig config;
  std::vector<std::vector<SampleFile>> sources;
  std::vector<int> bin_bounds;
  std::vector<int64_t> per_batch;
  uint64_t fingerprint = 0, total = 0;
  size_t file_count = 0;

  DataPosition position;  // of the consumer: what next() has handed out
  std::exception_ptr failed;
  std::unique_ptr<BatchProducer> producer;

  std::thread thread;
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<Item> queue;
  bool stop = false;
  std::atomic<bool> cancel{false};

  mutable std::mutex count_mutex;
  mutable int64_t counted_epoch = -1, counted_batches = 0;

  int64_t batches_in(int64_t epoch) const {
    std::lock_guard lock(count_mutex);
    if (counted_epoch != epoch) {
      counted_batches = count_epoch_batches(config, sources, per_batch, epoch);
      counted_epoch = epoch;
    }
    return counted_batches;
  }

  void start() {
    producer = std::make_unique<BatchProducer>(config, sources, per_batch, position, &cancel);
    if (config.prefetch > 0) thread = std::thread([this] { produce(); });
  }

  void produce() {
    try {
      for (;;) {
        Item item;
        item.end_of_epoch = !producer->next(item.batch);
        std::unique_lock lock(mutex);
        changed.wait(lock, [&] { return stop || queue.size() < static_cast<size_t>(config.prefetch); });
        if (stop) return;
        queue.push_back(std::move(item));
        changed.notify_all();
      }
    } catch (...) {
      std::lock_guard lock(mutex);
      if (!stop) queue.push_back({{}, false, std::current_exception()});
      changed.notify_all();
    }
  }

  void halt() {
    {
      std::lock_guard lock(mutex);
      stop = true;
    }
    cancel = true;
    changed.notify_all();
    if (thread.joinable()) thread.join();
    queue.clear();
    producer.reset();
    stop = false;
    cancel = false;
  }
};

PretrainDataLoader::PretrainDataLoader(DataLoaderConfig config) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  if (config.batch_size < 1) fail("batch size must be positive, not {}", config.batch_size);
  if (config.max_predictions < 1) fail("max predictions must be positive, not {}", config.max_predictions);
  if (config.world < 1 || config.rank < 0 || config.rank >= config.world)
    fail("rank {} is not in [0, {})", config.rank, config.world);
  if (config.prefetch < 0) fail("prefetch must not be negative, not {}", config.prefetch);
  ResolvedInputs resolved = resolve_inputs(config.inputs);
  m.sources = std::move(resolved.sources);
  m.bin_bounds = std::move(resolved.bin_bounds);
  if (m.bin_bounds.empty()) {
    if (!config.bin_ratio.empty()) fail("a bin ratio needs bin4 directories as inputs");
    m.per_batch = {config.batch_size};
  } else {
    std::vector<int> ratio = config.bin_ratio;
    if (ratio.empty() && m.bin_bounds.size() == kDefaultBinRatio.size()) ratio = kDefaultBinRatio;
    if (ratio.size() != m.bin_bounds.size())
      fail("{}: {} bins ({}) need a bin ratio of {} parts", config.inputs.front(), m.bin_bounds.size(),
           fmt::join(m.bin_bounds, ","), m.bin_bounds.size());
    m.per_batch = scale_bin_ratio(ratio, config.batch_size);
  }
  m.config = std::move(config);

  uint64_t hash = 0xcbf29ce484222325ull;
  hash = fnv1a(hash, fmt::format("{} {} {} {} {}{}|", m.config.seed, m.config.world, m.config.batch_size,
                                 m.config.max_predictions, fmt::join(m.per_batch, ","),
                                 m.config.global_order ? " global" : ""));
  for (const auto& source : m.sources) {
    for (const auto& file : source) {
      hash = fnv1a(hash, fmt::format("{}:{};", fs::path(file.path).filename().string(), file.rows));
      m.total += file.rows;
      ++m.file_count;
    }
    hash = fnv1a(hash, "|");
  }
  m.fingerprint = hash == 0 ? 1 : hash;
  m.position.fingerprint = m.fingerprint;
  if (m.total == 0) fail("{}: no samples in the inputs", fmt::join(m.config.inputs, ", "));
  if (m.batches_in(0) == 0)
    fail("{}: {} samples are too few for a batch of {} on each of {} ranks", fmt::join(m.config.inputs, ", "),
         m.total, m.config.batch_size, m.config.world);
}

PretrainDataLoader::~PretrainDataLoader() { impl_->halt(); }

bool PretrainDataLoader::next(PretrainBatch& batch) {
  Impl& m = *impl_;
  if (m.failed) std::rethrow_exception(m.failed);
  if (!m.producer) m.start();
  bool got = false;
  if (m.config.prefetch == 0) {
    try {
      got = m.producer->next(batch);
    } catch (...) {
      m.failed = std::current_exception();
      throw;
    }
  } else {
    Impl::Item item;
    {
      std::unique_lock lock(m.mutex);
      m.changed.wait(lock, [&] { return !m.queue.empty(); });
      item = std::move(m.queue.front());
      m.queue.pop_front();
    }
    m.changed.notify_all();
    if (item.error) {
      m.failed = item.error;
      std::rethrow_exception(item.error);
    }
    got = !item.end_of_epoch;
    if (got) batch = std::move(item.batch);
  }
  if (got) {
    ++m.position.batch;
  } else {
    ++m.position.epoch;
    m.position.batch = 0;
  }
  return got;
}

DataPosition PretrainDataLoader::position() const { return impl_->position; }

void PretrainDataLoader::restore(const DataPosition& position) {
  Impl& m = *impl_;
  if (position.fingerprint != 0 && position.fingerprint != m.fingerprint)
    fail("the data position to resume from belongs to other inputs, seed, world size or batch size");
  if (position.epoch < 0 || position.batch < 0 || position.batch > m.batches_in(position.epoch))
    fail("data position epoch {} batch {} is outside the data ({} batches in that epoch)", position.epoch,
         position.batch, position.epoch < 0 ? 0 : m.batches_in(position.epoch));
  m.halt();
  m.failed = nullptr;
  m.position = {position.epoch, position.batch, m.fingerprint};
}

int64_t PretrainDataLoader::batches_per_epoch() const { return impl_->batches_in(impl_->position.epoch); }

int64_t PretrainDataLoader::samples_per_epoch() const {
  return batches_per_epoch() * impl_->config.batch_size * impl_->config.world;
}

uint64_t PretrainDataLoader::total_samples() const { return impl_->total; }
size_t PretrainDataLoader::files() const { return impl_->file_count; }
bool PretrainDataLoader::binned() const { return !impl_->bin_bounds.empty(); }
const std::vector<int64_t>& PretrainDataLoader::per_batch() const { return impl_->per_batch; }

}  // namespace bk
