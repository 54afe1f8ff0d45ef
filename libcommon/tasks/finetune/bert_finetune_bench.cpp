#include "tasks/finetune/bert_finetune_bench.h"

#include "util/error.h"

#include "launch/dist_env.h"
#include "tasks/finetune/finetuned_model.h"
#include "device/device.h"
#include "device/precision.h"
#include "model/finetune_models.h"

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>
#include <torch/cuda.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>

namespace bk {

namespace {

// The value below which `q` of the sorted samples lie (linear interpolation between ranks, numpy's default).
double percentile(const std::vector<double>& sorted, double q) {
  const double rank = q * static_cast<double>(sorted.size() - 1);
  const auto low = static_cast<size_t>(std::floor(rank));
  const size_t high = std::min(low + 1, sorted.size() - 1);
  return sorted[low] + (sorted[high] - sorted[low]) * (rank - static_cast<double>(low));
}

}  // namespace

void run_bert_finetune_bench(const FinetuneBenchConfig& config) {
  config.validate();
  const at::Device device = choose_device(config.device, detect_dist_env());
  set_up_cuda_runtime(device);
  const ChosenPrecision chosen = choose_precision(config.precision, device);
  const Precision precision = chosen.precision;
  FinetunedModel model = load_finetuned_model(config.checkpoint, config.task, device);
  const int64_t t = config.seq_length > 0 ? config.seq_length : model.max_seq_length;
  at::manual_seed(config.seed);
  for (int64_t b : config.batch_sizes) {
    try {
      const auto options = at::TensorOptions().dtype(at::kLong).device(device);
      const at::Tensor ids = at::randint(1, model.base->config().vocab_size, {b, t}, options);
      const at::Tensor segments = at::cat({at::zeros({b, t / 2}, options), at::ones({b, t - t / 2}, options)}, 1);
      const at::Tensor mask = at::ones({b, t}, options);
      auto pass = [&] {
        AutocastScope autocast(precision, device);
        if (model.qa) model.spans(ids, segments, mask);
        else model.classes(ids, segments, mask);
        if (device.is_cuda()) torch::cuda::synchronize();
      };
      for (int64_t i = 0; i < config.warmup; ++i) pass();
      std::vector<double> ms;
      for (int64_t i = 0; i < config.iterations; ++i) {
        const auto start = std::chrono::steady_clock::now();
        pass();
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
      }
      double total = 0;
      for (double v : ms) total += v;
      std::sort(ms.begin(), ms.end());
      nlohmann::ordered_json line;
      line["task"] = model.info->name;
      line["batch_size"] = b;
      line["seq_length"] = t;
      line["precision"] = choice_name(kPrecisions, precision);
      line["precision_reason"] = chosen.reason;
      line["device"] = device.str();
      line["iterations"] = config.iterations;
      line["sequences_per_second"] = static_cast<double>(b * config.iterations) / (total / 1000);
      line["latency_ms"] = {{"p50", percentile(ms, 0.50)}, {"p90", percentile(ms, 0.90)},
                            {"p95", percentile(ms, 0.95)}, {"p99", percentile(ms, 0.99)}, {"mean", total / static_cast<double>(ms.size())}};
      std::cout << line.dump() << std::endl;
    } catch (const c10::Error& e) {  // an allocator's or a kernel's error: named with the size that asked for it
      fail("--batch-sizes {} (sequences of {}): {}", b, t, library_message(e));
    }
  }
}

}  // namespace bk
