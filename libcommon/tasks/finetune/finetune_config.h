// What a fine-tuning task is (SQuAD spans, GLUE classes or a regression) and the settings bert-finetune's train
// gives it. Torch-free.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace bk {

enum class FinetuneKind { span, classification, regression };

struct FinetuneTaskInfo {
  std::string name;                 // squad, squad2, cola, sst-2, mrpc, sts-b, qqp, mnli, qnli, rte, wnli
  FinetuneKind kind = FinetuneKind::classification;
  std::vector<std::string> labels;  // in the reference processor's order (classification)
  std::string metric;               // what picks the best model: f1, accuracy, mcc, pearson
  int64_t num_labels() const { return kind == FinetuneKind::span ? 2 : kind == FinetuneKind::regression ? 1 : static_cast<int64_t>(labels.size()); }
};

// The task of that name; bk::UsageError naming the known ones otherwise.
const FinetuneTaskInfo& finetune_task_info(const std::string& name);
std::vector<std::string> finetune_task_names();

struct FinetuneTaskConfig {
  std::string task;
  std::string model_dir;    // the checkpoint to start from (--init-checkpoint; its config.json gives the model's shape)
  std::string train_file;   // features (bert-finetune features --train)
  std::string eval_file;    // evaluated after each epoch, optional: GLUE features with their labels, or for SQuAD
                            // the dev JSON itself, scored by its predictions as the official script scores them
  // The tokenizer (a WordPiece vocabulary with its case, or a byte-level BPE file) that SQuAD's --eval-file's
  // features are made with and that every checkpoint carries; --vocab, or --tokenizer until resolved into it.
  std::string vocab_path, tokenizer_path;
  bool cased = false;
  // SQuAD: the windows of the --eval-file's features, recorded in task.json for predict; unset = run_squad.py's.
  std::optional<int> doc_stride, max_query_length;
  int64_t epochs = 3;       // run_classifier.py's and run_squad.py's default num_train_epochs
  bool unpadded = true;     // classification: the encoder on real tokens only (model/token_stream.h)
  bool quiet = false;

  void validate() const;
};

}  // namespace bk
