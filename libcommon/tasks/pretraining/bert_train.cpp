#include "tasks/pretraining/bert_train.h"

#include "tasks/pretraining/pretraining_task.h"
#include "train/loop/loop.h"
#include "ckpt/checkpoint_path.h"

namespace bk {

void run_bert_train(BertTrainConfig config) {
  config.validate();
  if (!config.loop.init_checkpoint.empty()) config.loop.init_checkpoint = resolve_checkpoint(config.loop.init_checkpoint);
  // A preset's vocabulary size: --vocab's, else that of the vocabulary beside the checkpoint the run starts from
  // (phase 2 from phase 1, a resumed run).
  config.data.vocab_path = config.loop.vocab;
  if (config.data.vocab_path.empty()) {
    std::string from = config.loop.init_checkpoint;
    if (config.loop.resume)
      if (const auto latest = latest_checkpoint(config.loop.output_dir)) from = *latest;
    if (!from.empty()) config.data.vocab_path = vocab_beside_checkpoint(from);
  }
  PretrainingTask task(config.data);
  run_training_loop(config.loop, task);
}

}  // namespace bk
