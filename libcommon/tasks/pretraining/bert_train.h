// bert-train: BERT pretraining (the pretraining task, pretraining_task.h) on the training loop (train/loop/loop.h).
// The config and its flags are torch-free (bert_train_options.cpp); the run needs LibTorch (bert_train.cpp).
#pragma once

#include "tasks/pretraining/pretraining_config.h"
#include "train/loop/loop_config.h"

namespace bk {

class Options;

struct BertTrainConfig {
  LoopConfig loop;
  PretrainingConfig data;

  // bk::UsageError for values no run can use.
  void validate() const;
};

// --config, --input, --max-predictions, --global-data-order, then the loop's flags (add_loop_options).
void add_bert_train_options(Options& options, BertTrainConfig& config);

// Trains to loop.max_steps (or stop_after); throws bk::Error on bad input or a diverging run.
void run_bert_train(BertTrainConfig config);

}  // namespace bk
