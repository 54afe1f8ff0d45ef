#include "train/loop/run_setup.h"

#include "model_config/bert_config.h"
#include "ckpt/checkpoint_path.h"
#include "ckpt/tokenizer_files.h"
#include "util/error.h"
#include "util/tool_name.h"
#include "device/device.h"
#include "launch/launcher.h"
#include "model/kernel_switches.h"
#include "train/loop/loop_run.h"
#include "train/loop/run_plan.h"
#include "train/loop/run_resume.h"
#include "train/loop/run_save.h"
#include "train/loop/run_update.h"
#include "train/loop/train_state.h"
#include "io/input.h"
#include "util/json_read.h"

#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <torch/nn/module.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

namespace bk {

namespace fs = std::filesystem;

namespace {

// The process: its device (with CUDA's runtime settings) and NUMA binding, precision, process group, TF32 and the
// kernel switches.
void start_process(LoopRun& run, const DistEnv& env) {
  const LoopConfig& cfg = run.cfg;
  run.device = choose_device(cfg.device, env);
  set_up_cuda_runtime(run.device);
  // --numa-bind under srun, mpirun or torchrun (bert-train's own --nproc-per-node binds its workers itself and does
  // not pass the flag on): this process binds itself, to its GPU's NUMA node where the system tells it.
  if (cfg.launch.numa_bind) {
    const int threads = bind_self_to_numa(env.local_rank, env.local_world_size, cuda_device_numa_node(run.device));
    if (threads > 0 && std::getenv("OMP_NUM_THREADS") == nullptr) at::set_num_threads(threads);
  }
  const ChosenPrecision chosen = choose_precision(cfg.precision, run.device, !cfg.quiet && env.rank == 0);
  run.precision = chosen.precision;
  run.precision_reason = chosen.reason;
  run.dist = Dist::create(env, run.device, std::chrono::seconds(cfg.launch.dist_timeout_seconds));
  if (cfg.tf32) {
    at::globalContext().setAllowTF32CuBLAS(true);
    at::globalContext().setAllowTF32CuDNN(true);
  }
  if ((cfg.fused_kernels == FusedKernels::on || cfg.fused_kernels == FusedKernels::experimental) &&
      !fused_kernels_built())
    usage_fail("--fused-kernels {}: this build has no CUDA kernels (nvcc was not found when it was configured)",
               choice_name(kFusedKernels, cfg.fused_kernels));
  set_fused_kernels(cfg.fused_kernels != FusedKernels::off);  // auto: on where the build has the kernels
  set_experimental_kernels(cfg.fused_kernels == FusedKernels::experimental);
}

// The peak learning rate and the warm-up: --learning-rate (and --warmup-proportion); else, resuming, what the run
// was started with (trainer_state.json), so that a resumed run never changes them; else the task's recipe for its
// model, optimizer and batch (TrainingTask::default_learning_rate): the global batch, or each worker's own with
// --no-sync-gradients, and whether the run continues trained weights (--init-checkpoint without --init-optimizer,
// of a model from elsewhere: a published model on new text, not the next phase of a bert-train run, whose
// checkpoints hold trainer_state.json). The recipe is already for that batch,
// so --lr-scaling (which scales a given rate by the workers) needs a given rate.
bool is_training_checkpoint(const std::string& init_checkpoint) {
  std::error_code ec;
  return fs::exists(fs::path(resolve_checkpoint(init_checkpoint)) / "trainer_state.json", ec);
}

void choose_learning_rate(LoopRun& run) {
  const LoopConfig& cfg = run.cfg;
  std::optional<TrainingState> resumed;
  if (cfg.resume)
    if (const auto latest = latest_checkpoint(cfg.output_dir)) {
      const fs::path state = fs::path(*latest) / "trainer_state.json";
      resumed = TrainingState::from_json(parse_json(read_file(state.string()), state.string()), state.string());
    }
  run.warmup_proportion = cfg.warmup_proportion.value_or(
      resumed && resumed->warmup_proportion >= 0 ? resumed->warmup_proportion : kDefaultWarmupProportion);
  if (cfg.learning_rate) {
    run.learning_rate = *cfg.learning_rate;
    run.learning_rate_source = "--learning-rate";
    return;
  }
  if (resumed && resumed->learning_rate > 0) {
    run.learning_rate = resumed->learning_rate;
    run.learning_rate_source = "the resumed run's, from its trainer_state.json";
    return;
  }
  if (cfg.lr_scaling != LrScaling::none)
    usage_fail("--lr-scaling scales a given --learning-rate; the default rate is already the recipe's for the batch");
  const bool continues_trained_weights = !cfg.init_checkpoint.empty() && !cfg.init_optimizer &&
                                         !is_training_checkpoint(cfg.init_checkpoint);
  const LearningRate lr = run.task->default_learning_rate(
      cfg.optimizer, run.synced() || run.dist->world() == 1 ? run.global_batch() : cfg.train_batch_size,
      continues_trained_weights);
  run.learning_rate = lr.value;
  run.learning_rate_source = lr.source;
  if (!cfg.warmup_proportion) run.warmup_proportion = lr.warmup_proportion;
}

// The task: the same initial weights on every rank (seeded here, then rank 0's broadcast in make_update), its
// data, and --init-checkpoint's weights.
void start_task(LoopRun& run) {
  const LoopConfig& cfg = run.cfg;
  at::manual_seed(cfg.seed);
  TaskContext context;
  context.device = run.device;
  context.rank = run.dist->rank();
  context.world = run.dist->world();
  context.micro_batch_size = cfg.micro_batch_size();
  context.accumulation = cfg.gradient_accumulation_steps;
  context.quiet = cfg.quiet;
  context.seed = cfg.seed;
  // At least a step's micro-batches ready ahead, so a step never waits for the loader between its passes (0 keeps
  // its meaning: batches made inside the loop, no thread).
  context.prefetch = cfg.prefetch == 0 ? 0 : std::max<int>(cfg.prefetch, static_cast<int>(cfg.gradient_accumulation_steps));
  context.pin_memory = run.device.is_cuda();
  context.dist = run.dist.get();
  context.independent_workers = cfg.no_sync_gradients;
  context.fixed_shapes = cfg.cuda_graphs;
  context.compute_dtype = compute_dtype(run.precision);
  run.task->start(context);
  if (!cfg.init_checkpoint.empty()) run.task->load_init_checkpoint(cfg.init_checkpoint);
  run.task->model().to(run.device);
  run.task->model().train();
  choose_learning_rate(run);
}

// The vocabularies the run joins (tok/vocab_stamp.h): the data's and --vocab's against the checkpoint it starts
// from, the data's against --vocab's (whose casing the data decides). Every rank checks, so that all fail alike,
// before anything is written.
void check_vocabularies(const LoopConfig& cfg, const RunStart& start, bool main) {
  if (cfg.allow_vocab_mismatch && !main) return;  // nothing to refuse: rank 0 alone says the warning
  std::optional<StampedVocab> data;
  if (auto stamp = parse_vocab_stamp(cfg.data_vocab_stamp)) data = StampedVocab{*stamp, cfg.data_vocab_source};
  std::optional<StampedVocab> given;
  if (!cfg.vocab.empty())
    given = vocab_file_stamp(cfg.vocab, data ? std::optional<bool>(data->stamp.lower_case) : std::nullopt);
  const auto from = start.checkpoint.empty() ? std::nullopt : checkpoint_vocab_stamp(start.checkpoint);
  if (data && given) check_same_vocabulary(*data, *given, false, cfg.allow_vocab_mismatch);
  if (data && from) check_same_vocabulary(*data, *from, true, cfg.allow_vocab_mismatch);
  if (given && from && !data) check_same_vocabulary(*given, *from, false, cfg.allow_vocab_mismatch);
}

// Rank 0: the tokenizer every checkpoint carries (the run's --vocab, else the one beside the checkpoint it starts
// from, cased as the data says), read before anything is written so that --dry-run fails on a vocabulary the run
// could not use.
void read_tokenizer(LoopRun& run, const RunStart& start) {
  check_vocabularies(run.cfg, start, run.dist->is_main());
  if (!run.dist->is_main()) return;
  const BertConfig model_config = run.task->model_config();
  const auto data = parse_vocab_stamp(run.cfg.data_vocab_stamp);
  run.tokenizer = training_tokenizer_files(run.cfg.vocab, start.checkpoint, model_config.vocab_size,
                                           model_config.max_position_embeddings,
                                           data ? std::optional<bool>(data->lower_case) : std::nullopt);
}

MlperfRunHeader mlperf_header(const LoopRun& run) {
  const LoopConfig& cfg = run.cfg;
  MlperfRunHeader h;
  h.benchmark = cfg.mlperf_benchmark;
  h.platform = fmt::format("{}x{}", run.dist->world(), run.device.is_cuda() ? "GPU" : "CPU");
  h.seed = cfg.seed;
  h.global_batch = run.global_batch();
  h.accumulation = cfg.gradient_accumulation_steps;
  h.optimizer = choice_name(kOptimizerKinds, cfg.optimizer);
  h.learning_rate = run.learning_rate * run.lr_scale;
  h.epsilon = run.optimizer->config().eps;
  h.beta1 = run.optimizer->config().beta1;
  h.beta2 = run.optimizer->config().beta2;
  h.weight_decay = cfg.weight_decay;
  h.poly_power = cfg.poly_power;
  h.training_steps = cfg.max_steps;
  h.warmup_steps = static_cast<int64_t>(run.schedule.warmup_proportion * static_cast<double>(cfg.max_steps));
  h.eval_samples = run.task->evaluation_samples();
  h.first_sample = run.samples_through(run.step);
  h.init_start_ms = run.init_start_ms;
  return h;
}

// What the run writes as it goes: the banner, log.jsonl and tensorboard/ (rank 0), the MLPerf log, and the CUDA
// graph a step is captured in.
void open_outputs(LoopRun& run, const RunStart& start) {
  const LoopConfig& cfg = run.cfg;
  const bool main = run.dist->is_main();
  if (main && !cfg.quiet)
    for (const auto& line : run_plan_lines(run, start)) std::fprintf(stderr, "%s: %s\n", tool_name().c_str(), line.c_str());
  if (main) {
    fs::create_directories(cfg.output_dir);
    TrainLogOptions lo;
    lo.log_file = cfg.log_file.empty() ? (fs::path(cfg.output_dir) / "log.jsonl").string() : cfg.log_file;
    if (cfg.tensorboard) lo.tensorboard_dir = (fs::path(cfg.output_dir) / "tensorboard").string();
    lo.append = cfg.resume;  // a resumed run continues the same log; a new run never appends to an old one
    if (cfg.resume) lo.resumed_step = start.step;
    // A new run got here with no checkpoint in the directory (claim_for_new_run), so its own log.jsonl is that of
    // a run that failed or was stopped before its first checkpoint, or whose checkpoints --force removed: replaced,
    // so the same command can simply be run again. A --log-file of the user's is replaced only under --force.
    lo.overwrite = cfg.force || (!cfg.resume && cfg.log_file.empty());
    if (lo.overwrite && !cfg.force && !cfg.quiet && fs::exists(lo.log_file))
      std::fprintf(stderr, "%s: %s: replacing the log of an earlier run that left no checkpoint\n",
                   tool_name().c_str(), lo.log_file.c_str());
    lo.quiet = cfg.quiet;
    lo.total_steps = cfg.max_steps;
    lo.human_every_seconds = cfg.log_seconds;
    if (run.precision != Precision::fp16) lo.human_hidden = {"loss_scale", "skipped_steps"};  // fp16's alone
    run.log = std::make_unique<TrainLog>(lo);
    run.log->header(run.step, run_header_json(run, start));
  }
  run.eval_every = cfg.eval_every_samples > 0
                       ? (cfg.eval_every_samples + run.global_batch() - 1) / run.global_batch()
                       : cfg.eval_every;
  if (main && !cfg.mlperf_log.empty()) {
    run.mlperf = std::make_unique<MlperfLog>(cfg.mlperf_log, tool_name());
    write_run_header(*run.mlperf, mlperf_header(run));
  }
  if (cfg.cuda_graphs) run.graph = std::make_unique<GraphedStep>(run.device, cfg.cuda_graph_eager_steps);
}

}  // namespace

bool setup_run(LoopRun& run) {
  run.init_start_ms = mlperf_now_ms();
  start_process(run, detect_dist_env());
  start_task(run);
  make_update(run);
  // Dropout differs per rank (as NVIDIA seeds seed + rank); the weights above do not.
  at::manual_seed(run.cfg.seed + static_cast<uint64_t>(run.dist->rank()));
  RunStart start = find_start(run);
  read_tokenizer(run, start);
  if (run.cfg.dry_run) {
    if (run.dist->is_main())
      for (const auto& line : run_plan_lines(run, start)) std::printf("%s\n", line.c_str());
    return false;
  }
  if (!claim_and_restore(run, start)) return false;
  note_where_to_continue(run);  // from here an interrupt says where the run stands
  open_outputs(run, start);
  return true;
}

}  // namespace bk
