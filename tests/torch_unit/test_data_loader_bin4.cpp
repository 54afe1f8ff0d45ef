// The data loader over bin4 directories: every batch mixes the bins in the configured ratio; and the pretraining
// task's forward passes over such batches (the CUDA case passes as skipped without a device).
#include "cuda_cases.h"
#include "test_data_loader_util.h"

#include "model_config/bert_config.h"
#include "model_config/config_presets.h"
#include "datasets/bin4.h"
#include "model/token_stream.h"
#include "tasks/pretraining/pretraining_task.h"
#include "tasks/pretraining/sampler.h"
#include "device/precision.h"

#include <torch/nn/module.h>

#include <fstream>
#include <set>

using namespace loader_test;

namespace {

const std::vector<int> kBounds = {128, 256, 384, 512};
int bin_of_length(int64_t n) { return bk::bin_index(kBounds, static_cast<size_t>(n)); }

// A bin4 directory made by our bin4 from samples with per_bin[b] samples in bin b; ids numbered 0...
std::string make_bin4(const ScratchDir& dir, const std::vector<int>& per_bin, int shards) {
  std::string input = dir / "all.hdf5";
  {
    bk::PretrainWriterOptions options;
    options.seq_len = 512;
    options.max_predictions = 8;
    bk::PretrainWriter writer(input, options);
    int id = 0;
    for (size_t b = 0; b < per_bin.size(); ++b) {
      int low = b == 0 ? 4 : kBounds[b - 1] + 1, high = kBounds[b];
      for (int i = 0; i < per_bin[b]; ++i, ++id) writer.append(make_sample(id, low + (id * 53) % (high - low + 1), 3));
    }
    writer.commit();
  }
  bk::Bin4Config options;
  options.inputs = {input};
  options.output_dir = dir / "bins";
  options.shards_per_bin = shards;
  options.quiet = true;
  bk::run_bin4(options);
  return options.output_dir;
}

}  // namespace

TEST_CASE("bin4 loader: every batch takes 6:3:2:5 from the bins, each sample once") {
  ScratchDir dir;
  // 2 shards per bin; with 2 ranks each rank reads one shard of every bin: 30/15/10/25 samples = 5 batches.
  std::string bins = make_bin4(dir, {60, 30, 20, 50}, 2);
  std::multiset<int> seen;
  for (int rank = 0; rank < 2; ++rank) {
    bk::PretrainDataLoader loader(config_for({bins}, 16, rank, 2));
    CHECK(loader.binned());
    CHECK(loader.per_batch() == std::vector<int64_t>{6, 3, 2, 5});
    CHECK(loader.batches_per_epoch() == 5);
    bk::PretrainBatch batch;
    int batches = 0;
    while (loader.next(batch)) {
      ++batches;
      std::vector<int> per_bin(4, 0);
      int64_t longest = 0;
      for (int64_t b = 0; b < batch.size(); ++b) {
        int64_t n = batch.attention_mask[b].sum().item<int64_t>();
        longest = std::max(longest, n);
        ++per_bin[static_cast<size_t>(bin_of_length(n))];
        seen.insert(row_id(batch, b));
      }
      CHECK(per_bin == std::vector<int>{6, 3, 2, 5});
      CHECK(batch.seq_len() == longest);
    }
    CHECK(batches == 5);
  }
  CHECK(seen.size() == 160);
  CHECK(std::set<int>(seen.begin(), seen.end()).size() == 160);
}

TEST_CASE("bin4 loader: scaled ratio for batches of 8, deterministic, resumable") {
  ScratchDir dir;
  std::string bins = make_bin4(dir, {40, 30, 12, 20}, 3);
  auto config = config_for({bins}, 8);
  bk::PretrainDataLoader loader(config);
  CHECK(loader.per_batch() == std::vector<int64_t>{3, 2, 1, 2});
  // The bins last 40/3, 30/2, 12/1, 20/2 batches: the 512 bin (10) ends the epoch.
  CHECK(loader.batches_per_epoch() == 10);
  std::vector<std::vector<int>> reference;
  bk::PretrainBatch batch;
  for (int e = 0; e < 2; ++e) {
    while (loader.next(batch)) {
      std::vector<int> per_bin(4, 0);
      for (int64_t b = 0; b < batch.size(); ++b)
        ++per_bin[static_cast<size_t>(bin_of_length(batch.attention_mask[b].sum().item<int64_t>()))];
      CHECK(per_bin == std::vector<int>{3, 2, 1, 2});
      reference.push_back(batch_ids(batch));
    }
  }
  REQUIRE(reference.size() == 20);
  std::set<int> epoch0;
  for (size_t i = 0; i < 10; ++i) epoch0.insert(reference[i].begin(), reference[i].end());
  CHECK(epoch0.size() == 80);
  CHECK(std::vector(reference.begin(), reference.begin() + 10) != std::vector(reference.begin() + 10, reference.end()));

  // Resume from the middle of the first epoch: the rest matches.
  bk::PretrainDataLoader resumed(config);
  resumed.restore({0, 7, 0});
  std::vector<std::vector<int>> rest;
  for (int e = 0; e < 2; ++e)
    while (resumed.next(batch)) rest.push_back(batch_ids(batch));
  CHECK(rest == std::vector(reference.begin() + 7, reference.end()));

  auto custom = config;
  custom.bin_ratio = {1, 1, 1, 1};
  CHECK(bk::PretrainDataLoader(custom).per_batch() == std::vector<int64_t>{2, 2, 2, 2});
  custom.bin_ratio = {1, 1};
  std::string error = error_of([&] { bk::PretrainDataLoader bad(custom); });
  CHECK(error.find(bins) != std::string::npos);
  CHECK(error.find("4 bins") != std::string::npos);
}

TEST_CASE("bin4 loader: a shard missing from the directory is named; no mixing with plain files") {
  ScratchDir dir;
  std::string bins = make_bin4(dir, {10, 10, 10, 10}, 2);
  ScratchDir other;
  auto plain = write_files(other, {8});
  std::string mixed = error_of([&] { bk::PretrainDataLoader bad(config_for({plain[0], bins}, 4)); });
  CHECK(mixed.find("cannot be mixed") != std::string::npos);
  fs::remove(fs::path(bins) / "384" / bk::shard_file_name(1, 2));
  std::string error = error_of([&] { bk::PretrainDataLoader bad(config_for({bins}, 4)); });
  CHECK(error.find("bin4.json") != std::string::npos);
  CHECK(error.find("384") != std::string::npos);
}

TEST_CASE("bin4 loader: full_length batches sliced to each bin's bound have one shape per bin (--cuda-graphs)") {
  ScratchDir dir;
  std::string bins = make_bin4(dir, {60, 30, 20, 50}, 1);
  auto config = config_for({bins}, 16);
  bk::PretrainDataLoader cut(config);
  config.full_length = true;
  bk::PretrainDataLoader full(config);
  CHECK(full.bin_bounds() == kBounds);
  bk::PretrainBatch a, b;
  int batches = 0;
  while (cut.next(a)) {
    REQUIRE(full.next(b));
    ++batches;
    CHECK(b.seq_len() == 512);
    int64_t first = 0;
    for (size_t bin = 0; bin < 4; ++bin) {
      const int64_t rows = full.per_batch()[bin];
      const auto fixed = bk::slice_rows(b, first, rows, kBounds[bin]);
      const auto shortest = bk::slice_rows(a, first, rows);  // cut to the bin's longest row
      CHECK(fixed.input_ids.sizes().vec() == std::vector<int64_t>{rows, kBounds[bin]});
      const int64_t t = shortest.seq_len();
      CHECK(t <= kBounds[bin]);
      CHECK(fixed.input_ids.slice(1, 0, t).equal(shortest.input_ids));
      CHECK(fixed.attention_mask.slice(1, 0, t).equal(shortest.attention_mask));
      CHECK(fixed.attention_mask.slice(1, t).eq(0).all().item<bool>());
      CHECK(fixed.masked_lm_ids.equal(shortest.masked_lm_ids));
      first += rows;
    }
    // A bound below a row's length, or past the batch, is refused.
    CHECK(error_of([&] { bk::slice_rows(b, full.per_batch()[0], full.per_batch()[1], 128); }).find("columns") !=
          std::string::npos);
  }
  CHECK(batches == 10);
}

namespace {

// The first step's micro-batches of a pretraining task on bin4 data (Google's smallest BERT without dropout, seeded
// alike), on `device` computing in `dtype`, and the sums of their loss terms.
struct FirstStep {
  bk::StepCounts counts;
  double mlm = 0, nsp = 0;
};

FirstStep first_step(const ScratchDir& dir, const std::string& bins, bool unpadded, const at::Device& device,
                     at::ScalarType dtype) {
  bk::BertConfig config = bk::BertConfig::load(bk::resolve_bert_config("bert-L2-H128"));
  config.hidden_dropout_prob = config.attention_probs_dropout_prob = 0;
  const std::string config_path = dir / "config.json";
  std::ofstream(config_path) << config.to_json().dump();
  bk::PretrainingConfig pc;
  pc.config_path = config_path;
  pc.train_set = bk::resolve_pretrain_inputs({bins});
  pc.max_predictions = 8;
  pc.unpadded = unpadded;
  bk::TaskContext context;
  context.device = device;
  context.compute_dtype = dtype;
  context.micro_batch_size = 16;
  context.seed = 1234;
  context.quiet = true;
  bk::PretrainingTask task(pc);
  at::manual_seed(3);  // the same initial weights every time
  task.start(context);
  task.model().to(device);
  const bk::Precision precision = dtype == at::kBFloat16 ? bk::Precision::bf16 : bk::Precision::fp32;
  const bk::AutocastScope autocast(precision, device);
  FirstStep step;
  step.counts = task.take_micro_batches(1, 1);
  for (int64_t i = 0; i < step.counts.micro_batches; ++i) {
    const bk::MicroBatchLoss loss = task.forward(static_cast<size_t>(i));
    step.mlm += loss.sums[0].item<double>();
    step.nsp += loss.sums[1].item<double>();
  }
  return step;
}

}  // namespace

TEST_CASE("bin4 pretraining task: a pass per bin where attention pads, with the padded model's loss") {
  ScratchDir dir;
  const std::string bins = make_bin4(dir, {60, 30, 20, 50}, 1);
  // On the CPU the token stream's exact attention pads each sequence to the stream's longest, so unpadded attention
  // keeps a pass per bin too, each cut to its longest sample.
  const at::Device cpu(at::kCPU);
  const FirstStep unpadded = first_step(dir, bins, true, cpu, at::kFloat);
  const FirstStep padded = first_step(dir, bins, false, cpu, at::kFloat);
  CHECK(unpadded.counts.micro_batches == 4);
  CHECK(padded.counts.micro_batches == 4);
  CHECK(unpadded.counts.computed_tokens == unpadded.counts.tokens);
  CHECK(padded.counts.computed_tokens > padded.counts.tokens);
  CHECK(unpadded.counts.tokens == padded.counts.tokens);
  CHECK(unpadded.counts.denominators == padded.counts.denominators);
  CHECK(unpadded.mlm == doctest::Approx(padded.mlm).epsilon(1e-5));
  CHECK(unpadded.nsp == doctest::Approx(padded.nsp).epsilon(1e-5));
  // Where the stream's attention is flash's variable-length kernel, a batch stays one pass (the CUDA case below).
  CHECK(bk::stream_attention_unpadded(at::Device("cuda:0"), at::kBFloat16, 64));
  CHECK(bk::stream_attention_unpadded(at::Device("cuda:0"), at::kHalf, 256));
  CHECK_FALSE(bk::stream_attention_unpadded(at::Device("cuda:0"), at::kFloat, 64));
  CHECK_FALSE(bk::stream_attention_unpadded(at::Device("cuda:0"), at::kBFloat16, 260));
  CHECK_FALSE(bk::stream_attention_unpadded(at::Device("cuda:0"), at::kBFloat16, 36));
  CHECK_FALSE(bk::stream_attention_unpadded(cpu, at::kBFloat16, 64));
}

TEST_CASE("cuda: a bin4 batch is one pass with unpadded attention in bf16, with the loss of a pass per bin") {
  if (!bk_test::cuda_case_runs()) return;
  ScratchDir dir;
  const std::string bins = make_bin4(dir, {60, 30, 20, 50}, 1);
  const at::Device cuda("cuda");
  const FirstStep whole = first_step(dir, bins, true, cuda, at::kBFloat16);
  const FirstStep per_bin = first_step(dir, bins, false, cuda, at::kBFloat16);
  CHECK(whole.counts.micro_batches == 1);
  CHECK(per_bin.counts.micro_batches == 4);
  // In fp32 the stream's attention is the exact padded one: the bins keep their passes.
  CHECK(first_step(dir, bins, true, cuda, at::kFloat).counts.micro_batches == 4);
  CHECK(whole.counts.tokens == per_bin.counts.tokens);
  CHECK(whole.counts.denominators == per_bin.counts.denominators);
  // bf16 arithmetic in different batch shapes: equal to its rounding.
  CHECK(whole.mlm == doctest::Approx(per_bin.mlm).epsilon(1e-2));
  CHECK(whole.nsp == doctest::Approx(per_bin.nsp).epsilon(1e-2));
}
