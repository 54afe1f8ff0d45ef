#include "train/loop/loop.h"

#include "io/cleanup.h"

#include "util/error.h"
#include "util/tool_name.h"
#include "train/feed/upload.h"
#include "train/loop/loop_run.h"
#include "train/loop/mlperf_log.h"
#include "train/loop/run_save.h"
#include "train/loop/run_setup.h"
#include "train/loop/step_profiler.h"
#include "train/loop/throughput.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <ATen/ATen.h>
#include <c10/core/Event.h>
#include <c10/core/impl/VirtualGuardImpl.h>
#include <torch/nn/module.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>

namespace bk {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

// One step as step() leaves it: its counts on the host, its statistics still on their way from the device.
struct StepResult {
  int64_t step = 0;
  double loss = 0, grad_norm = 0;
  std::vector<double> term_means, metric_values;  // in the task's order; filled by read_statistics()
  StepCounts counts;
  bool skipped = false;
  double lr = 0;            // the rate the step's update used (or would have, for a skipped fp16 step)
  double data_seconds = 0;  // waiting for and checking batches: the loop's overhead besides compute
  // The term sums, metric sums and gradient norm as float64 [terms + metrics + 1], copied without blocking to a
  // page-locked host tensor; `copied` marks (on CUDA) when the copy is done.
  at::Tensor statistics;
  std::optional<c10::Event> copied;
  Clock::time_point returned;  // when step() came back: on the CPU, when its work was done
};

// Starts the copy of a step's statistics (float64, on the device) to the host. On CUDA it is queued behind the
// step's kernels and read one step late (read_statistics), as NVIDIA's trainer does, so the host never waits for
// the GPU in between.
void send_statistics(const at::Device& device, const at::Tensor& statistics, StepResult& r) {
  if (!device.is_cuda()) {
    r.statistics = statistics;
    return;
  }
  r.statistics = at::empty({statistics.numel()}, at::TensorOptions().dtype(at::kDouble).pinned_memory(true));
  r.statistics.copy_(statistics, /*non_blocking=*/true);
  const c10::impl::VirtualGuardImpl guard(device.type());
  r.copied.emplace(device.type());
  r.copied->record(guard.getStream(device));
}

// Waits for the copy (long done when read a step late) and turns the sums into means.
void read_statistics(const TrainingTask& task, StepResult& r) {
  if (r.copied) r.copied->synchronize();
  const double* value = r.statistics.data_ptr<double>();
  const size_t terms = task.loss_terms().size(), metrics = task.metrics().size();
  for (size_t k = 0; k < terms; ++k) {
    r.term_means.push_back(value[k] / std::max(r.counts.denominators[k], 1.0));
    r.loss += r.term_means.back();
  }
  for (size_t k = 0; k < metrics; ++k)
    r.metric_values.push_back(value[terms + k] /
                              std::max(r.counts.denominators[task.metrics()[k].denominator], 1.0));
  r.grad_norm = value[terms + metrics];
}

// Every parameter's gradient, created as zeros where backward left none (what unscale and the all-reduce take).
std::vector<at::Tensor> gradients(const Optimizer& optimizer) {
  std::vector<at::Tensor> out;
  for (const auto& [name, t] : optimizer.params()) {
    if (!t.grad().defined()) t.mutable_grad() = at::zeros_like(t);
    out.push_back(t.grad());
  }
  return out;
}

// Copies the step's denominators (one per loss term, this rank's) into run.denominators without waiting for the
// device, and sums them over the ranks there.
void send_denominators(LoopRun& run, const std::vector<double>& denominators) {
  upload_async(std::vector<float>(denominators.begin(), denominators.end()), run.device, run.denominators);
  if (run.synced()) run.dist->allreduce(run.denominators);
}

// What step_work leaves: the statistics (float64 [terms + metrics + 1]: term sums, metric sums, gradient norm, on
// the device) and whether the optimizer stepped (false: fp16 gradients overflowed).
struct StepWork {
  at::Tensor statistics;
  bool updated = true;
};

// The device work of a step whose micro-batches are taken and whose denominators are in run.denominators: forward
// and backward of `passes` micro-batches, the gradients' all-reduce, the update. With --cuda-graphs this is what
// the graph holds, so nothing here reads the device from the host except fp16's overflow check (which --cuda-graphs
// refuses), and `prepare_update` is false: the optimizer's scalars went up before the replay.
StepWork step_work(LoopRun& run, size_t passes, bool prepare_update) {
  const LoopConfig& cfg = run.cfg;
  TrainingTask& task = *run.task;
  const size_t terms = task.loss_terms().size();
  const at::Tensor global = run.denominators.clamp_min(1);

  // Forward and backward per micro-batch: each term as sum / global count, so the gradients add up to those of the
  // mean over the global batch.
  const at::Tensor zero = at::zeros({}, at::TensorOptions().device(run.device));
  std::vector<at::Tensor> term_sums(terms, zero), metric_sums(task.metrics().size(), zero);
  for (size_t i = 0; i < passes; ++i) {
    MicroBatchLoss l;
    {
      AutocastScope autocast(run.precision, run.device);
      l = task.forward(i);
    }
    at::Tensor loss = l.sums[0] / global[0];
    for (size_t k = 1; k < terms; ++k) loss = loss + l.sums[k] / global[static_cast<int64_t>(k)];
    if (run.sync) run.sync->prepare(/*sync=*/i + 1 == passes);
    run.scaler->scale_loss(loss).backward();
    if (run.sync) run.sync->finish();
    for (size_t k = 0; k < terms; ++k) term_sums[k] = term_sums[k] + l.sums[k].detach().to(at::kFloat);
    for (size_t k = 0; k < metric_sums.size(); ++k) metric_sums[k] = metric_sums[k] + l.metric_sums[k].to(at::kFloat);
  }

  // Gradients of all ranks (unless the synchroniser already summed them), unscaled; the update.
  std::vector<at::Tensor> grads = gradients(*run.optimizer);
  if (run.synced() && !run.sync) {
    if (cfg.local_clip && cfg.grad_clip_norm() > 0) clip_grad_norm(grads, cfg.grad_clip_norm());
    run.dist->allreduce_gradients(grads, /*average=*/false, kDefaultBucketBytes, run.allreduce_wire);
  }
  StepWork w;
  // The only host read of a step, and only with fp16's loss scaling: whether the gradients are finite.
  w.updated = run.scaler->unscale(grads);
  at::Tensor grad_norm = zero;
  if (w.updated) {
    // NVIDIA's schedule counts the updates applied, so a skipped fp16 step does not advance it.
    if (prepare_update) run.optimizer->prepare_step(run.lr());
    grad_norm = run.optimizer->apply_step().reshape({});
  }
  run.scaler->update();
  // On CUDA the next backward stores fresh gradients instead of adding them to zeros (one pass over the gradients
  // less, and no zeroing), in memory the caching allocator hands back. Not on the CPU, where a fresh gradient is a
  // fresh allocation that page-faults as it is written: bert-train with BERT-base there was 2% slower releasing
  // (1,667-1,685 ms/step against 1,633-1,647). Nor under a graph, whose replays write where the capture put them.
  if (run.device.is_cuda() && !run.graph)
    run.optimizer->release_grads();
  else
    run.optimizer->zero_grad();

  // Diagnostics: this rank's sums (the figures a log shows; the update above used the global means).
  std::vector<at::Tensor> statistics;
  for (const auto& t : term_sums) statistics.push_back(t.reshape({}));
  for (const auto& t : metric_sums) statistics.push_back(t.reshape({}));
  statistics.push_back(grad_norm.to(at::kFloat));
  w.statistics = at::stack(statistics).to(at::kDouble);
  return w;
}

StepResult step(LoopRun& run) {
  const LoopConfig& cfg = run.cfg;
  TrainingTask& task = *run.task;
  StepResult r;

  // The step's micro-batches, and each loss term's denominator over the global batch.
  const auto data_start = Clock::now();
  const int64_t micro_batches = cfg.batch_schedule().micro_batches_at(run.step + 1);
  r.counts = task.take_micro_batches(micro_batches, run.step + 1);
  run.micro_batch += micro_batches;
  if (run.graph) {  // the graph reads the micro-batches where the first step put them
    const std::string why_not = task.stage_micro_batches();
    if (!why_not.empty()) fail("--cuda-graphs: step {}: {}", run.step + 1, why_not);
  }
  r.data_seconds = std::chrono::duration<double>(Clock::now() - data_start).count();
  send_denominators(run, r.counts.denominators);
  const size_t passes = static_cast<size_t>(r.counts.micro_batches > 0 ? r.counts.micro_batches : micro_batches);
  StepWork w;
  r.lr = run.lr();  // read before the step: the log may be written after the next one has been queued
  if (run.graph) {
    run.optimizer->prepare_step(run.lr());
    w.statistics = run.graph->run([&] { return step_work(run, passes, /*prepare_update=*/false).statistics; });
  } else {
    w = step_work(run, passes, /*prepare_update=*/true);
  }
  ++run.step;
  r.step = run.step;
  r.skipped = !w.updated;
  send_statistics(run.device, w.statistics, r);
  r.returned = Clock::now();
  return r;
}

void log_step(LoopRun& run, const StepResult& r, double seconds, double step_flops, double peak) {
  // Real tokens over the tokens computed (padding included); MFU below counts the real tokens' FLOPs only.
  const TrainingTask& task = *run.task;
  const int world = run.dist->world();
  const double sequences = static_cast<double>(r.counts.sequences * world);
  Scalars fields = {{"loss", r.loss}};
  for (size_t k = 0; k < r.term_means.size(); ++k) fields.emplace_back(task.loss_terms()[k], r.term_means[k]);
  for (size_t k = 0; k < r.metric_values.size(); ++k) fields.emplace_back(task.metrics()[k].name, r.metric_values[k]);
  fields.insert(fields.end(), {{"lr", r.lr},
                               {"grad_norm", r.grad_norm}, {"seq_per_s", sequences / seconds},
                               {"tokens_per_s", static_cast<double>(r.counts.tokens * world) / seconds},
                               {"real_token_fraction", r.counts.computed_tokens > 0
                                                           ? static_cast<double>(r.counts.tokens) /
                                                                 static_cast<double>(r.counts.computed_tokens)
                                                           : 1.0},
                               {"loss_scale", run.scaler->scale()},
                               {"skipped_steps", static_cast<double>(run.scaler->skipped_steps())},
                               {"step_seconds", seconds}, {"data_seconds", r.data_seconds}});
  if (peak > 0) fields.emplace_back("mfu", step_flops / seconds / (peak * world));
  if (run.cfg.batch_size_warmup_steps > 0) fields.emplace_back("global_batch", sequences);  // it varies
  run.log->log(r.step, fields);
}

// Evaluates the task's held-out set (all ranks), logs the results (and MLPerf's eval events) and keeps the best
// model.
TaskEvaluation evaluate(LoopRun& run) {
  const int64_t samples = run.samples_through(run.step);
  const nlohmann::json at_samples = {{"epoch_num", samples}, {"samples_count", samples}};
  if (run.mlperf) {
    run.mlperf->end("block_stop", {{"samples_count", samples}});
    run.mlperf->start("eval_start", at_samples);
  }
  run.task->model().eval();
  TaskEvaluation e = run.task->evaluate();
  run.task->model().train();
  if (run.mlperf) {
    run.mlperf->end("eval_stop", at_samples);
    run.mlperf->event("eval_accuracy", e.score, at_samples);
  }
  if (run.dist->is_main()) run.log->log(run.step, e.metrics, /*periodic=*/false);
  if (e.score > run.best_score) {
    run.best_score = e.score;
    if (run.cfg.keep_best && !run.cfg.no_sync_gradients) save_best(run, e);
  }
  return e;
}


// What the loop learns of the steps it finishes: their statistics read (a step late, once the next is queued),
// the loss checked, the step timed, counted into the throughput and logged.
class StepRecorder {
 public:
  StepRecorder(LoopRun& run, int64_t first_step)
      : run_(run), first_step_(first_step), peak_(peak_flops(run.device, run.precision, run.cfg.peak_tflops)) {}

  void finish(StepResult& r) {
    const LoopConfig& cfg = run_.cfg;
    const int world = run_.dist->world();
    read_statistics(*run_.task, r);
    check_loss_finite(r.loss, r.step);
    // When the step's work was done: on CUDA about when its statistics arrived (read_statistics waited for them);
    // on the CPU, where step() computes before it returns, when it returned. A step read at once (before an
    // evaluation or a checkpoint) would otherwise be timed from the previous one's late read, at almost nothing.
    const auto now = run_.device.is_cuda() ? Clock::now() : r.returned;
    const double seconds = std::chrono::duration<double>(now - last_done_).count();
    last_done_ = now;
    last_loss = r.loss;
    const int64_t global_sequences = r.counts.sequences * world;
    // Real work only: each row's FLOPs at its own length, not at the padded one (the other ranks' taken as this one's).
    const double step_flops = r.counts.real_flops * world;
    if (r.step - first_step_ > cfg.throughput_warmup_steps)
      throughput.add(global_sequences, r.counts.tokens * world, seconds, step_flops);
    const bool main = run_.dist->is_main();
    if (main && (r.step % cfg.log_every == 0 || r.step == cfg.max_steps)) log_step(run_, r, seconds, step_flops, peak_);
    if (main) run_.log->progress(r.step);
  }
  double peak() const { return peak_; }

  double last_loss = 0;
  Throughput throughput;

 private:
  LoopRun& run_;
  int64_t first_step_;
  double peak_;
  Clock::time_point last_done_ = Clock::now();
};

// What happens after a step: an evaluation, a checkpoint, the end of the run.
struct Cadence {
  bool evaluating = false, saving = false, stopping = false, interrupted = false;
};

Cadence cadence_after(const LoopRun& run, int64_t first_step) {
  const LoopConfig& cfg = run.cfg;
  Cadence c;
  c.interrupted = stop_requested() != 0;  // a single process's Ctrl-C or SIGTERM: saved, then ended (io/cleanup.h)
  c.stopping = (cfg.stop_after > 0 && run.step - first_step >= cfg.stop_after) || c.interrupted;
  c.evaluating = run.task->has_evaluation() && !c.interrupted &&  // an interrupt saves and ends at once
                 ((run.eval_every > 0 && run.step % run.eval_every == 0) || run.step == cfg.max_steps);
  c.saving = (cfg.checkpoint_every > 0 && run.step % cfg.checkpoint_every == 0) || run.step == cfg.max_steps ||
             c.stopping;
  return c;
}

// The evaluation after a step: its score against --target-mlm-accuracy (reaching it saves and stops the run), and
// MLPerf's next block. Returns the measure the best worker is chosen by (minus the score).
double evaluate_step(LoopRun& run, Cadence& cadence, bool& target_reached) {
  const LoopConfig& cfg = run.cfg;
  const TaskEvaluation e = evaluate(run);
  if (cfg.target_score && e.score >= *cfg.target_score) {
    target_reached = true;
    if (run.dist->is_main())
      run.log->note(run.step, fmt::format("target reached: score {:.6f} >= {} after {} samples", e.score,
                                          *cfg.target_score, run.samples_through(run.step)));
    cadence.saving = cadence.stopping = true;
  } else if (run.mlperf && run.step < cfg.max_steps) {
    run.mlperf->start("block_start", {{"samples_count", run.samples_through(run.step)}});
  }
  return -e.score;
}

// The run's end: the target's verdict, the logs closed, the summary line.
void end_run(LoopRun& run, const StepRecorder& recorder, int64_t first_step, bool target_reached) {
  const LoopConfig& cfg = run.cfg;
  const bool main = run.dist->is_main();
  if (main && cfg.target_score && !target_reached)
    run.log->note(run.step, fmt::format("target not reached: best score {:.6f} < {} after {} steps", run.best_score,
                                        *cfg.target_score, run.step));
  if (run.mlperf)
    run.mlperf->end("run_stop", {{"status", target_reached || !cfg.target_score ? "success" : "aborted"}});
  if (main) run.log->finish();
  if (main && recorder.throughput.steps > 0 && !cfg.quiet) {
    const double seconds = static_cast<double>(mlperf_now_ms() - run.init_start_ms) / 1000;
    const std::string where =
        run.last_checkpoint.empty() ? "" : "; checkpoint " + (fs::path(cfg.output_dir) / "checkpoints" / run.last_checkpoint).string();
    std::fprintf(stderr, "%s: %lld steps in %.1f s, final loss %.4f, %s%s\n", tool_name().c_str(),
                 static_cast<long long>(run.step - first_step), seconds, recorder.last_loss,
                 recorder.throughput.summary(recorder.peak() * run.dist->world()).c_str(), where.c_str());
  }
}

}  // namespace

void run_training_loop(const LoopConfig& config, TrainingTask& task) {
  config.validate();
  LoopRun run;
  run.cfg = config;
  run.task = &task;
  const LoopConfig& cfg = run.cfg;
  if (!setup_run(run)) return;
  const int64_t first_step = run.step;
  note_where_to_continue(run);
  StepRecorder recorder(run, first_step);
  std::optional<StepResult> pending;  // the step whose statistics are read once the next one is queued
  bool target_reached = false;
  const auto profiler = StepProfiler::from_env(run.device, run.dist->rank());
  // One process stops at a checkpoint on the first SIGINT or SIGTERM; several would have to agree on the step (a
  // collective each step), so they end at once as before, from their last --checkpoint-every.
  std::optional<StopRequests> stops;
  if (run.dist->world() == 1) stops.emplace();
  while (run.step < cfg.max_steps) {
    if (profiler) profiler->before_step(run.step + 1);
    StepResult r = step(run);
    note_where_to_continue(run);
    if (profiler) profiler->after_step(r.step);
    if (pending) recorder.finish(*pending);
    pending = std::move(r);
    Cadence cadence = cadence_after(run, first_step);
    if (cadence.evaluating || cadence.saving || cadence.stopping || run.step == cfg.max_steps) {
      recorder.finish(*pending);  // a checkpoint never holds a step whose loss was not checked
      pending.reset();
    }
    const double final_measure = cadence.evaluating ? evaluate_step(run, cadence, target_reached) : recorder.last_loss;
    if (run.step == cfg.max_steps && cfg.no_sync_gradients) keep_best_worker(run, final_measure);
    if (cadence.saving)
      save_run(run, target_reached      ? "target"
                    : run.step == cfg.max_steps ? "end"
                    : cadence.interrupted       ? "interrupted"
                    : cadence.stopping          ? "stop"
                                                : "periodic");
    if (cadence.stopping) break;
  }
  if (pending) recorder.finish(*pending);
  end_run(run, recorder, first_step, target_reached);
  // A run that reached --max-steps meanwhile is complete: it ends as such.
  if (const int sig = stop_requested(); sig && run.step < cfg.max_steps) end_as_signalled(sig);
}

}  // namespace bk
