#include "tasks/finetune/bert_finetune_train.h"

#include "launch/dist_env.h"
#include "tasks/finetune/finetune_task.h"
#include "train/loop/loop.h"
#include "util/error.h"

namespace bk {

void run_bert_finetune_train(FinetuneTrainConfig config) {
  config.task.model_dir = config.loop.init_checkpoint;
  config.task.quiet = config.loop.quiet;
  config.task.validate();
  FinetuneTask task(config.task);
  // The steps follow from the features: --epochs whole passes (what a partial last batch would add is left out).
  const int64_t world = detect_dist_env().world_size;
  const int64_t per_epoch = task.steps_per_epoch(config.loop.train_batch_size * world);
  if (per_epoch == 0)
    fail("{}: {} features are fewer than one step of {} samples on {} processes", config.task.train_file,
         task.train_features().size(), config.loop.train_batch_size * world, world);
  if (config.loop.max_steps == 0) config.loop.max_steps = per_epoch * config.task.epochs;
  config.loop.eval_every = per_epoch;
  config.validate();
  run_training_loop(config.loop, task);
}

}  // namespace bk
