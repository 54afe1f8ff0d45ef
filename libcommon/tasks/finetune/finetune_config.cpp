#include "tasks/finetune/finetune_config.h"

#include "glue/glue_tasks.h"
#include "util/error.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace bk {

namespace {

// SQuAD, then the GLUE tasks of glue/glue_tasks.h with their labels in the processor's order (label id =
// position) and the metric that picks the best model: F1 for MRPC and QQP, Matthews correlation for CoLA, Pearson
// for STS-B, accuracy for the others.
std::vector<FinetuneTaskInfo> make_tasks() {
  std::vector<FinetuneTaskInfo> all = {{"squad", FinetuneKind::span, {}, "f1"}, {"squad2", FinetuneKind::span, {}, "f1"}};
  for (const GlueTask& glue : glue_tasks()) {
    FinetuneTaskInfo t;
    t.name = std::string(glue.name);
    t.kind = glue.regression() ? FinetuneKind::regression : FinetuneKind::classification;
    for (std::string_view label : glue.labels) t.labels.emplace_back(label);
    t.metric = t.name == "mrpc" || t.name == "qqp" ? "f1" : t.name == "cola" ? "mcc" : glue.regression() ? "pearson" : "accuracy";
    all.push_back(std::move(t));
  }
  return all;
}

const std::vector<FinetuneTaskInfo>& tasks() {
  static const std::vector<FinetuneTaskInfo> all = make_tasks();
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
  const bool span = finetune_task_info(task).kind == FinetuneKind::span;
  if (!eval_file.empty() && span && vocab_path.empty())
    usage_fail("--eval-file for {} is the dev JSON, scored by its predictions: it needs --vocab or --tokenizer "
               "(there is no tokenizer beside --init-checkpoint)", task);
  if (!span && doc_stride) usage_fail("--doc-stride applies to squad and squad2 only");
  if (!span && max_query_length) usage_fail("--max-query-length applies to squad and squad2 only");
  if (cased && !(span && !eval_file.empty()))
    usage_fail("--cased makes the features of a SQuAD --eval-file; {} has none", task);
}

}  // namespace bk
