#include "launch/launcher.h"
#include "model/fused_layer_norm.h"
#include "train/dist/dist_buckets.h"
#include "train/loop/checkpoint.h"
#include "ckpt/checkpoint_path.h"
#include "train/loop/loop_run.h"
#include "train/loop/run_plan.h"
#include "train/loop/train_state.h"
#include "train/optim/make_optimizer.h"

#include "cli/run_tool.h"
#include "io/input.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <torch/nn/module.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

namespace bk {

namespace fs = std::filesystem;

namespace {

std::vector<at::Tensor> parameter_tensors(const Optimizer& optimizer) {
  std::vector<at::Tensor> out;
  for (const auto& [name, t] : optimizer.params()) out.push_back(t);
  return out;
}

TrainingState restore_run(LoopRun& run, const std::string& dir) {
  Checkpoint ckpt = load_checkpoint(dir);
  run.task->load_model_state(ckpt.model, dir + "/model.safetensors");
  if (ckpt.optimizer.empty()) fail("{}: no optimizer.safetensors; --resume needs a checkpoint {} wrote", dir, tool_name());
  run.optimizer->load_state(ckpt.optimizer);
  run.scaler->load_state(ckpt.optimizer);
  const TrainingState state = TrainingState::from_json(ckpt.state, dir + "/trainer_state.json");
  if (state.world_size != run.dist->world())
    fail("{}: written by a run of {} processes, this one has {}; resume with the same world size", dir,
         state.world_size, run.dist->world());
  run.step = state.step;
  run.micro_batch = state.micro_batch;
  run.schedule_offset = state.schedule_offset;
  run.task->restore_data_position(state.data_position);
  restore_generator_states(state.generators, run.device);
  return state;
}

// The step a checkpoint directory (step-NNNNNNNN) holds, from its trainer_state.json; for --dry-run, which reads
// nothing else of it.
int64_t checkpoint_step(const std::string& dir) {
  const std::string path = dir + "/trainer_state.json";
  return TrainingState::from_json(nlohmann::json::parse(read_file(path), nullptr, false), path).step;
}

// NVIDIA's phase 2: the optimizer's moments (and its step count, which bias correction goes on from) from the
// --init-checkpoint, with this run's own schedule.
void init_optimizer(LoopRun& run) {
  const std::string& dir = run.cfg.init_checkpoint;
  Checkpoint ckpt = load_checkpoint(dir);
  if (ckpt.optimizer.empty())
    fail("{}: no optimizer.safetensors: --init-optimizer needs a checkpoint that {} wrote", dir, tool_name());
  const TrainingState state = TrainingState::from_json(ckpt.state, dir + "/trainer_state.json");
  if (!state.optimizer.empty() && state.optimizer != run.cfg.optimizer)
    fail("{}: holds {} state, and this run's --optimizer is {}", dir, state.optimizer, run.cfg.optimizer);
  try {
    run.optimizer->load_state(ckpt.optimizer);
  } catch (const Error& e) {
    fail("{}/optimizer.safetensors: {}", dir, e.what());
  }
  run.schedule_offset = run.optimizer->steps();
}

// Samsung's NCCL warm-up: every gradient bucket's all-reduce, twice, on zeros of its size and wire dtype, so the
// communicators and their buffers exist before the first step is timed. Changes no value.
void warm_up_collectives(LoopRun& run, const std::vector<at::Tensor>& params) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<BucketSlot> slots;
  for (const auto& p : params) {
    const at::ScalarType dtype = run.allreduce_wire == at::ScalarType::Undefined ? p.scalar_type() : run.allreduce_wire;
    slots.push_back({static_cast<size_t>(p.numel()) * c10::elementSize(dtype), static_cast<int>(dtype)});
  }
  const auto buckets = plan_buckets(slots, kDefaultBucketBytes);
  for (int round = 0; round < 2; ++round)
    for (const auto& bucket : buckets) {
      int64_t numel = 0;
      for (size_t i : bucket) numel += params[i].numel();
      at::Tensor zeros = at::zeros({numel}, at::TensorOptions()
                                                .dtype(static_cast<at::ScalarType>(slots[bucket.front()].kind))
                                                .device(run.device));
      run.dist->allreduce(zeros);
    }
  run.dist->barrier();
  if (run.dist->is_main() && !run.cfg.quiet)
    std::fprintf(stderr, "%s: --nccl-warmup: %zu bucket all-reduces twice in %.2f s\n", tool_name().c_str(),
                 buckets.size(), std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

// --cuda-graphs: what a captured step needs (graphed_step.h), checked before anything runs; the checks that the CPU
// can reach come first.
void check_cuda_graphs(const LoopRun& run) {
  if (run.dist->world() > 1)
    usage_fail("--cuda-graphs: one process only (the gradients' all-reduce is not captured)");
  if (run.precision == Precision::fp16)
    usage_fail("--cuda-graphs: bf16 or fp32 (fp16's loss scaling decides on the host whether a step updates)");
  if (!run.optimizer->capturable())
    usage_fail("--cuda-graphs: --optimizer {} takes its step's scalars from the host; use lamb or adamw",
               run.cfg.optimizer);
  if (const std::string why = run.task->cuda_graphs_unsupported(); !why.empty()) usage_fail("--cuda-graphs: {}", why);
  if (!run.device.is_cuda()) usage_fail("--cuda-graphs needs --device cuda");
  if (!cuda_graphs_built())
    usage_fail("--cuda-graphs: this build has no CUDA graphs (the CUDA toolkit was not found when it was configured)");
}

}  // namespace

bool setup_run(LoopRun& run) {
  run.init_start_ms = mlperf_now_ms();
  const LoopConfig& cfg = run.cfg;
  TrainingTask& task = *run.task;
  DistEnv env = detect_dist_env();
  run.device = pick_device(cfg.device, env);
  // --numa-bind under srun, mpirun or torchrun (bert-train's own --nproc-per-node binds its workers itself and does
  // not pass the flag on): this process binds itself, to its GPU's NUMA node where the system tells it.
  if (cfg.launch.numa_bind) {
    const int threads = bind_self_to_numa(env.local_rank, env.local_world_size, cuda_device_numa_node(run.device));
    if (threads > 0 && std::getenv("OMP_NUM_THREADS") == nullptr) at::set_num_threads(threads);
  }
  run.precision = parse_precision(cfg.precision, run.device);
  run.dist = Dist::create(env, run.device, std::chrono::seconds(cfg.launch.dist_timeout_seconds));
  const int world = run.dist->world();
  if (cfg.tf32) {
    at::globalContext().setAllowTF32CuBLAS(true);
    at::globalContext().setAllowTF32CuDNN(true);
  }
  if ((cfg.fused_kernels == "on" || cfg.fused_kernels == "experimental") && !fused_kernels_built())
    usage_fail("--fused-kernels {}: this build has no CUDA kernels (nvcc was not found when it was configured)",
               cfg.fused_kernels);
  set_fused_kernels(cfg.fused_kernels != "off");  // auto: on where the build has the kernels
  set_experimental_kernels(cfg.fused_kernels == "experimental");

  // The model: the same initial weights on every rank (seeded, then rank 0's broadcast).
  at::manual_seed(cfg.seed);
  TaskContext context;
  context.device = run.device;
  context.rank = run.dist->rank();
  context.world = world;
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
  context.compute_dtype = run.precision == Precision::bf16   ? at::kBFloat16
                          : run.precision == Precision::fp16 ? at::kHalf
                                                             : at::kFloat;
  task.start(context);
  if (!cfg.init_checkpoint.empty()) task.load_init_checkpoint(cfg.init_checkpoint);
  task.model().to(run.device);
  task.model().train();

  OptimizerConfig oc;
  oc.kind = cfg.optimizer;
  oc.weight_decay = cfg.weight_decay;
  oc.max_grad_norm = cfg.max_grad_norm;
  // AdamW, and LAMB's Adam half, by torch's fused kernels (CUDA and CPU builds): one pass over each parameter's
  // state, the gradients read in place; on BERT-base's parameters on this project's CPU AdamW's step takes 2.8-3.4x
  // less time than its multi-tensor passes and LAMB's 1.8x less (bench/optimizer.sh).
  oc.fused = true;
  if (cfg.optimizer == "acclip") {  // the published defaults
    oc.beta2 = 0.99;
    oc.eps = 1e-5;
  }
  run.optimizer = make_optimizer(task.parameters(), oc);
  if (cfg.init_optimizer) init_optimizer(run);
  std::vector<at::Tensor> params = parameter_tensors(*run.optimizer);
  run.dist->broadcast_parameters(params);
  if (cfg.allreduce_dtype == "bf16") run.allreduce_wire = at::kBFloat16;
  if (cfg.allreduce_dtype == "fp16") run.allreduce_wire = at::kHalf;
  if (!cfg.no_sync_gradients && !cfg.local_clip && world > 1)
    run.sync = std::make_unique<GradientSynchronizer>(*run.dist, params, /*average=*/false, kDefaultBucketBytes,
                                                      run.allreduce_wire);
  if (cfg.nccl_warmup && world > 1 && !cfg.no_sync_gradients) warm_up_collectives(run, params);

  if (cfg.cuda_graphs) check_cuda_graphs(run);

  LossScalerConfig sc = cfg.loss_scale > 0 ? LossScalerConfig::fixed(cfg.loss_scale) : LossScalerConfig();
  sc.enabled = run.precision == Precision::fp16;
  run.scaler = std::make_unique<LossScaler>(sc, run.device);

  run.schedule.base_lr = cfg.learning_rate;
  run.schedule.total_steps = cfg.max_steps;
  run.schedule.warmup_proportion = cfg.warmup_steps >= 0 ? static_cast<double>(cfg.warmup_steps) /
                                                            static_cast<double>(cfg.max_steps)
                                                      : cfg.warmup_proportion;
  run.schedule.degree = cfg.poly_power;
  run.schedule.decay = parse_lr_decay(cfg.lr_decay);
  run.schedule.validate();
  if (cfg.lr_scaling == "linear") run.lr_scale = world;
  else if (cfg.lr_scaling == "sqrt") run.lr_scale = std::sqrt(static_cast<double>(world));

  // Dropout differs per rank (as NVIDIA seeds seed + rank); the weights above do not.
  at::manual_seed(cfg.seed + static_cast<uint64_t>(run.dist->rank()));
  // Where the run starts, read before anything is written: --dry-run stops after printing the plan.
  const bool main = run.dist->is_main();
  std::optional<std::string> latest = cfg.resume ? latest_checkpoint(cfg.output_dir) : std::nullopt;
  RunStart start{latest ? *latest : cfg.init_checkpoint, 0};
  if (main) {
    const BertConfig model_config = task.model_config();
    run.tokenizer = training_tokenizer_files(cfg.vocab, start.checkpoint, model_config.vocab_size,
                                             model_config.max_position_embeddings);
  }
  if (cfg.dry_run) {
    if (latest) start.step = checkpoint_step(*latest);
    if (main)
      for (const auto& line : run_plan_lines(run, start)) std::printf("%s\n", line.c_str());
    return false;
  }
  // Rank 0 claims the output directory once the inputs are known to be good, before anything is read from it or
  // written: one run at a time, and an earlier run's checkpoints are never replaced by a new run without --force.
  if (main) {
    run.lock = std::make_unique<OutputDirLock>(cfg.output_dir);
    if (!cfg.resume) claim_for_new_run(cfg.output_dir, cfg.force);
  }
  if (cfg.resume) latest = latest_checkpoint(cfg.output_dir);  // again, now that no other run can write it
  if (latest) {
    const TrainingState state = restore_run(run, *latest);
    start = {*latest, run.step};
    const bool finished = run.step >= cfg.max_steps || state.saved_because == "target";
    if (finished) {
      if (main)
        std::fprintf(stderr, "%s: %s: this run already finished (%s at step %lld of --max-steps %lld); nothing to do%s\n",
                     tool_name().c_str(), cfg.output_dir.c_str(),
                     state.saved_because == "target" ? "it reached its target" : "its last checkpoint is",
                     static_cast<long long>(run.step), static_cast<long long>(cfg.max_steps),
                     state.saved_because == "target" ? "" : " (a larger --max-steps trains on)");
      return false;
    }
  } else if (cfg.resume && main && !cfg.quiet) {
    std::fprintf(stderr, "%s: --resume: no checkpoint in %s/checkpoints yet, starting at step 0\n",
                 tool_name().c_str(), cfg.output_dir.c_str());
  }
  if (main && !cfg.quiet)
    for (const auto& line : run_plan_lines(run, start)) std::fprintf(stderr, "%s: %s\n", tool_name().c_str(), line.c_str());

  if (run.dist->is_main()) {
    fs::create_directories(cfg.output_dir);
    TrainLogOptions lo;
    lo.log_file = cfg.log_file.empty() ? (fs::path(cfg.output_dir) / "log.jsonl").string() : cfg.log_file;
    if (cfg.tensorboard) lo.tensorboard_dir = (fs::path(cfg.output_dir) / "tensorboard").string();
    lo.append = cfg.resume;  // a resumed run continues the same log; a new run never appends to an old one
    lo.overwrite = cfg.force;
    lo.quiet = cfg.quiet;
    lo.total_steps = cfg.max_steps;
    run.log = std::make_unique<TrainLog>(lo);
    run.log->header(run.step, run_header_json(run, start));
  }
  run.eval_every = cfg.eval_every_samples > 0
                       ? (cfg.eval_every_samples + run.global_batch() - 1) / run.global_batch()
                       : cfg.eval_every;
  if (run.dist->is_main() && !cfg.mlperf_log.empty()) start_mlperf_log(run, run.init_start_ms);
  if (cfg.cuda_graphs) run.graph = std::make_unique<GraphedStep>(run.device, cfg.cuda_graph_eager_steps);
  return true;
}

// MLPerf's run header: submission fields, the hyperparameters the BERT rules require, init and run start, the
// first block. The run's own events follow from the loop (evaluations, run_stop).
void start_mlperf_log(LoopRun& run, int64_t init_start_ms) {
  const LoopConfig& cfg = run.cfg;
  run.mlperf = std::make_unique<MlperfLog>(cfg.mlperf_log, tool_name());
  MlperfLog& m = *run.mlperf;
  m.event("submission_benchmark", cfg.mlperf_benchmark);
  m.event("submission_division", "open");
  m.event("submission_org", "bertkit");
  m.event("submission_platform", fmt::format("{}x{}", run.dist->world(), run.device.is_cuda() ? "GPU" : "CPU"));
  m.event("submission_status", "onprem");
  m.event("cache_clear", true);
  m.start("init_start", {}, init_start_ms);
  m.event("seed", cfg.seed);
  m.event("global_batch_size", run.global_batch());
  m.event("gradient_accumulation_steps", cfg.gradient_accumulation_steps);
  m.event("opt_name", cfg.optimizer);
  m.event("opt_base_learning_rate", cfg.learning_rate * run.lr_scale);
  m.event("opt_lamb_epsilon", run.optimizer->config().eps);
  m.event("opt_lamb_beta_1", run.optimizer->config().beta1);
  m.event("opt_lamb_beta_2", run.optimizer->config().beta2);
  m.event("opt_lamb_weight_decay_rate", cfg.weight_decay);
  m.event("opt_lamb_learning_rate_decay_poly_power", cfg.poly_power);
  m.event("opt_learning_rate_training_steps", cfg.max_steps);
  const auto warmup = static_cast<int64_t>(run.schedule.warmup_proportion * static_cast<double>(cfg.max_steps));
  m.event("opt_learning_rate_warmup_steps", warmup);
  m.event("num_warmup_steps", warmup);
  m.event("start_warmup_step", 0);
  m.event("train_samples", cfg.max_steps * run.global_batch());
  m.event("eval_samples", run.task->evaluation_samples());
  m.end("init_stop");
  m.start("run_start");
  m.start("block_start", {{"samples_count", run.step * run.global_batch()}});
}

namespace {

Checkpoint snapshot(LoopRun& run, const std::string& why) {
  Checkpoint ckpt;
  ckpt.config = run.task->model_config();
  for (const auto& [name, t] : run.task->model_state()) ckpt.model[name] = t.detach().to(at::kCPU, at::kFloat).clone();
  for (const auto& [name, t] : run.optimizer->state()) ckpt.optimizer[name] = t.detach().to(at::kCPU).clone();
  for (const auto& [name, t] : run.scaler->state()) ckpt.optimizer[name] = t.detach().to(at::kCPU).clone();
  TrainingState state;
  state.step = run.step;
  state.micro_batch = run.micro_batch;
  state.schedule_offset = run.schedule_offset;
  state.data_position = run.task->data_position();
  state.generators = generator_states(run.device);
  state.world_size = run.dist->world();
  state.seed = run.cfg.seed;
  state.max_steps = run.cfg.max_steps;
  state.train_batch_size = run.cfg.train_batch_size;
  state.learning_rate = run.cfg.learning_rate;
  state.optimizer = run.cfg.optimizer;
  state.precision = run.cfg.precision;
  state.saved_because = why;
  ckpt.state = state.to_json();
  ckpt.task = run.task->description();
  ckpt.tokenizer = run.tokenizer;
  return ckpt;
}

}  // namespace

void save_run(LoopRun& run, const std::string& why) {
  if (!run.dist->is_main()) return;
  std::string dir = save_checkpoint(run.cfg.output_dir, run.step, snapshot(run, why), run.cfg.keep_checkpoints);
  run.log->note(run.step, "saved checkpoint " + dir);
}

void save_best(LoopRun& run, const TaskEvaluation& evaluation) {
  if (!run.dist->is_main()) return;
  Checkpoint ckpt = snapshot(run, "best");
  ckpt.optimizer.clear();  // a model to predict with, not to resume from
  for (const auto& [name, value] : evaluation.metrics) ckpt.state["evaluation"][name] = value;
  const std::string dir = (fs::path(run.cfg.output_dir) / "best").string();
  write_checkpoint_dir(dir, ckpt);
  run.log->note(run.step, fmt::format("best score so far ({}): saved {}", evaluation.score, dir));
}

// Every rank trained alone; the rank with the lowest final loss (or best evaluation score) wins and its weights end up everywhere (a sum over
// ranks of which all but the winner's are zeroed), so rank 0 saves the best model.
void keep_best_worker(LoopRun& run, double final_loss) {  // lower is better
  if (run.dist->world() == 1) return;
  const double best = run.dist->allreduce_scalar(final_loss, ReduceOp::Min);
  double mine = final_loss == best ? static_cast<double>(run.dist->rank()) : 1e9;
  const double winner = run.dist->allreduce_scalar(mine, ReduceOp::Min);
  at::NoGradGuard no_grad;
  for (auto& p : parameter_tensors(*run.optimizer)) {
    if (run.dist->rank() != static_cast<int>(winner)) p.zero_();
    run.dist->allreduce(p, ReduceOp::Sum);
  }
  if (run.dist->is_main() && !run.cfg.quiet)
    std::fprintf(stderr, "%s: independent workers: rank %d had the %s (%.4f); its weights are kept\n",
                 tool_name().c_str(), static_cast<int>(winner),
                 run.task->has_evaluation() ? "best evaluation score" : "lowest loss",
                 run.task->has_evaluation() ? -best : best);
}

}  // namespace bk
