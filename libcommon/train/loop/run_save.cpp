#include "train/loop/run_save.h"

#include "io/cleanup.h"
#include "util/tool_name.h"
#include "train/loop/checkpoint.h"
#include "train/loop/generator_state.h"
#include "train/loop/loop_run.h"
#include "train/loop/train_state.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <torch/nn/module.h>

#include <cstdio>
#include <filesystem>

namespace bk {

namespace fs = std::filesystem;

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
  state.learning_rate = run.learning_rate;
  state.warmup_proportion = run.schedule.warmup_proportion;
  state.optimizer = choice_name(kOptimizerKinds, run.cfg.optimizer);
  state.precision = choice_name(kPrecisions, run.precision);
  state.saved_because = why;
  ckpt.state = state.to_json();
  if (!run.cfg.data_vocab_stamp.empty()) ckpt.state["vocab"] = run.cfg.data_vocab_stamp;
  ckpt.task = run.task->description();
  ckpt.tokenizer = run.tokenizer;
  return ckpt;
}

}  // namespace

void save_run(LoopRun& run, const std::string& why) {
  if (!run.dist->is_main()) return;
  std::string dir = save_checkpoint(run.cfg.output_dir, run.step, snapshot(run, why), run.cfg.keep_checkpoints);
  run.log->note(run.step, "saved checkpoint " + dir);
  run.last_checkpoint = fs::path(dir).filename().string();
  note_where_to_continue(run);
}

void note_where_to_continue(const LoopRun& run) {
  if (!run.dist->is_main()) return;
  if (run.last_checkpoint.empty())
    set_interrupt_note(fmt::format(" at step {}, before the first checkpoint; the same command{} starts over", run.step,
                                   run.cfg.log_file.empty() ? "" : " with --force (its --log-file exists)"));
  else
    set_interrupt_note(fmt::format(" at step {}; last checkpoint {}; continue with --resume", run.step,
                                   run.last_checkpoint));
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
  for (auto& p : run.parameters()) {
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
