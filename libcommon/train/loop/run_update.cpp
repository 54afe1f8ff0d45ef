#include "train/loop/run_update.h"

#include "util/error.h"
#include "util/tool_name.h"
#include "train/dist/dist_buckets.h"
#include "train/loop/loop_run.h"
#include "train/loop/run_resume.h"
#include "train/optim/make_optimizer.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdio>

namespace bk {

namespace {

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
               choice_name(kOptimizerKinds, run.cfg.optimizer));
  if (const std::string why = run.task->cuda_graphs_unsupported(); !why.empty()) usage_fail("--cuda-graphs: {}", why);
  if (!run.device.is_cuda()) usage_fail("--cuda-graphs needs --device cuda");
  if (!cuda_graphs_built())
    usage_fail("--cuda-graphs: this build has no CUDA graphs (the CUDA toolkit was not found when it was configured)");
}

// The optimizer over rank 0's weights, and how the gradients meet: bucketed all-reduce (in --allreduce-dtype)
// overlapped with backward, unless every worker trains alone or clips before the all-reduce.
void make_optimizer_and_sync(LoopRun& run) {
  const LoopConfig& cfg = run.cfg;
  OptimizerConfig oc = training_optimizer_config(cfg.optimizer);
  oc.weight_decay = cfg.weight_decay;
  oc.max_grad_norm = cfg.grad_clip_norm();
  oc.fully_decoupled_decay = cfg.fully_decoupled_decay;
  oc.max_lr = run.learning_rate * run.lr_scale;  // the schedule's peak (--lr-scaling's included)
  oc.counted_rows = run.task->parameter_rows();
  run.optimizer = make_optimizer(run.task->parameters(), oc);
  // Fully decoupled, WD is a share of each weight per step at the peak: 0.01 halves the weights in 70 steps.
  if (cfg.fully_decoupled_decay && cfg.weight_decay > 1e-3 && run.dist->is_main() && !cfg.quiet)
    print_warning(fmt::format("--fully-decoupled-weight-decay with --weight-decay {:g}: each weight shrinks by up to "
                              "{:g}% a step; ModernBERT's is 1e-5", cfg.weight_decay, 100 * cfg.weight_decay));
  if (cfg.init_optimizer) init_optimizer(run);
  std::vector<at::Tensor> params = run.parameters();
  run.dist->broadcast_parameters(params);
  if (cfg.allreduce_dtype == WireDtype::bf16) run.allreduce_wire = at::kBFloat16;
  if (cfg.allreduce_dtype == WireDtype::fp16) run.allreduce_wire = at::kHalf;
  const int world = run.dist->world();
  if (!cfg.no_sync_gradients && !cfg.local_clip && world > 1)
    run.sync = std::make_unique<GradientSynchronizer>(*run.dist, params, /*average=*/false, kDefaultBucketBytes,
                                                      run.allreduce_wire);
  if (cfg.nccl_warmup && world > 1 && !cfg.no_sync_gradients) warm_up_collectives(run, params);
}

// The learning rate: warm-up and decay over --max-steps, scaled with the world when --lr-scaling asks.
void make_schedule(LoopRun& run) {
  const LoopConfig& cfg = run.cfg;
  run.schedule.base_lr = run.learning_rate;
  run.schedule.total_steps = cfg.max_steps;
  run.schedule.warmup_proportion = cfg.warmup_steps >= 0 ? static_cast<double>(cfg.warmup_steps) /
                                                            static_cast<double>(cfg.max_steps)
                                                      : run.warmup_proportion;
  run.schedule.degree = cfg.poly_power;
  run.schedule.decay = cfg.lr_decay;
  run.schedule.decay_steps = cfg.lr_decay_steps;
  try {
    run.schedule.validate();
  } catch (const Error& e) {
    usage_fail("--warmup-proportion, --warmup-steps, --lr-decay-steps: {}", e.what());
  }
  const int world = run.dist->world();
  if (cfg.lr_scaling == LrScaling::linear) run.lr_scale = world;
  else if (cfg.lr_scaling == LrScaling::sqrt) run.lr_scale = std::sqrt(static_cast<double>(world));
}

}  // namespace

void make_update(LoopRun& run) {
  make_schedule(run);  // first: the optimizer's fully decoupled decay reads the peak rate
  make_optimizer_and_sync(run);
  if (run.cfg.cuda_graphs) check_cuda_graphs(run);
  LossScalerConfig sc = run.cfg.loss_scale > 0 ? LossScalerConfig::fixed(run.cfg.loss_scale) : LossScalerConfig();
  sc.enabled = run.precision == Precision::fp16;
  run.scaler = std::make_unique<LossScaler>(sc, run.device);
}

}  // namespace bk
