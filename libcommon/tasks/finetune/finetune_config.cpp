#include "tasks/finetune/finetune_config.h"

#include "util/error.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace bk {

namespace {

// Labels in the order of google-research/bert's run_classifier.py processors (CoLA, MRPC, MNLI) and, for the tasks
// it has none for, of HF transformers' glue processors.
const std::vector<FinetuneTaskInfo>& tasks() {
  static const std::vector<FinetuneTaskInfo> all = {
      {"squad", FinetuneKind::span, {}, "f1"},
      {"squad2", FinetuneKind::span, {}, "f1"},
      {"cola", FinetuneKind::classification, {"0", "1"}, "mcc"},
      {"sst-2", FinetuneKind::classification, {"0", "1"}, "accuracy"},
      {"mrpc", FinetuneKind::classification, {"0", "1"}, "f1"},
      {"sts-b", FinetuneKind::regression, {}, "pearson"},
      {"qqp", FinetuneKind::classification, {"0", "1"}, "f1"},
      {"mnli", FinetuneKind::classification, {"contradiction", "entailment", "neutral"}, "accuracy"},
      {"qnli", FinetuneKind::classification, {"entailment", "not_entailment"}, "accuracy"},
      {"rte", FinetuneKind::classification, {"entailment", "not_entailment"}, "accuracy"},
      {"wnli", FinetuneKind::classification, {"0", "1"}, "accuracy"},
  };
  return all;
}

}  // namespace

const FinetuneTaskInfo& finetune_task_info(const std::string& name) {
  for (const auto& t : tasks())
    if (t.name == name) return t;
  usage_fail("--task must be one of {}, got '{}'", fmt::join(finetune_task_names(), ", "), name);
}

std::vector<std::string> finetune_task_names() {
  std::vector<std::string> names;
  for (const auto& t : tasks()) names.push_back(t.name);
  return names;
}

void FinetuneTaskConfig::validate() const {
  finetune_task_info(task);
  if (model_dir.empty()) usage_fail("--init-checkpoint is required: fine-tuning starts from a pretrained model");
  if (train_file.empty()) usage_fail("--train-file is required");
  if (epochs < 1) usage_fail("--epochs must be positive, got {}", epochs);
}

}  // namespace bk
