// bert-finetune train: a fine-tuning task (finetune_task.h) on the training loop (train/loop/loop.h), from a
// pretrained or fine-tuned checkpoint. The config and its flags are torch-free (bert_finetune_train_options.cpp).
#pragma once

#include "tasks/finetune/finetune_config.h"
#include "train/loop/loop_config.h"

namespace bk {

class Options;

struct FinetuneTrainConfig {
  LoopConfig loop;           // max_steps is derived from --epochs and the features
  FinetuneTaskConfig task;

  FinetuneTrainConfig();     // fine-tuning's defaults: AdamW, lr 5e-5, linear decay, 10% warm-up, batch 32
  void validate() const;
};

// --task, --train-file, --eval-file, --epochs, then the loop's flags (add_loop_options; --max-steps optional).
void add_bert_finetune_train_options(Options& options, FinetuneTrainConfig& config);

// Checks the flags before anything is read, then resolves the task and the loop from the flags, the checkpoint and
// the features, each once.
void run_bert_finetune_train(const FinetuneTrainConfig& config);

}  // namespace bk
