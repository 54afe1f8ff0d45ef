#include "tasks/pretraining/bert_train.h"

#include "tasks/pretraining/pretraining_task.h"
#include "train/loop/loop.h"
#include "ckpt/checkpoint_path.h"

namespace bk {

void run_bert_train(BertTrainConfig config) {
  config.validate();
  if (!config.loop.init_checkpoint.empty()) config.loop.init_checkpoint = resolve_checkpoint(config.loop.init_checkpoint);
  config.data.vocab_path = config.loop.vocab;  // a preset's vocabulary size
  PretrainingTask task(config.data);
  run_training_loop(config.loop, task);
}

}  // namespace bk
