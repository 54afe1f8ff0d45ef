// Fine-tuning on the training loop (train/loop/task.h): SQuAD spans with BertForQuestionAnswering, GLUE classes and
// STS-B's regression with BertForSequenceClassification, over features in Google's layouts (feature_rows.h).
//
// Loss terms, each summed over a micro-batch and divided by the global batch's sequences by the loop:
//   span_loss  (CE(start) + CE(end)) / 2 per sequence, as HF's BertForQuestionAnswering (positions clamped to T);
//   cls_loss   cross entropy per sequence, with the metric accuracy;
//   mse_loss   squared error per sequence (regression).
// Order: per epoch a permutation of the features from (seed, epoch); micro-batch j of rank r takes the samples
// [(j * world + r) * b, ... + b) of it, so N ranks take together what one rank with N times the batch takes; the
// features left over by the last whole step are not used in that epoch. Classification batches are cut to their
// longest feature; span batches keep max_seq_length (the references' softmax covers the padding too).
// Evaluation, with an eval file: every rank scores the whole set with its model, the task's metric picks the best
// (GLUE: features with labels; SQuAD: the dev JSON, whose predictions get the official script's EM and F1).
#pragma once

#include "model_config/bert_config.h"
#include "model/token_stream.h"
#include "tasks/bert_task.h"
#include "tasks/finetune/feature_rows.h"
#include "tasks/finetune/finetune_config.h"
#include "tasks/finetune/squad_dataset.h"

#include <memory>
#include <optional>

namespace bk {

class BertModelBase;
class BertForQuestionAnswering;
class BertForSequenceClassification;

struct FinetuneBatch {
  at::Tensor input_ids, segment_ids, attention_mask;  // int64 [B, T]
  TokenStream stream;                                 // classification with unpadded attention
  at::Tensor start_positions, end_positions;          // int64 [B] (spans)
  at::Tensor labels;                                  // int64 [B] (classes) or float [B] (regression)
  int64_t size() const { return input_ids.size(0); }
  // Every tensor field but the stream's (undefined ones included).
  std::vector<at::Tensor*> tensors() {
    return {&input_ids, &segment_ids, &attention_mask, &start_positions, &end_positions, &labels};
  }
};

class FinetuneTask : public BertModelTask {
 public:
  // Reads the features now, so a bad file fails before anything else.
  explicit FinetuneTask(FinetuneTaskConfig config);
  ~FinetuneTask() override;

  // Optimizer steps in one epoch for `global_batch` samples per step (all ranks and micro-batches together).
  int64_t steps_per_epoch(int64_t global_batch) const;
  const FeatureRows& train_features() const { return train_; }

  void start(const TaskContext& context) override;
  const BertConfig& model_config() const override { return model_config_; }
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
  std::vector<std::string> input_paths() const override;
  TaskDataSummary data_summary() const override;
  nlohmann::json data_position() const override;
  void restore_data_position(const nlohmann::json& position) override;

  nlohmann::json description() const override;
  bool has_evaluation() const override { return !eval_.input_ids.empty() || squad_eval_ != nullptr; }
  TaskEvaluation evaluate() override;

 protected:
  BertModelBase& bert() const override;

 private:
  FinetuneBatch make_batch(const std::vector<size_t>& rows, const FeatureRows& from) const;
  void open_epoch(int64_t epoch);
  std::string head_prefix() const;

  FinetuneTaskConfig config_;
  const FinetuneTaskInfo& info_;
  FeatureRows train_, eval_;
  std::unique_ptr<SquadEvalSet> squad_eval_;  // SQuAD: the dev JSON, scored by its predictions
  std::optional<SquadFeatureOptions> squad_windows_;  // SQuAD: the evaluation's windows, recorded in task.json
  TaskContext context_;
  BertConfig model_config_;
  std::shared_ptr<BertForQuestionAnswering> qa_;
  std::shared_ptr<BertForSequenceClassification> classifier_;
  BertModelBase* model_ = nullptr;
  std::vector<std::string> terms_;
  std::vector<TaskMetric> metrics_;
  int64_t epoch_ = -1, batch_ = 0, batches_per_epoch_ = 0;  // micro-batches of this rank
  std::vector<size_t> order_;                                // this epoch's permutation of the features
  std::vector<FinetuneBatch> batches_;                       // the current step's
  std::vector<FinetuneBatch> staged_;                        // --cuda-graphs: batches_ on the device, step after step
};

}  // namespace bk
