#include "tasks/pretraining/bert_train.h"

#include "tasks/pretraining/pretraining_task.h"
#include "train/loop/loop.h"

namespace bk {

void run_bert_train(const BertTrainConfig& config) {
  config.validate();
  PretrainingTask task(config.data);
  run_training_loop(config.loop, task);
}

}  // namespace bk
