// bert-train's training loop, behind the thin main in tools/bert-train.cpp.
//
// One optimizer step, on every rank:
//   1. take `gradient_accumulation_steps` micro-batches from the loader (train_batch_size samples in all);
//   2. count their masked positions and sequences and sum the counts over the ranks, so that the loss is the
//      mean over the GLOBAL batch: each micro-batch contributes sum(CE) / global count, and gradients are summed
//      (not averaged) across ranks. N ranks with batch b then compute exactly what one rank with batch N*b does;
//   3. forward (bf16 autocast when asked) and backward per micro-batch; the gradient all-reduce runs in buckets
//      overlapped with the last micro-batch's backward (GradientSynchronizer);
//   4. fp16: unscale and skip the step on overflow; a NaN/inf loss or a collapsed loss scale stops the run
//      (bk::Error) before anything is saved, so the last checkpoint stays the last good one;
//   5. optimizer step with the scheduled learning rate; log; checkpoint every checkpoint_every steps.
// Only rank 0 writes logs and checkpoints.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bk {

struct TrainerConfig {
  std::string config_path;
  std::vector<std::string> inputs;
  std::string output_dir;
  int64_t train_batch_size = 0;         // samples per rank per optimizer step (split over the accumulation steps)
  int64_t max_steps = 0;
  double learning_rate = 1e-4;
  std::string optimizer = "lamb";       // lamb | adamw
  std::string precision = "fp32";       // fp32 | bf16 | fp16
  uint64_t seed = 12345;
  std::string log_file;                 // JSON lines; empty = OUTPUT_DIR/log.jsonl
  double warmup_proportion = 0.01;
  std::string lr_decay = "poly";        // poly | linear
  double poly_power = 0.5;
  int64_t gradient_accumulation_steps = 1;
  int64_t max_predictions = 20;
  double weight_decay = 0.01;
  double max_grad_norm = 1.0;
  int64_t checkpoint_every = 0;         // 0 = only at the end
  int keep_checkpoints = 3;
  bool resume = false;
  std::string init_checkpoint;
  std::string device = "cpu";           // cpu | cuda
  int64_t log_every = 1;
  int64_t throughput_warmup_steps = 0;  // steps left out of the throughput figure
  int64_t stop_after = 0;               // stop (with a checkpoint) after this many steps of this run; 0 = never
  bool tensorboard = true;
  bool tf32 = false;
  bool no_sync_gradients = false;
  bool local_clip = false;
  std::string lr_scaling = "none";      // none | linear | sqrt
  int dist_timeout_seconds = 300;
  int prefetch = 4;
  bool global_data_order = false;       // see DataLoaderConfig::global_order
  double peak_tflops = 0;               // for MFU; 0 = known GPUs only
  bool quiet = false;
};

// Runs training to max_steps (or stop_after); throws bk::Error on bad input or a diverging run.
void run_training(const TrainerConfig& config);

}  // namespace bk
