// bert-finetune bench: inference speed of a fine-tuned model, as NVIDIA's inference tables report it: per batch
// size, sequences per second and latency percentiles of one forward pass (p50, p90, p95, p99), warm-up excluded,
// one JSON line each on stdout. Inputs are full-length sequences of random ids (the model does the same work for
// any ids). The config and its flags are torch-free (bert_finetune_bench_options.cpp).
#pragma once

#include "device/precision_kind.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace bk {

class Options;

struct FinetuneBenchConfig {
  std::string checkpoint;
  std::string task;
  std::vector<int64_t> batch_sizes = {1, 8, 32};
  int64_t seq_length = 0;        // 0: the checkpoint's max_seq_length (task.json), else max_position_embeddings
  std::optional<Precision> precision;  // --precision; unset: auto (device/precision.h's choose_precision)
  std::string device = "cpu";
  int64_t iterations = 20;       // timed forward passes per batch size
  int64_t warmup = 3;            // untimed passes before them
  uint64_t seed = 12345;
  bool quiet = false;

  void validate() const;
};

void add_bert_finetune_bench_options(Options& options, FinetuneBenchConfig& config);

void run_bert_finetune_bench(const FinetuneBenchConfig& config);

}  // namespace bk
