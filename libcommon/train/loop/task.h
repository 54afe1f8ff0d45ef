// What the training loop (loop.h) asks of a task: pretraining (tasks/pretraining/) today, fine-tuning heads next.
//
// The loop owns everything every task shares: the process group, the optimizer and its schedule, precision and
// loss scaling, accumulation, gradient sync, checkpoints, logs and the cadence of a run. A task owns its model and
// its data, and knows how to score one micro-batch:
//   - take_micro_batches(k) takes this rank's next k micro-batches (one optimizer step), checks them against the
//     model, and returns their counts: one denominator per loss term (what its sum is divided by);
//   - forward(i) runs micro-batch i and returns each loss term as a SUM over the micro-batch, plus the sums behind
//     its metrics. The loop divides each term by its denominator summed over all ranks, so the loss is the mean
//     over the global batch whatever the split into ranks and micro-batches;
//   - data_position() / restore_data_position() make a resumed run take exactly the micro-batches an
//     uninterrupted one would have taken.
// The logged loss is the sum of the terms' means; each term and each metric is logged under its own name.
// A task with a held-out set also evaluates (has_evaluation, evaluate): the loop calls it every
// LoopConfig::eval_every steps and at the end, on every rank, logs what it returns and, with keep_best, keeps the
// model of the best score in OUTPUT_DIR/best.
#pragma once

#include "train/loop/learning_rate.h"
#include "train/optim/optimizer.h"

#include <ATen/Tensor.h>
#include <c10/core/Device.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace torch::nn {
class Module;
}

namespace bk {

struct BertConfig;
class Dist;

// What the loop tells a task when the run starts.
struct TaskContext {
  at::Device device{at::kCPU};
  int rank = 0, world = 1;
  int64_t micro_batch_size = 0;  // samples per micro-batch on this rank
  int64_t accumulation = 1;      // micro-batches per optimizer step
  uint64_t seed = 0;
  int prefetch = 0;              // micro-batches to prepare ahead
  bool pin_memory = false;       // page-locked host batches (CUDA runs)
  Dist* dist = nullptr;          // the process group, for an evaluation that combines the ranks' results
  bool independent_workers = false;  // --no-sync-gradients: each rank evaluates its own model on the whole set
  bool quiet = false;                // no notes on stderr
  bool fixed_shapes = false;         // --cuda-graphs: micro-batches of one shape (padded to the data's longest)
  at::ScalarType compute_dtype = at::kFloat;  // the autocast dtype with --precision bf16/fp16, else fp32
};

// The micro-batches of one step on this rank, counted before any forward pass.
struct StepCounts {
  std::vector<double> denominators;  // per loss term
  int64_t sequences = 0;
  int64_t tokens = 0;                // real tokens (padding excluded)
  int64_t computed_tokens = 0;       // tokens the model computes: each micro-batch's rows times its padded length
  int64_t max_len = 0;               // the longest sequence
  double real_flops = 0;             // model FLOPs of the real work: flops_per_sequence(real length) summed over rows
  int64_t micro_batches = 0;         // forward passes the step takes (0: the count asked for); a task may split a
                                     // micro-batch, e.g. by length, into several
};

class TrainingTask;

// What a run's start banner and --dry-run say about the training data.
struct TaskDataSummary {
  uint64_t samples = 0;    // in the training set (all ranks together)
  int64_t max_length = 0;  // the longest sequence a row may hold; 0: not known before reading
  std::string detail;      // "3 files, 20 masked positions per sample", "mrpc features"
};
// Adds a micro-batch to the step's counts from its attention mask ([B, T], 1 for real tokens, on the host): real
// and computed tokens, and the task's FLOPs for each row at its real length.
void add_batch_counts(StepCounts& counts, const at::Tensor& attention_mask, const TrainingTask& task);
// The same for a micro-batch computed without padding: its sequences' lengths and the tokens computed.
void add_sequence_counts(StepCounts& counts, const std::vector<int64_t>& lengths, int64_t computed_tokens,
                         const TrainingTask& task);

// For stage_micro_batches: copies each defined tensor of `from` into the same place of `to` on `device` (made
// there by the first call, with its shape), and points `from`'s at the copy; "" or, when a shape differs from the
// first call's, what changed ("[8, 128] where the first step had [8, 512]").
std::string stage_tensors(const std::vector<at::Tensor*>& from, const std::vector<at::Tensor*>& to,
                          const at::Device& device);

// stage_tensors over a step's micro-batches (whose tensors() list their tensor fields), each with its staged twin
// (`staged` is sized by the first call).
template <class Batch>
std::string stage_batches(std::vector<Batch>& batches, std::vector<Batch>& staged, const at::Device& device) {
  if (staged.empty()) staged.resize(batches.size());
  if (staged.size() != batches.size())
    return std::to_string(batches.size()) + " micro-batches where the first step had " + std::to_string(staged.size());
  for (size_t i = 0; i < batches.size(); ++i) {
    const std::string changed = stage_tensors(batches[i].tensors(), staged[i].tensors(), device);
    if (!changed.empty()) return "micro-batch " + std::to_string(i) + ": " + changed;
  }
  return "";
}

// One micro-batch's forward pass.
struct MicroBatchLoss {
  std::vector<at::Tensor> sums;         // per loss term: 0-dim float, differentiable, summed over the micro-batch
  std::vector<at::Tensor> metric_sums;  // per metric: 0-dim, no gradient (correct predictions, say)
};

// One evaluation, its results combined over the ranks.
struct TaskEvaluation {
  std::vector<std::pair<std::string, double>> metrics;  // logged as named ("eval_accuracy", "eval_f1", ...)
  double score = 0;                                     // higher is better: what picks the best model
};

struct TaskMetric {
  std::string name;        // the log's field name
  size_t denominator = 0;  // the loss term whose denominator it is divided by
};

class TrainingTask {
 public:
  virtual ~TrainingTask() = default;

  // Builds the model and opens this rank's data. Called once, after the process group exists, with LibTorch's
  // default generator seeded with the run's seed (so the initial weights are the same on every rank).
  virtual void start(const TaskContext& context) = 0;

  // The model: the module (device, train/eval), its parameters under their checkpoint names (what the optimizer
  // steps), its tensors for checkpoints and a strict load of them (errors name `where` and every bad key).
  virtual const BertConfig& model_config() const = 0;
  virtual torch::nn::Module& model() = 0;
  virtual NamedTensors parameters() const = 0;
  // Each parameter's leading rows that are the model's, in parameters()' order (fewer than its size where the task
  // pads a tensor, as BERT's vocabulary): what a per-tensor mean counts. Empty: every row of every parameter.
  virtual std::vector<int64_t> parameter_rows() const { return {}; }
  virtual std::map<std::string, at::Tensor> model_state() const = 0;
  virtual void load_model_state(const std::map<std::string, at::Tensor>& tensors, const std::string& where) = 0;
  // --init-checkpoint: the weights to start from. By default a strict load of a checkpoint directory's
  // model.safetensors (every tensor present, no other); a fine-tuning task lets its head be missing.
  virtual void load_init_checkpoint(const std::string& path);
  // What this run's model config changes of the one --init-checkpoint was saved with (BertConfig::changes_to), where
  // the task knows it; the start banner says it. No tensor changes shape (the load refuses that).
  virtual std::vector<std::string> init_config_changes() const { return {}; }
  // The peak learning rate and warm-up without --learning-rate (the task's recipe: tasks/lr_recipe.h), after
  // start(); `continues_trained_weights`: the run starts from a trained model (--init-checkpoint without
  // --init-optimizer). bk::UsageError when the task has no recipe for the optimizer.
  virtual LearningRate default_learning_rate(OptimizerKind optimizer, int64_t global_batch,
                                             bool continues_trained_weights) const = 0;
  // Model FLOPs of one training sequence (forward + backward) of seq_len tokens, for MFU.
  virtual double flops_per_sequence(int64_t seq_len) const = 0;

  virtual const std::vector<std::string>& loss_terms() const = 0;
  virtual const std::vector<TaskMetric>& metrics() const = 0;

  // `step` is the number of the step they are for (from 1), for error messages.
  virtual StepCounts take_micro_batches(int64_t count, int64_t step) = 0;
  // Micro-batch `index` of those taken last, on the context's device (the loop sets autocast around it).
  virtual MicroBatchLoss forward(size_t index) = 0;

  // --cuda-graphs (train/loop/graphed_step.h). cuda_graphs_unsupported: why this task, as configured, cannot give
  // micro-batches of one shape ("" if it can; after start()). stage_micro_batches, after each take_micro_batches:
  // copies the micro-batches onto the device into tensors that keep their addresses from step to step (made by
  // the first call), so that forward(i) reads them where the captured graph does; "" or why not (a shape that
  // changed, say). The loop asks cuda_graphs_unsupported once, before the first step.
  virtual std::string cuda_graphs_unsupported() const { return "this task does not stage its micro-batches"; }
  virtual std::string stage_micro_batches() { return cuda_graphs_unsupported(); }

  virtual TaskDataSummary data_summary() const = 0;  // after start()
  virtual nlohmann::json data_position() const = 0;
  virtual void restore_data_position(const nlohmann::json& position) = 0;

  // The files and directories the task reads (its training and held-out data), after start(): --force never
  // removes a step directory that holds one of them.
  virtual std::vector<std::string> input_paths() const { return {}; }

  // The task and its labels as a fine-tuned checkpoint records them (task.json); null for none.
  virtual nlohmann::json description() const { return nullptr; }

  // Evaluation on a held-out set, called on every rank at the same steps (the model is in eval mode meanwhile).
  virtual bool has_evaluation() const { return false; }
  virtual TaskEvaluation evaluate() { return {}; }
  virtual uint64_t evaluation_samples() const { return 0; }  // the held-out set's size (MLPerf's eval_samples)
};

}  // namespace bk
