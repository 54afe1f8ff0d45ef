#include "tasks/finetune/bert_finetune_train.h"

#include "launch/dist_env.h"
#include "tasks/finetune/finetune_task.h"
#include "train/loop/loop.h"
#include "util/error.h"
#include "ckpt/checkpoint_path.h"

namespace bk {

void run_bert_finetune_train(FinetuneTrainConfig config) {
  config.loop.validate(config.loop.max_steps > 0);  // before the features and the model are read
  if (!config.loop.init_checkpoint.empty()) config.loop.init_checkpoint = resolve_checkpoint(config.loop.init_checkpoint);
  config.task.model_dir = config.loop.init_checkpoint;
  // The model's vocabulary: the one beside the pretrained checkpoint unless --vocab names one; it scores SQuAD's
  // --eval-file and travels into every fine-tuned checkpoint, where predict finds it.
  const bool span_eval = !config.task.eval_file.empty() && config.task.task.starts_with("squad");
  if (config.task.vocab_path.empty() && span_eval) config.task.vocab_path = vocab_beside_checkpoint(config.task.model_dir);
  config.loop.vocab = config.task.vocab_path;
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
