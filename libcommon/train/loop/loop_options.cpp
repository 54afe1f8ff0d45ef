#include "train/loop/loop_config.h"

#include "cli/options.h"
#include "tok/vocab_stamp.h"
#include "util/error.h"

#include <fmt/format.h>

#include <cmath>

namespace bk {

namespace {

// The batch-size warm-up's flags (LoopConfig::validate).
void validate_batch_warmup(const LoopConfig& c) {
  if (c.batch_size_warmup_steps < 0)
    usage_fail("--batch-size-warmup-steps must not be negative, got {}", c.batch_size_warmup_steps);
  if (c.batch_size_warmup_steps > 0) {
    if (c.batch_size_warmup_start <= 0 || c.batch_size_warmup_start % c.micro_batch_size() != 0 ||
        c.batch_size_warmup_start > c.train_batch_size)
      usage_fail("--batch-size-warmup-start must be a multiple of the micro-batch ({} = --train-batch-size / "
                 "--gradient-accumulation-steps) up to --train-batch-size {}, got {}",
                 c.micro_batch_size(), c.train_batch_size, c.batch_size_warmup_start);
    if (c.cuda_graphs) usage_fail("--cuda-graphs: a batch-size warm-up changes the micro-batches of a step");
    if (c.eval_every_samples > 0 || !c.mlperf_log.empty())
      usage_fail("--eval-every-samples and --mlperf-log count samples at one batch size; not with "
                 "--batch-size-warmup-steps");
  } else if (c.batch_size_warmup_start > 0) {
    usage_fail("--batch-size-warmup-start needs --batch-size-warmup-steps");
  }
}

// The decay phase's flags (LoopConfig::validate); the schedule checks the rest when it is made.
void validate_schedule(const LoopConfig& c, bool steps_known) {
  if (c.lr_decay_steps < 0) usage_fail("--lr-decay-steps must not be negative, got {}", c.lr_decay_steps);
  if (c.lr_decay_steps > 0 && c.lr_decay == LrDecay::constant)
    usage_fail("--lr-decay-steps {}: --lr-decay constant has no decay phase", c.lr_decay_steps);
  if (steps_known && c.lr_decay_steps > c.max_steps)
    usage_fail("--lr-decay-steps {} exceeds --max-steps {}", c.lr_decay_steps, c.max_steps);
}

}  // namespace

void LoopConfig::validate(bool steps_known) const {
  if (output_dir.empty()) usage_fail("--output-dir must not be empty");
  if (train_batch_size <= 0 || (steps_known && max_steps <= 0))
    usage_fail("--train-batch-size and --max-steps must be positive");
  if (gradient_accumulation_steps <= 0)
    usage_fail("--gradient-accumulation-steps must be at least 1, got {}", gradient_accumulation_steps);
  if (train_batch_size % gradient_accumulation_steps != 0)
    usage_fail("--train-batch-size {} is not a multiple of --gradient-accumulation-steps {}", train_batch_size,
               gradient_accumulation_steps);
  // NaN fails every comparison, so each range is written as what passes.
  if (learning_rate && !(*learning_rate > 0 && std::isfinite(*learning_rate)))
    usage_fail("--learning-rate must be a positive number, got {}", *learning_rate);
  if (warmup_proportion && !(*warmup_proportion >= 0 && *warmup_proportion <= 1))
    usage_fail("--warmup-proportion must be in [0, 1], got {}", *warmup_proportion);
  if (!(weight_decay >= 0 && std::isfinite(weight_decay)))
    usage_fail("--weight-decay must be a number >= 0, got {}", weight_decay);
  if (max_grad_norm && !(*max_grad_norm >= 0 && std::isfinite(*max_grad_norm)))
    usage_fail("--max-grad-norm must be a number >= 0, got {}", *max_grad_norm);
  if (fully_decoupled_decay && optimizer != OptimizerKind::stableadamw)
    usage_fail("--fully-decoupled-weight-decay is StableAdamW's (--optimizer stableadamw)");
  if (log_every <= 0) usage_fail("--log-every must be positive");
  if (!(log_seconds >= 0)) usage_fail("--log-seconds must be 0 or positive, got {}", log_seconds);
  if (keep_checkpoints < 1) usage_fail("--keep-checkpoints must be at least 1");
  if (device != "cpu" && device != "cuda") usage_fail("--device must be cpu or cuda, got '{}'", device);
  if (prefetch < 0) usage_fail("--prefetch must not be negative, got {}", prefetch);
  if (init_optimizer && init_checkpoint.empty()) usage_fail("--init-optimizer needs --init-checkpoint");
  if (loss_scale < 0) usage_fail("--loss-scale must not be negative, got {}", loss_scale);
  if (loss_scale > 0 && precision != Precision::fp16) usage_fail("--loss-scale is for --precision fp16");
  validate_batch_warmup(*this);
  validate_schedule(*this, steps_known);
  if (steps_known && warmup_steps > max_steps)
    usage_fail("--warmup-steps {} exceeds --max-steps {}", warmup_steps, max_steps);
}

namespace {
void add_schedule_options(Options& options, LoopConfig& c, const LoopConfig& d);
void add_process_options(Options& options, LoopConfig& c, const LoopConfig& d);
}  // namespace

void add_loop_options(Options& options, LoopConfig& c, const LoopConfig& d, bool steps_from_data) {
  auto* batch = po::value(&c.train_batch_size)->value_name("B");
  if (d.train_batch_size > 0) batch->default_value(d.train_batch_size);
  else batch->required();
  auto* steps = po::value(&c.max_steps)->value_name("N");
  if (steps_from_data) steps->default_value(d.max_steps, "0: from the data");
  else steps->required();
  options.add()
    ("output-dir", po::value(&c.output_dir)->required()->value_name("DIR"), "checkpoints, log.jsonl and tensorboard/ go here")
    ("train-batch-size", batch, "samples per process per optimizer step (split over the accumulation steps)")
    ("max-steps", steps, "optimizer steps of the whole run")
    ("learning-rate", optional_value(c.learning_rate)->value_name("LR"),
     "peak learning rate (default: the task's recipe for the model; the start banner says which)")
    ("optimizer", choice_value("optimizer", kOptimizerKinds, c.optimizer, d.optimizer)->value_name("NAME"),
     "lamb (NVLAMB), adamw, stableadamw (torch-optimi's), acclip or madgrad")
    ("precision", choice_value("precision", kPrecisionFlags, c.precision, d.precision)->value_name("P"),
     kPrecisionHelp)
    ("tf32", po::bool_switch(&c.tf32), "allow TF32 matmuls on CUDA")
    ("fused-kernels", choice_value("fused-kernels", kFusedKernels, c.fused_kernels, d.fused_kernels)
                          ->value_name("auto|on|off|experimental"),
     "bertkit's own CUDA kernels for each layer's dropout, residual add and LayerNorm (CUDA, bf16/fp16): auto uses "
     "them where this build has them, on requires them; experimental adds those not yet measured on a GPU (the "
     "dense layers' biases in the kernels after them, bias + GELU, residual gradients summed in LayerNorm's, the "
     "masked-LM cross entropy)")
    ("cuda-graphs", po::bool_switch(&c.cuda_graphs),
     "capture a step in a CUDA graph after 3 eager ones and replay it (one CUDA process, bf16 or fp32, lamb or adamw, "
     "micro-batches of one shape)")
    ("seed", po::value(&c.seed)->default_value(d.seed)->value_name("S"), "weights, dropout, data order and dynamic masks")
    ("log-file", po::value(&c.log_file)->value_name("FILE"), "JSON lines, one per logging step (default OUTPUT_DIR/log.jsonl)")
    ("log-every", po::value(&c.log_every)->default_value(d.log_every)->value_name("N"),
     "log every N steps (the log file and TensorBoard)")
    ("log-seconds", po::value(&c.log_seconds)->default_value(d.log_seconds)->value_name("S"),
     "at most one stderr line every S seconds, with an ETA (the first, the last and evaluations always; 0: one "
     "per logged step)")
    ("no-tensorboard", po::bool_switch()->notifier([&c](bool off) { c.tensorboard = !off; }),
     "do not write OUTPUT_DIR/tensorboard/ event files")
    ("nccl-warmup", po::bool_switch(&c.nccl_warmup),
     "all-reduce buffers of the gradient buckets' sizes twice before the first step, so communicator setup and the "
     "first large collectives are not timed as training (Samsung's warm-up)")
    ("loss-scale", po::value(&c.loss_scale)->value_name("S"),
     "fp16: a fixed loss scale S (overflowing steps are skipped) instead of the dynamic one");
  add_schedule_options(options, c, d);
  options.add()
    ("gradient-accumulation-steps", po::value(&c.gradient_accumulation_steps)->default_value(d.gradient_accumulation_steps)
     ->value_name("K"), "micro-batches per step")
    ("checkpoint-every", po::value(&c.checkpoint_every)->default_value(d.checkpoint_every)->value_name("N"),
     "steps between checkpoints (0 = at the end)")
    ("keep-checkpoints", po::value(&c.keep_checkpoints)->default_value(d.keep_checkpoints)->value_name("K"),
     "keep the last K checkpoints")
    ("resume", po::bool_switch(&c.resume), "continue from OUTPUT_DIR's latest checkpoint, exactly")
    ("force", po::bool_switch(&c.force),
     "start a new run in an OUTPUT_DIR that holds an earlier run's checkpoints, removing them")
    ("init-checkpoint", po::value(&c.init_checkpoint)->value_name("DIR"), "start from these weights (every tensor must match; a fine-tuning head may be missing)")
    (kAllowVocabMismatchFlag, po::bool_switch(&c.allow_vocab_mismatch), kAllowVocabMismatchHelp)
    ("init-optimizer", po::bool_switch(&c.init_optimizer),
     "also take the optimizer's moments from --init-checkpoint (NVIDIA's phase 2), with this run's schedule")
    ("stop-after", po::value(&c.stop_after)->default_value(d.stop_after)->value_name("N"),
     "stop with a checkpoint after N steps of this run")
    ("throughput-warmup-steps", po::value(&c.throughput_warmup_steps)->default_value(d.throughput_warmup_steps)
     ->value_name("N"), "leave the first N steps out of the throughput figure")
    ("peak-tflops", po::value(&c.peak_tflops)->default_value(d.peak_tflops, default_text(d.peak_tflops))->value_name("T"),
     "device peak for MFU (default: known GPUs)");
  add_process_options(options, c, d);
}

namespace {

// The schedule's and the update's flags: warm-up, decay, weight decay, clipping.
void add_schedule_options(Options& options, LoopConfig& c, const LoopConfig& d) {
  // Unset, the warm-up is the recipe's (train/loop/learning_rate.h); a tool's own default is shown as one.
  const std::string warmup_help =
      d.warmup_proportion ? fmt::format("share of steps in linear warm-up (default {:g})", *d.warmup_proportion)
                          : "share of steps in linear warm-up (default 0.01; 0.06 continuing trained weights "
                            "without --learning-rate)";
  options.add()
    ("warmup-steps", po::value<int64_t>()->value_name("N")->notifier([&c](int64_t n) {
       if (n < 0) usage_fail("--warmup-steps must not be negative, got {}", n);
       c.warmup_steps = n;
     }), "warm-up in optimizer steps (instead of --warmup-proportion)")
    ("warmup-proportion", optional_value(c.warmup_proportion)->value_name("W"), warmup_help.c_str())
    ("lr-decay", choice_value("lr-decay", kLrDecays, c.lr_decay, d.lr_decay)->value_name("D"),
     "poly (NVIDIA's, power 0.5), linear, cosine, 1-sqrt, or constant (a stable phase alone)")
    ("lr-decay-steps", po::value(&c.lr_decay_steps)->default_value(d.lr_decay_steps, "0: all after the warm-up")
                           ->value_name("N"),
     "decay over the last N steps only, the rate at its peak from the warm-up's end until then (warm-up-stable-decay)")
    ("weight-decay", po::value(&c.weight_decay)->default_value(d.weight_decay, default_text(d.weight_decay))->value_name("WD"),
     "except biases and LayerNorm")
    ("fully-decoupled-weight-decay", po::bool_switch(&c.fully_decoupled_decay),
     "StableAdamW: decay by WD times the step's rate over the peak rate, not times the rate (optimi's decouple_lr, "
     "ModernBERT's)")
    ("max-grad-norm", optional_value(c.max_grad_norm)->value_name("N"),
     "LAMB pre-normalisation / clipping of the others' gradients (default 1; 0, off, with stableadamw)");
}


// The process side of the loop's flags: the device, how the workers share the work, the data prefetch, --dry-run,
// and the launcher's.
void add_process_options(Options& options, LoopConfig& c, const LoopConfig& d) {
  options.add()
    ("device", po::value(&c.device)->default_value(d.device)->value_name("D"), "cpu or cuda (LOCAL_RANK picks the GPU)")
    ("no-sync-gradients", po::bool_switch(&c.no_sync_gradients), "independent workers; the best is kept at the end")
    ("local-clip", po::bool_switch(&c.local_clip), "clip each worker's gradients before the all-reduce")
    ("allreduce-dtype", choice_value("allreduce-dtype", kWireDtypes, c.allreduce_dtype, d.allreduce_dtype)->value_name("T"),
     "fp32, bf16 or fp16: the dtype gradients are all-reduced in (bf16/fp16 halve the bytes sent)")
    ("lr-scaling", choice_value("lr-scaling", kLrScalings, c.lr_scaling, d.lr_scaling)->value_name("S"),
     "scale the rate with workers: none, linear, sqrt")
    ("prefetch", po::value(&c.prefetch)->default_value(d.prefetch)->value_name("N"),
     "micro-batches prepared ahead by a background thread")
    ("dry-run", po::bool_switch(&c.dry_run),
     "resolve the config, data, processes and schedule, print the plan on stdout and exit; nothing is written");
  add_launcher_options(options, c.launch);
}

}  // namespace

}  // namespace bk
