// The pretraining task (masked LM + next sentence) on the training loop (train/loop/task.h): BertForPreTraining
// over the HDF5 data of data_loader.h. Loss terms: mlm_loss (cross entropy summed over the real masked positions,
// divided by their count) and nsp_loss (summed over the sequences, divided by their count); metrics mlm_accuracy
// and nsp_accuracy.
#pragma once

#include "model_config/bert_config.h"
#include "tasks/pretraining/data_loader.h"
#include "tasks/pretraining/pretraining_config.h"
#include "tasks/bert_task.h"

#include <memory>
#include <string>
#include <vector>

namespace bk {

class BertForPreTraining;
class BertModelBase;

class PretrainingTask : public BertModelTask {
 public:
  explicit PretrainingTask(PretrainingConfig config);
  ~PretrainingTask() override;

  void start(const TaskContext& context) override;

  const BertConfig& model_config() const override { return model_config_; }
  std::vector<std::string> init_config_changes() const override { return init_config_changes_; }
  // Also a bare BertModel or one without the pretraining heads (transformers' save_pretrained): the heads it lacks
  // initialised as BERT initialises them, said in one line.
  void load_init_checkpoint(const std::string& path) override;
  LearningRate default_learning_rate(OptimizerKind optimizer, int64_t global_batch,
                                     bool continues_trained_weights) const override;
  double flops_per_sequence(int64_t seq_len) const override;

  const std::vector<std::string>& loss_terms() const override { return terms_; }
  const std::vector<TaskMetric>& metrics() const override { return metrics_; }

  StepCounts take_micro_batches(int64_t count, int64_t step) override;
  MicroBatchLoss forward(size_t index) override;
  std::string cuda_graphs_unsupported() const override;
  std::string stage_micro_batches() override;

  // With --eval-input: MLPerf's evaluation (the same samples every time, split over the ranks, sums all-reduced):
  // eval_mlm_accuracy (the score), eval_mlm_loss, eval_nsp_accuracy, eval_samples.
  bool has_evaluation() const override { return !config_.eval_set.sources.empty(); }
  TaskEvaluation evaluate() override;
  uint64_t evaluation_samples() const override { return config_.eval_samples; }

  std::vector<std::string> input_paths() const override;
  TaskDataSummary data_summary() const override;
  nlohmann::json data_position() const override;
  void restore_data_position(const nlohmann::json& position) override;

 protected:
  BertModelBase& bert() const override;

 private:
  PretrainingConfig config_;
  TaskContext context_;
  BertConfig model_config_;
  std::vector<std::string> init_config_changes_;  // of --init-checkpoint's config.json (a longer context, say)
  std::shared_ptr<BertForPreTraining> model_;
  std::unique_ptr<PretrainDataLoader> loader_;
  std::vector<PretrainBatch> batches_;  // the micro-batches of the current step
  std::vector<PretrainBatch> staged_;   // --cuda-graphs: where batches_ are copied on the device, step after step
  bool whole_bin4_batches_ = false;     // a bin4 batch is one forward pass, not one per bin (take_micro_batches)
  std::vector<std::string> terms_ = {"mlm_loss", "nsp_loss"};
  std::vector<TaskMetric> metrics_ = {{"mlm_accuracy", 0}, {"nsp_accuracy", 1}};
};

// The tokens of a batch must exist in the model's vocabulary: a clear error instead of an index error deep inside.
void check_vocabulary(const PretrainBatch& batch, const BertConfig& config, int64_t step);

}  // namespace bk
