#include "tasks/pretraining/data_loader.h"

#include "pretraining_data/dynamic_masks.h"
#include "tasks/pretraining/inputs.h"
#include "tasks/pretraining/masking_flags.h"
#include "tasks/pretraining/sampler.h"
#include "util/prefetcher.h"
#include "util/error.h"
#include "util/fnv1a.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <mutex>

namespace bk {

namespace fs = std::filesystem;

namespace {

const std::vector<int> kDefaultBinRatio = {6, 3, 2, 5};  // Samsung's mix for a per-GPU batch of 16

}  // namespace

// Batches per rank in an epoch; with global_order, the global batches of world * per_batch one stream holds.
int64_t count_epoch_batches(const DataLoaderConfig& config, const std::vector<int64_t>& per_batch, int64_t epoch) {
  const std::vector<std::vector<SampleFile>>& sources = config.inputs.sources;
  if (!config.global_order) return epoch_batch_count(sources, per_batch, config.seed, epoch, config.world);
  std::vector<int64_t> global(per_batch);
  for (auto& n : global) n *= config.world;
  return epoch_batch_count(sources, global, config.seed, epoch, 1);
}

// Builds this rank's batches from a position on; runs in the prefetch thread (or in next() without one).
class BatchProducer {
 public:
  BatchProducer(const DataLoaderConfig& config, const std::vector<int64_t>& per_batch, int64_t pad_to,
                DataPosition start, const std::atomic<bool>* cancel)
      : config_(config), sources_(config.inputs.sources), per_batch_(per_batch), pad_to_(pad_to), cancel_(cancel) {
    // A masking-rate schedule reads the run's batch count: the epochs before the start's are counted once.
    if (config_.masking && config_.masking->scheduled())
      for (int64_t e = 0; e < start.epoch; ++e)
        batches_before_ += count_epoch_batches(config_, per_batch_, e);
    open_epoch(start.epoch, start.batch);
  }

  // false at the end of an epoch (and the next epoch is set up).
  bool next(PretrainBatch& batch) {
    if (batch_ >= batches_) {
      batches_before_ += batches_;
      open_epoch(epoch_ + 1, 0);
      return false;
    }
    // The batch's masking rule: the run's one, or under a schedule the rate of the step it goes to.
    MaskingRule rule;
    const MaskingRule* batch_rule = nullptr;
    if (config_.masking && config_.masking->scheduled()) {
      rule = config_.masking->rule_at(batches_before_ + batch_);
      batch_rule = &rule;
    }
    samples_.clear();
    const int64_t before = config_.global_order ? config_.rank : 0;
    const int64_t after = config_.global_order ? config_.world - 1 - config_.rank : 0;
    for (size_t s = 0; s < sources_.size(); ++s) {
      streams_[s]->skip(static_cast<uint64_t>(before * per_batch_[s]));  // global order: the lower ranks' part
      for (int64_t k = 0; k < per_batch_[s]; ++k) {
        PretrainSample& sample = samples_.emplace_back();
        if (!streams_[s]->next(sample, batch_rule)) {
          if (cancel_ && cancel_->load()) return false;
          fail("source {} ran out of samples in epoch {} (input files changed?)", s, epoch_);
        }
      }
      streams_[s]->skip(static_cast<uint64_t>(after * per_batch_[s]));
    }
    batch = collate_pretrain_batch(samples_, config_.max_predictions, config_.pin_memory, config_.unpadded, pad_to_);
    ++batch_;
    return true;
  }

 private:
  void open_epoch(int64_t epoch, int64_t skip_batches) {
    epoch_ = epoch;
    batch_ = skip_batches;
    batches_ = count_epoch_batches(config_, per_batch_, epoch);
    if (batches_ == 0)
      fail("{}: too few samples for a batch of {} on each of {} ranks in epoch {}", config_.inputs.named(),
           config_.batch_size, config_.world, epoch);
    streams_.clear();
    for (size_t s = 0; s < sources_.size(); ++s) {
      auto source = static_cast<int>(s);
      streams_.push_back(std::make_unique<SampleStream>(
          sources_[s],
          config_.global_order ? epoch_slices(sources_[s], config_.seed, epoch, source, 0, 1)
                               : epoch_slices(sources_[s], config_.seed, epoch, source, config_.rank, config_.world),
          config_.seed, epoch, source, config_.max_predictions, config_.masking.get(), cancel_));
      const int64_t ranks_read = config_.global_order ? config_.world : 1;
      streams_.back()->skip(static_cast<uint64_t>(skip_batches * per_batch_[s] * ranks_read));
    }
  }

  const DataLoaderConfig& config_;
  const std::vector<std::vector<SampleFile>>& sources_;
  const std::vector<int64_t>& per_batch_;
  const int64_t pad_to_;
  const std::atomic<bool>* cancel_;
  int64_t epoch_ = 0, batch_ = 0, batches_ = 0;
  // This rank's batches in the epochs before epoch_ (counted from the start only under a masking schedule).
  int64_t batches_before_ = 0;
  std::vector<std::unique_ptr<SampleStream>> streams_;
  std::vector<PretrainSample> samples_;
};

struct PretrainDataLoader::Impl {
  DataLoaderConfig config;
  std::vector<int64_t> per_batch;
  uint64_t fingerprint = 0, total = 0;
  size_t file_count = 0;
  int64_t max_length = 0;

  DataPosition position;  // of the consumer: what next() has handed out
  std::unique_ptr<BatchProducer> producer;
  std::unique_ptr<Prefetcher<PretrainBatch>> ahead;
  std::atomic<bool> cancel{false};

  mutable std::mutex count_mutex;
  mutable int64_t counted_epoch = -1, counted_batches = 0;

  int64_t batches_in(int64_t epoch) const {
    std::lock_guard lock(count_mutex);
    if (counted_epoch != epoch) {
      counted_batches = count_epoch_batches(config, per_batch, epoch);
      counted_epoch = epoch;
    }
    return counted_batches;
  }

  // The longest row any input holds (bin4: the largest bin's bound; 0: varlength files, not known).
  int64_t longest() const {
    const std::vector<int>& bounds = config.inputs.bin_bounds;
    return bounds.empty() ? max_length : *std::max_element(bounds.begin(), bounds.end());
  }

  void start() {
    producer = std::make_unique<BatchProducer>(config, per_batch, config.full_length ? longest() : 0,
                                               position, &cancel);
    ahead = std::make_unique<Prefetcher<PretrainBatch>>(static_cast<size_t>(config.prefetch),
                                                        [this](PretrainBatch& b) { return producer->next(b); });
  }

  // Stops the producer (a block being read is abandoned through `cancel`); the next next() starts a new one.
  void halt() {
    cancel = true;
    ahead.reset();
    producer.reset();
    cancel = false;
  }
};

namespace {

// Samples per batch from each source: the whole batch from one, or bin4's ratio scaled to it.
std::vector<int64_t> samples_per_source(const DataLoaderConfig& c) {
  const std::vector<int>& bounds = c.inputs.bin_bounds;
  if (bounds.empty()) {
    if (!c.bin_ratio.empty()) fail("a bin ratio needs bin4 directories as inputs");
    return {c.batch_size};
  }
  std::vector<int> ratio = c.bin_ratio;
  if (ratio.empty() && bounds.size() == kDefaultBinRatio.size()) ratio = kDefaultBinRatio;
  if (ratio.size() != bounds.size())
    fail("{}: {} bins ({}) need a bin ratio of {} parts", c.inputs.names.front(), bounds.size(),
         fmt::join(bounds, ","), bounds.size());
  return scale_bin_ratio(ratio, c.batch_size);
}

// What the batches depend on; dynamic masking's rule too, so that a resume with another rule is refused.
uint64_t batches_fingerprint(const DataLoaderConfig& c, const std::vector<int64_t>& per_batch) {
  std::string masking;
  if (const DynamicMasking* dm = c.masking.get()) {
    masking = fmt::format(" masks {:g} {}{}", dm->rule.masked_lm_prob, dm->rule.max_predictions,
                          dm->rule.whole_word_mask ? " words" : "");
    if (dm->scheduled()) masking += fmt::format(" to {:g} over {}", dm->final_prob, dm->steps);  // older runs: none
  }
  uint64_t hash = fnv1a64(fmt::format("{} {} {} {} {}{}{}|", c.seed, c.world, c.batch_size, c.max_predictions,
                                      fmt::join(per_batch, ","), c.global_order ? " global" : "", masking));
  for (const auto& source : c.inputs.sources) {
    for (const auto& file : source)
      hash = fnv1a64(fmt::format("{}:{};", fs::path(file.path).filename().string(), file.rows), hash);
    hash = fnv1a64("|", hash);
  }
  return hash == 0 ? 1 : hash;
}

}  // namespace

PretrainDataLoader::PretrainDataLoader(DataLoaderConfig config) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  if (config.batch_size < 1) fail("batch size must be positive, not {}", config.batch_size);
  if (config.max_predictions < 0) fail("max predictions must not be negative, not {}", config.max_predictions);
  if (config.world < 1 || config.rank < 0 || config.rank >= config.world)
    fail("rank {} is not in [0, {})", config.rank, config.world);
  if (config.prefetch < 0) fail("prefetch must not be negative, not {}", config.prefetch);
  if (config.inputs.sources.empty()) fail("no training inputs given");
  check_max_predictions(config.max_predictions, config.inputs, config.max_positions);
  m.config = std::move(config);
  DataLoaderConfig& c = m.config;
  m.per_batch = samples_per_source(c);
  // P from the data, as bert-eval takes it: the widest masked_lm_positions. MLPerf's varlength files store each
  // sample's own count and no width, so they need it given. Unmasked files come with their masking rule
  // (masking_flags.h resolves it); this loader draws their masks.
  const bool infer_predictions = c.max_predictions == 0;
  int64_t widest_predictions = 0;
  for (const SampleFile& file : c.inputs.files()) {
    m.max_length = std::max<int64_t>(m.max_length, file.seq_len);
    if (!file.masked && !c.masking) fail("{}: unmasked instances given to the loader without a masking rule", file.path);
    if (!file.masked && infer_predictions)
      fail("{}: unmasked instances: give --max-predictions, the masks' most per sample", file.path);
    if (file.max_predictions == 0 && infer_predictions)
      fail("{}: a varlength file does not record its samples' widest prediction count: give --max-predictions "
           "(MLPerf's phase-2 data uses 76)", file.path);
    widest_predictions = std::max<int64_t>(widest_predictions, file.max_predictions);
    m.total += file.rows;
    ++m.file_count;
  }
  if (infer_predictions) c.max_predictions = widest_predictions;
  // --max-predictions counts one sample's masks; a packed row of several takes more slots.
  if (c.masking) c.max_predictions = dynamic_prediction_slots(c.inputs.sources, *c.masking);
  m.fingerprint = batches_fingerprint(c, m.per_batch);
  m.position.fingerprint = m.fingerprint;
  if (m.total == 0) fail("{}: no samples in the inputs", c.inputs.named());
  if (m.batches_in(0) == 0)
    fail("{}: {} samples are too few for a batch of {} on each of {} ranks", c.inputs.named(), m.total, c.batch_size,
         c.world);
}

PretrainDataLoader::~PretrainDataLoader() { impl_->halt(); }

bool PretrainDataLoader::next(PretrainBatch& batch) {
  Impl& m = *impl_;
  if (!m.ahead) m.start();
  const bool got = m.ahead->next(batch);
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
  m.position = {position.epoch, position.batch, m.fingerprint};
}

int64_t PretrainDataLoader::batches_per_epoch() const { return impl_->batches_in(impl_->position.epoch); }

int64_t PretrainDataLoader::samples_per_epoch() const {
  return batches_per_epoch() * impl_->config.batch_size * impl_->config.world;
}

uint64_t PretrainDataLoader::total_samples() const { return impl_->total; }
size_t PretrainDataLoader::files() const { return impl_->file_count; }
bool PretrainDataLoader::binned() const { return !impl_->config.inputs.bin_bounds.empty(); }
int64_t PretrainDataLoader::max_predictions() const { return impl_->config.max_predictions; }
int64_t PretrainDataLoader::max_length() const {
  return impl_->longest();
}
const std::vector<int64_t>& PretrainDataLoader::per_batch() const { return impl_->per_batch; }
const std::vector<int>& PretrainDataLoader::bin_bounds() const { return impl_->config.inputs.bin_bounds; }

}  // namespace bk
