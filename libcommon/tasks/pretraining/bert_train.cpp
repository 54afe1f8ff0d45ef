#include "tasks/pretraining/bert_train.h"

#include "launch/dist_env.h"
#include "tasks/pretraining/inputs.h"
#include "tasks/pretraining/pretraining_task.h"
#include "train/loop/loop.h"
#include "ckpt/checkpoint_path.h"

namespace bk {

namespace {

// What the inputs decide before the run starts: their vocabulary (tok/vocab_stamp.h), which the loop compares with
// --vocab's and the checkpoint's (--eval-input's must be the same, or the evaluation would score ids of another
// vocabulary), and the masking rule of unmasked inputs (masking_flags.h). An unmasked held-out set is masked once,
// with the default rule from bert-eval's fixed seed, so that every run's evaluation (and bert-eval's) is over the
// same masks.
void resolve_data(BertTrainConfig& config) {
  PretrainingConfig& data = config.data;
  const PretrainInputs train = resolve_pretrain_inputs(data.inputs);
  data.masking = resolve_masking(data.masking_flags, train, data.vocab_path, data.max_predictions, true);
  if (!data.eval_inputs.empty()) {
    const PretrainInputs eval = resolve_pretrain_inputs(data.eval_inputs);
    // With --allow-vocab-mismatch only the first process says the warning (each worker runs this).
    const bool say = !config.loop.allow_vocab_mismatch || detect_dist_env().rank == 0;
    if (eval.vocab && train.vocab && say)
      check_same_vocabulary(*train.vocab, *eval.vocab, true, config.loop.allow_vocab_mismatch);
    // The default rule, not the run's flags: bert-eval's, so that every run scores the same masks.
    data.eval_masking = resolve_masking(MaskingFlags{}, eval, data.vocab_path, data.max_predictions, true);
  }
  if (train.vocab) {
    config.loop.data_vocab_stamp = train.vocab->stamp.text();
    config.loop.data_vocab_source = train.vocab->where;
  }
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
  resolve_data(config);
  PretrainingTask task(config.data);
  run_training_loop(config.loop, task);
}

}  // namespace bk
