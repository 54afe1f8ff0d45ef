// The settings of the training loop (loop.h) that every task shares, with their defaults, their checks and their
// command-line flags (declared once here for every tool built on the loop). Torch-free.
#pragma once

#include "device/precision_kind.h"
#include "launch/launcher.h"
#include "util/batch_schedule.h"
#include "model/kernel_switches.h"
#include "train/optim/optimizer_kind.h"
#include "train/optim/schedule.h"

#include <cstdint>
#include <optional>
#include <string>

namespace bk {

class Options;

enum class LrScaling { none, linear, sqrt };
inline constexpr Choice<LrScaling> kLrScalings[] = {
    {"none", LrScaling::none}, {"linear", LrScaling::linear}, {"sqrt", LrScaling::sqrt}};
// The dtype gradients travel in between ranks (--allreduce-dtype); bf16 and fp16 halve the bytes sent.
enum class WireDtype { fp32, bf16, fp16 };
inline constexpr Choice<WireDtype> kWireDtypes[] = {
    {"fp32", WireDtype::fp32}, {"bf16", WireDtype::bf16}, {"fp16", WireDtype::fp16}};

struct LoopConfig {
  std::string output_dir;
  int64_t train_batch_size = 0;         // samples per rank per optimizer step (split over the accumulation steps)
  int64_t max_steps = 0;
  std::optional<double> learning_rate;  // unset: the task's recipe (TrainingTask::default_learning_rate), chosen by setup_run
  OptimizerKind optimizer = OptimizerKind::lamb;
  std::optional<Precision> precision;  // --precision; unset: auto (device/precision.h's choose_precision)
  uint64_t seed = 12345;
  std::string log_file;                 // JSON lines; empty = OUTPUT_DIR/log.jsonl
  // Unset: the recipe's (TrainingTask::default_learning_rate), kDefaultWarmupProportion with --learning-rate, the
  // resumed run's on --resume.
  std::optional<double> warmup_proportion;
  LrDecay lr_decay = LrDecay::poly;
  int64_t lr_decay_steps = 0;           // > 0: the decay takes the last N steps, the rate at its peak before them
  double poly_power = 0.5;
  int64_t gradient_accumulation_steps = 1;
  // Batch-size warm-up (bert-train): the batch per process starts at batch_size_warmup_start samples (a multiple of
  // the micro-batch) and rises linearly, in whole micro-batches, to train_batch_size over this many steps.
  int64_t batch_size_warmup_steps = 0;
  int64_t batch_size_warmup_start = 0;
  double weight_decay = 0.01;
  bool fully_decoupled_decay = false;   // StableAdamW: decay by rate / peak rate (optimizer.h)
  std::optional<double> max_grad_norm;  // unset: grad_clip_norm()'s default
  int64_t checkpoint_every = 0;         // 0 = only at the end
  int keep_checkpoints = 3;
  bool resume = false;
  bool force = false;                   // a new run in a directory with an earlier run's checkpoints removes them
  std::string init_checkpoint;
  std::string vocab;  // the tokenizer copied into every checkpoint (empty: the one beside the checkpoint started from)
  std::string tokenizer;  // --tokenizer: a byte-level BPE one instead of --vocab (resolved into vocab before the run)
  // The vocabulary the training data was made with (tok/vocab_stamp.h, as the task's files record it) and the file
  // that records it; trainer_state.json keeps it. Empty: not known.
  std::string data_vocab_stamp, data_vocab_source;
  bool allow_vocab_mismatch = false;    // a warning instead of an error when the vocabularies differ
  bool init_optimizer = false;          // also the optimizer's moments from init_checkpoint (NVIDIA's phase 2)
  std::string device = "cpu";           // cpu | cuda
  int64_t log_every = 1;
  double log_seconds = 10;              // at most one stderr line per this many seconds (0: every logging step)
  int64_t throughput_warmup_steps = 0;  // steps left out of the throughput figure
  int64_t stop_after = 0;               // stop (with a checkpoint) after this many steps of this run; 0 = never
  bool tensorboard = true;
  bool tf32 = false;
  FusedKernels fused_kernels = FusedKernels::automatic;  // bertkit's CUDA kernels (model/kernel_switches.h)
  bool cuda_graphs = false;             // capture the step once and replay it (train/loop/graphed_step.h)
  int64_t cuda_graph_eager_steps = 3;   // steps run eagerly before the capture (no flag: a test's eager twin sets it
                                        // past max_steps, to compare a replayed run with everything else the same)
  bool no_sync_gradients = false;
  bool local_clip = false;
  bool nccl_warmup = false;             // all-reduces of the gradient buckets' sizes before the first step (Samsung)
  WireDtype allreduce_dtype = WireDtype::fp32;
  LrScaling lr_scaling = LrScaling::none;
  int prefetch = 4;                     // micro-batches prepared ahead by a background thread
  double peak_tflops = 0;               // for MFU; 0 = known GPUs only
  int64_t eval_every = 0;               // steps between evaluations of a task that has a held-out set; 0 = at the end
  int64_t eval_every_samples = 0;       // the same in training samples of the global batch (MLPerf's eval_iter_samples)
  std::optional<double> target_score;   // stop (with a checkpoint, exit 0) once an evaluation's score reaches it
  int64_t warmup_steps = -1;            // absolute warm-up steps (instead of warmup_proportion); -1 = unset
  double loss_scale = 0;                // fp16: a fixed loss scale; 0 = dynamic
  std::string mlperf_log;               // MLCommons :::MLLOG lines to this file (rank 0)
  std::string mlperf_benchmark;         // its submission_benchmark ("bert")
  bool keep_best = false;               // keep the model of the best evaluation score in OUTPUT_DIR/best
  LaunchOptions launch;                 // --nproc-per-node & co., and --dist-timeout for the process group
  bool dry_run = false;                 // resolve everything, print the plan, write nothing
  bool quiet = false;

  // bk::UsageError for a value no run can use (the names in the messages are the flags'). Without steps_known
  // (--max-steps still to be derived from the data), the step counts are left for a second call.
  void validate(bool steps_known = true) const;
  int64_t micro_batch_size() const { return train_batch_size / gradient_accumulation_steps; }
  // The micro-batches each step takes (batch_schedule.h).
  BatchSchedule batch_schedule() const {
    if (batch_size_warmup_steps <= 0) return {gradient_accumulation_steps};
    return {gradient_accumulation_steps, batch_size_warmup_start / micro_batch_size(), batch_size_warmup_steps};
  }
  // --max-grad-norm, else 1 (LAMB's pre-normalisation, the others' clipping), 0 (off) for StableAdamW, whose update
  // clipping takes its place (ModernBERT trains without gradient clipping).
  double grad_clip_norm() const {
    return max_grad_norm.value_or(optimizer == OptimizerKind::stableadamw ? 0.0 : 1.0);
  }
};

// Declares the loop's flags (--output-dir ... --prefetch, and the launcher's) bound to `config`, each default taken
// from `defaults` (a tool's own LoopConfig: fine-tuning starts from other values than pretraining). A batch size
// or step count whose default is 0 is a required flag; `steps_from_data`: --max-steps is optional (0 = derived).
void add_loop_options(Options& options, LoopConfig& config, const LoopConfig& defaults = LoopConfig(),
                      bool steps_from_data = false);


}  // namespace bk
