#include "tasks/pretraining/bert_train.h"

#include "tasks/pretraining/inputs.h"
#include "tasks/pretraining/pretraining_task.h"
#include "train/loop/loop.h"
#include "ckpt/checkpoint_path.h"

namespace bk {

namespace {

// The vocabulary the training files record (tok/vocab_stamp.h), which the loop compares with --vocab's and the
// checkpoint's; --eval-input's must be the same, or the evaluation would score ids of another vocabulary.
void record_data_vocabulary(BertTrainConfig& config) {
  const auto train = resolve_pretrain_inputs(config.data.inputs).vocab;
  if (!config.data.eval_inputs.empty())
    if (const auto eval = resolve_pretrain_inputs(config.data.eval_inputs).vocab; eval && train)
      check_same_vocabulary(*train, *eval, true, config.loop.allow_vocab_mismatch);
  if (!train) return;
  config.loop.data_vocab_stamp = train->stamp.text();
  config.loop.data_vocab_source = train->where;
}

}  // namespace

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
  record_data_vocabulary(config);
  PretrainingTask task(config.data);
  run_training_loop(config.loop, task);
}

}  // namespace bk
