#include "tasks/finetune/bert_finetune_train.h"

#include "launch/dist_env.h"
#include "tasks/finetune/finetune_task.h"
#include "train/loop/loop.h"
#include "util/error.h"
#include "ckpt/checkpoint_path.h"
#include "ckpt/checkpoint_tokenizer.h"
#include "ckpt/tokenizer_files.h"

namespace bk {

namespace {

// The task as the flags and the checkpoint resolve it: the model's directory (--init-checkpoint, a run's
// directory followed to its checkpoint) and, when SQuAD's --eval-file needs one to score with, its tokenizer by
// ckpt/checkpoint_tokenizer.h's rule, the one predict follows (it travels into every fine-tuned checkpoint, where
// predict finds it).
FinetuneTaskConfig resolve_task(const FinetuneTrainConfig& config) {
  FinetuneTaskConfig task = config.task;
  task.model_dir = config.loop.init_checkpoint.empty() ? "" : resolve_checkpoint(config.loop.init_checkpoint);
  const bool span_eval = !task.eval_file.empty() && task.task.starts_with("squad");
  const TokenizerFlags flags{task.vocab_path, task.tokenizer_path, task.cased};
  task.vocab_path = flags.path();
  task.tokenizer_path.clear();
  if (span_eval && (!task.vocab_path.empty() || !task.model_dir.empty())) {
    const CheckpointTokenizer t = checkpoint_tokenizer(task.model_dir, flags, config.loop.allow_vocab_mismatch,
                                                       "a SQuAD --eval-file", "--vocab or --tokenizer");
    task.vocab_path = t.path;
    task.cased = t.cased;
  }
  task.quiet = config.loop.quiet;
  task.validate();
  return task;
}

// The loop as the task resolves it: the steps follow from the features (--epochs whole passes; what a partial
// last batch would add is left out), an evaluation after each epoch.
LoopConfig resolve_loop(const FinetuneTrainConfig& config, const FinetuneTaskConfig& task, const FinetuneTask& run) {
  LoopConfig loop = config.loop;
  loop.init_checkpoint = task.model_dir;
  loop.vocab = task.vocab_path;
  // The vocabulary and casing the evaluation's text is tokenized with: the loop compares them with the model's
  // and writes that casing into the fine-tuned checkpoints.
  if (!task.eval_file.empty() && !task.vocab_path.empty() && task.task.starts_with("squad")) {
    loop.data_vocab_stamp = vocab_file_stamp(task.vocab_path, !task.cased).stamp.text();
    loop.data_vocab_source = task.cased ? task.vocab_path + " with --cased" : task.vocab_path;
  }
  const int64_t world = detect_dist_env().world_size;
  const int64_t per_epoch = run.steps_per_epoch(loop.train_batch_size * world);
  if (per_epoch == 0)
    fail("{}: {} features are fewer than one step of {} samples on {} processes", task.train_file,
         run.train_features().size(), loop.train_batch_size * world, world);
  if (loop.max_steps == 0) loop.max_steps = per_epoch * task.epochs;
  loop.eval_every = per_epoch;
  loop.validate();
  return loop;
}

}  // namespace

void run_bert_finetune_train(const FinetuneTrainConfig& config) {
  config.loop.validate(config.loop.max_steps > 0);  // before the features and the model are read
  const FinetuneTaskConfig task_config = resolve_task(config);
  FinetuneTask task(task_config);
  run_training_loop(resolve_loop(config, task_config, task), task);
}

}  // namespace bk
