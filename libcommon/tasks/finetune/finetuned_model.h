// A fine-tuned model loaded for prediction or benchmarking: the task (from --task, checked against the
// checkpoint's task.json when it has one), BertForQuestionAnswering or BertForSequenceClassification, its weights
// loaded strictly (the head must be there: a pretraining checkpoint is refused).
#pragma once

#include "tasks/finetune/finetune_config.h"

#include <ATen/Tensor.h>
#include <c10/core/Device.h>

#include <memory>
#include <string>

namespace bk {

class BertModelBase;
class BertForQuestionAnswering;
class BertForSequenceClassification;
struct SpanLogits;

struct FinetunedModel {
  const FinetuneTaskInfo* info = nullptr;
  std::shared_ptr<BertForQuestionAnswering> qa;               // spans
  std::shared_ptr<BertForSequenceClassification> classifier;  // classes and regression
  BertModelBase* base = nullptr;
  int64_t max_seq_length = 0;  // task.json's, else the model's max_position_embeddings
  int64_t fine_tuned_length = 0;  // task.json's max_seq_length (the features it was trained on); 0 without one
  // SQuAD: task.json's doc_stride and max_query_length (the windows its evaluation used); 0 without them.
  int fine_tuned_doc_stride = 0, fine_tuned_max_query_length = 0;
  at::Device device{at::kCPU};

  // Eval mode, no gradients: start/end logits [B, T] (spans) or logits [B, labels] (the others), float32.
  SpanLogits spans(const at::Tensor& ids, const at::Tensor& segments, const at::Tensor& mask) const;
  at::Tensor classes(const at::Tensor& ids, const at::Tensor& segments, const at::Tensor& mask) const;
};

// `path`: a checkpoint directory (bert-finetune's, or an HF save_pretrained of the task's architecture).
FinetunedModel load_finetuned_model(const std::string& path, const std::string& task, const at::Device& device);

}  // namespace bk
