#include "train/trainer.h"

#include "util/error.h"
#include "io/output.h"
#include "model/bert.h"
#include "model/model_dir.h"
#include "model/pretrain_loss.h"
#include "train/checkpoint.h"
#include "train/data_loader.h"
#include "train/dist.h"
#include "train/dist_env.h"
#include "train/dist_sync.h"
#include "train/grad_scaler.h"
#include "train/optim.h"
#include "train/schedule.h"
#include "train/train_log.h"
#include "train/trainer_parts.h"

#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <fmt/format.h>
#include <torch/cuda.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <unistd.h>

namespace bk {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

// Everything a run holds; built by setup(), used by the loop.
struct Run {
  TrainerConfig cfg;
  at::Device device{at::kCPU};
  Precision precision = Precision::fp32;
  std::unique_ptr<Dist> dist;
  BertConfig model_config;
  std::shared_ptr<BertForPreTraining> model;
  std::unique_ptr<Optimizer> optimizer;
  std::unique_ptr<LossScaler> scaler;
  std::unique_ptr<PretrainDataLoader> loader;
  std::unique_ptr<GradientSynchronizer> sync;
  LrSchedule schedule;
  double lr_scale = 1;
  int64_t step = 0;     // optimizer steps done (skipped fp16 steps included)
  int64_t micro_batch = 0;
  std::unique_ptr<TrainLog> log;  // rank 0 only
};

at::Device pick_device(const std::string& name, const DistEnv& env) {
  if (name == "cpu") return at::Device(at::kCPU);
  if (name == "cuda") {
    if (!torch::cuda::is_available()) fail("--device cuda: no CUDA device is available on this machine");
    return at::Device(at::kCUDA, static_cast<at::DeviceIndex>(env.local_rank % torch::cuda::device_count()));
  }
  usage_fail("--device must be cpu or cuda, got '{}'", name);
}

std::vector<at::Tensor> parameter_tensors(const Optimizer& optimizer) {
  std::vector<at::Tensor> out;
  for (const auto& [name, t] : optimizer.params()) out.push_back(t);
  return out;
}

std::vector<at::Tensor> gradients(const Optimizer& optimizer) {
  std::vector<at::Tensor> out;
  for (const auto& [name, t] : optimizer.params()) {
    if (!t.grad().defined()) t.mutable_grad() = at::zeros_like(t);
    out.push_back(t.grad());
  }
  return out;
}

void save(Run& run, const std::string& why) {
  if (!run.dist->is_main()) return;
  Checkpoint ckpt;
  ckpt.config = run.model_config;
  for (const auto& [name, t] : run.model->state_dict()) ckpt.model[name] = t.detach().to(at::kCPU, at::kFloat).clone();
  for (const auto& [name, t] : run.optimizer->state()) ckpt.optimizer[name] = t.detach().to(at::kCPU).clone();
  for (const auto& [name, t] : run.scaler->state()) ckpt.optimizer[name] = t.detach().to(at::kCPU).clone();
  ckpt.state = {{"step", run.step},
                {"micro_batch", run.micro_batch},
                {"data_position", nlohmann::json::parse(run.loader->position().to_json())},
                {"generators", generator_states(run.device)},
                {"world_size", run.dist->world()},
                {"seed", run.cfg.seed},
                {"max_steps", run.cfg.max_steps},
                {"train_batch_size", run.cfg.train_batch_size},
                {"learning_rate", run.cfg.learning_rate},
                {"optimizer", run.cfg.optimizer},
                {"precision", run.cfg.precision},
                {"saved_because", why}};
  std::string dir = save_checkpoint(run.cfg.output_dir, run.step, ckpt, run.cfg.keep_checkpoints);
  run.log->note(run.step, "saved checkpoint " + dir);
}

void restore(Run& run, const std::string& dir) {
  Checkpoint ckpt = load_checkpoint(dir);
  run.model->load_state_dict(ckpt.model, true, dir + "/model.safetensors");
  if (ckpt.optimizer.empty()) fail("{}: no optimizer.safetensors; --resume needs a checkpoint bert-train wrote", dir);
  run.optimizer->load_state(ckpt.optimizer);
  run.scaler->load_state(ckpt.optimizer);
  const auto& s = ckpt.state;
  if (!s.contains("step") || !s.contains("data_position")) fail("{}/trainer_state.json: no step or data position", dir);
  if (s.value("world_size", 1) != run.dist->world())
    fail("{}: written by a run of {} processes, this one has {}; resume with the same world size", dir,
         s.value("world_size", 1), run.dist->world());
  run.step = s["step"].get<int64_t>();
  run.micro_batch = s.value("micro_batch", int64_t{0});
  run.loader->restore(DataPosition::from_json(s["data_position"].dump()));
  if (s.contains("generators")) restore_generator_states(s["generators"], run.device);
}

void setup(Run& run) {
  const auto& cfg = run.cfg;
  DistEnv env = detect_dist_env();
  run.device = pick_device(cfg.device, env);
  run.precision = parse_precision(cfg.precision, run.device);
  run.dist = Dist::create(env, run.device, std::chrono::seconds(cfg.dist_timeout_seconds));
  const int world = run.dist->world();
  if (cfg.tf32) {
    at::globalContext().setAllowTF32CuBLAS(true);
    at::globalContext().setAllowTF32CuDNN(true);
  }

  // The model: the same initial weights on every rank (seeded, then rank 0's broadcast).
  run.model_config = BertConfig::load(cfg.config_path);
  at::manual_seed(cfg.seed);
  run.model = std::make_shared<BertForPreTraining>(run.model_config);
  if (!cfg.init_checkpoint.empty()) {
    Checkpoint init = load_checkpoint(cfg.init_checkpoint, false);
    run.model->load_state_dict(init.model, true, cfg.init_checkpoint + "/model.safetensors");
  }
  run.model->to(run.device);
  run.model->train();

  OptimizerConfig oc;
  oc.kind = cfg.optimizer;
  oc.weight_decay = cfg.weight_decay;
  oc.max_grad_norm = cfg.max_grad_norm;
  NamedTensors named;
  for (const auto& p : run.model->named_parameter_list()) named.emplace_back(p.name, p.tensor);
  run.optimizer = make_optimizer(std::move(named), oc);
  std::vector<at::Tensor> params = parameter_tensors(*run.optimizer);
  run.dist->broadcast_parameters(params);
  if (!cfg.no_sync_gradients && !cfg.local_clip && world > 1)
    run.sync = std::make_unique<GradientSynchronizer>(*run.dist, params, /*average=*/false);

  LossScalerConfig sc;
  sc.enabled = run.precision == Precision::fp16;
  run.scaler = std::make_unique<LossScaler>(sc, run.device);

  run.schedule.base_lr = cfg.learning_rate;
  run.schedule.total_steps = cfg.max_steps;
  run.schedule.warmup_proportion = cfg.warmup_proportion;
  run.schedule.degree = cfg.poly_power;
  run.schedule.decay = parse_lr_decay(cfg.lr_decay);
  run.schedule.validate();
  if (cfg.lr_scaling == "linear") run.lr_scale = world;
  else if (cfg.lr_scaling == "sqrt") run.lr_scale = std::sqrt(static_cast<double>(world));
  else if (cfg.lr_scaling != "none") usage_fail("--lr-scaling must be none, linear or sqrt, got '{}'", cfg.lr_scaling);

  DataLoaderConfig dc;
  dc.inputs = cfg.inputs;
  dc.batch_size = cfg.train_batch_size / cfg.gradient_accumulation_steps;
  dc.max_predictions = cfg.max_predictions;
  dc.seed = cfg.seed;
  dc.rank = run.dist->rank();
  dc.world = world;
  dc.prefetch = cfg.prefetch;
  dc.pin_memory = run.device.is_cuda();
  dc.global_order = cfg.global_data_order;
  run.loader = std::make_unique<PretrainDataLoader>(dc);
  if (run.loader->batches_per_epoch() == 0)
    fail("the inputs hold {} samples: not one batch of {} per process for {} processes", run.loader->total_samples(),
         dc.batch_size, world);

  // Dropout differs per rank (as NVIDIA seeds seed + rank); the weights above do not.
  at::manual_seed(cfg.seed + static_cast<uint64_t>(run.dist->rank()));
  if (cfg.resume) {
    if (auto latest = latest_checkpoint(cfg.output_dir)) restore(run, *latest);
    else if (run.dist->is_main() && !cfg.quiet)
      std::fprintf(stderr, "bert-train: --resume: no checkpoint in %s/checkpoints yet, starting at step 0\n", cfg.output_dir.c_str());
  }

  if (run.dist->is_main()) {
    fs::create_directories(cfg.output_dir);
    TrainLogOptions lo;
    lo.log_file = cfg.log_file.empty() ? (fs::path(cfg.output_dir) / "log.jsonl").string() : cfg.log_file;
    if (cfg.tensorboard) lo.tensorboard_dir = (fs::path(cfg.output_dir) / "tensorboard").string();
    lo.append = cfg.resume;  // a resumed run continues the same log; a new run never appends to an old one
    lo.quiet = cfg.quiet;
    lo.total_steps = cfg.max_steps;
    run.log = std::make_unique<TrainLog>(lo);
  }
}

// The micro-batches of one optimizer step (epochs roll over inside the loader).
std::vector<PretrainBatch> next_step_batches(Run& run) {
  std::vector<PretrainBatch> batches(static_cast<size_t>(run.cfg.gradient_accumulation_steps));
  for (auto& b : batches) {
    if (!run.loader->next(b) && !run.loader->next(b)) fail("the data loader produced no batch for a new epoch");
    ++run.micro_batch;
  }
  return batches;
}

struct StepResult {
  double loss = 0, mlm_loss = 0, nsp_loss = 0, grad_norm = 0, mlm_accuracy = 0, nsp_accuracy = 0;
  int64_t sequences = 0, tokens = 0, max_len = 0, predictions = 0;
  bool skipped = false;
  double data_seconds = 0;  // waiting for and checking batches: the loop's overhead besides compute
};

StepResult train_step(Run& run) {
  const auto& cfg = run.cfg;
  const auto data_start = Clock::now();
  std::vector<PretrainBatch> batches = next_step_batches(run);
  // Global counts, so every micro-batch's loss is a share of the mean over the whole global batch.
  double local_masked = 0, local_sequences = 0;
  StepResult r;
  for (auto& b : batches) {
    check_vocabulary(b, run.model_config, run.step + 1);
    local_masked += static_cast<double>(b.masked_lm_ids.ge(0).sum().item<int64_t>());
    local_sequences += static_cast<double>(b.size());
    r.tokens += b.attention_mask.sum().item<int64_t>();
    r.max_len = std::max(r.max_len, b.seq_len());
  }
  r.data_seconds = std::chrono::duration<double>(Clock::now() - data_start).count();
  r.sequences = static_cast<int64_t>(local_sequences);
  r.predictions = static_cast<int64_t>(local_masked);
  const bool synced = run.dist->world() > 1 && !cfg.no_sync_gradients;
  const double global_masked = synced ? run.dist->allreduce_scalar(local_masked) : local_masked;
  const double global_sequences = synced ? run.dist->allreduce_scalar(local_sequences) : local_sequences;

  at::Tensor mlm_sum = at::zeros({}, at::TensorOptions().device(run.device));
  at::Tensor nsp_sum = at::zeros_like(mlm_sum), mlm_correct = at::zeros_like(mlm_sum), nsp_correct = at::zeros_like(mlm_sum);
  for (size_t i = 0; i < batches.size(); ++i) {
    PretrainBatch b = batches[i].to(run.device, /*non_blocking=*/true);
    PretrainLoss l;
    {
      AutocastScope autocast(run.precision, run.device);
      l = pretraining_loss(*run.model, b);
    }
    // mean * count = sum; a micro-batch without masked positions contributes nothing to the MLM term.
    at::Tensor mlm_part = at::where(l.mlm_total > 0, l.mlm_loss * l.mlm_total.to(at::kFloat), at::zeros_like(l.mlm_loss));
    at::Tensor nsp_part = l.nsp_loss * l.nsp_total.to(at::kFloat);
    at::Tensor loss = mlm_part / std::max(global_masked, 1.0) + nsp_part / global_sequences;
    if (run.sync) run.sync->prepare(/*sync=*/i + 1 == batches.size());
    run.scaler->scale_loss(loss).backward();
    if (run.sync) run.sync->finish();
    mlm_sum += mlm_part.detach().to(at::kFloat);
    nsp_sum += nsp_part.detach().to(at::kFloat);
    mlm_correct += l.mlm_correct.to(at::kFloat);
    nsp_correct += l.nsp_correct.to(at::kFloat);
  }
  std::vector<at::Tensor> grads = gradients(*run.optimizer);
  if (synced && !run.sync) {
    if (cfg.local_clip && cfg.max_grad_norm > 0) clip_grad_norm(grads, cfg.max_grad_norm);
    run.dist->allreduce_gradients(grads, /*average=*/false);
  }
  const bool finite = run.scaler->unscale(grads);
  ++run.step;
  if (finite) {
    const double lr = run.schedule.at(run.optimizer->steps() + 1) * run.lr_scale;
    r.grad_norm = run.optimizer->step(lr);
  } else {
    r.skipped = true;
  }
  run.scaler->update();
  run.optimizer->zero_grad();

  r.mlm_loss = mlm_sum.item<double>() / std::max(local_masked, 1.0);
  r.nsp_loss = nsp_sum.item<double>() / local_sequences;
  r.loss = r.mlm_loss + r.nsp_loss;
  r.mlm_accuracy = mlm_correct.item<double>() / std::max(local_masked, 1.0);
  r.nsp_accuracy = nsp_correct.item<double>() / local_sequences;
  check_loss_finite(r.loss, run.step);
  return r;
}

// With --no-sync-gradients every rank trained alone; the rank with the lowest final loss wins and its weights
// end up everywhere (a masked sum over ranks), so rank 0 saves the best model.
void keep_best_worker(Run& run, double final_loss) {
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
    std::fprintf(stderr, "bert-train: independent workers: rank %d had the lowest loss (%.4f); its weights are kept\n",
                 static_cast<int>(winner), best);
}

}  // namespace

void run_training(const TrainerConfig& config) {
  Run run;
  run.cfg = config;
  const auto& cfg = run.cfg;
  if (cfg.train_batch_size <= 0 || cfg.max_steps <= 0) usage_fail("--train-batch-size and --max-steps must be positive");
  if (cfg.gradient_accumulation_steps <= 0 || cfg.train_batch_size % cfg.gradient_accumulation_steps != 0)
    usage_fail("--train-batch-size {} is not a multiple of --gradient-accumulation-steps {}", cfg.train_batch_size,
               cfg.gradient_accumulation_steps);
  setup(run);
  const bool main = run.dist->is_main();
  const int64_t first_step = run.step;
  int64_t timed_steps = 0, timed_sequences = 0, timed_tokens = 0;
  double timed_seconds = 0, flops = 0, last_loss = 0;
  const double peak = peak_flops(run.device, run.precision, cfg.peak_tflops);
  while (run.step < cfg.max_steps) {
    const auto start = Clock::now();
    StepResult r = train_step(run);
    if (run.device.is_cuda()) torch::cuda::synchronize();
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    last_loss = r.loss;
    const int64_t global_sequences = r.sequences * run.dist->world();
    if (run.step - first_step > cfg.throughput_warmup_steps) {
      ++timed_steps;
      timed_sequences += global_sequences;
      timed_tokens += r.tokens * run.dist->world();
      timed_seconds += seconds;
      flops += static_cast<double>(global_sequences) *
               run.model_config.training_flops_per_sequence(r.max_len, cfg.max_predictions);
    }
    if (main && (run.step % cfg.log_every == 0 || run.step == cfg.max_steps)) {
      const double step_flops =
          static_cast<double>(global_sequences) * run.model_config.training_flops_per_sequence(r.max_len, cfg.max_predictions);
      Scalars fields = {{"loss", r.loss}, {"mlm_loss", r.mlm_loss}, {"nsp_loss", r.nsp_loss},
                        {"mlm_accuracy", r.mlm_accuracy}, {"nsp_accuracy", r.nsp_accuracy},
                        {"lr", run.schedule.at(std::max<int64_t>(run.optimizer->steps(), 1)) * run.lr_scale},
                        {"grad_norm", r.grad_norm}, {"seq_per_s", global_sequences / seconds},
                        {"tokens_per_s", static_cast<double>(r.tokens * run.dist->world()) / seconds},
                        {"loss_scale", run.scaler->scale()}, {"skipped_steps", static_cast<double>(run.scaler->skipped_steps())},
                        {"step_seconds", seconds}, {"data_seconds", r.data_seconds}};
      if (peak > 0) fields.emplace_back("mfu", step_flops / seconds / (peak * run.dist->world()));
      run.log->log(run.step, fields);
    }
    if (main) run.log->progress(run.step);
    const bool stopping = cfg.stop_after > 0 && run.step - first_step >= cfg.stop_after;
    if (run.step == cfg.max_steps && cfg.no_sync_gradients) keep_best_worker(run, last_loss);
    if ((cfg.checkpoint_every > 0 && run.step % cfg.checkpoint_every == 0) || run.step == cfg.max_steps || stopping)
      save(run, run.step == cfg.max_steps ? "end" : stopping ? "stop" : "periodic");
    if (stopping) break;
  }
  if (main) run.log->finish();
  if (main && timed_steps > 0) {
    const double seq_per_s = timed_sequences / timed_seconds;
    std::string mfu = peak > 0 ? fmt::format(", MFU {:.1f}%", 100 * flops / timed_seconds / (peak * run.dist->world())) : "";
    if (!cfg.quiet)
      std::fprintf(stderr, "bert-train: %lld steps, final loss %.4f, %.1f seq/s, %.0f tokens/s over %lld timed steps%s\n",
                   static_cast<long long>(run.step - first_step), last_loss, seq_per_s, timed_tokens / timed_seconds,
                   static_cast<long long>(timed_steps), mfu.c_str());
  }
}

}  // namespace bk
