#include "tasks/pretraining/bert_train.h"

#include "tasks/pretraining/inputs.h"
#include "tasks/pretraining/pretraining_task.h"
#include "train/loop/loop.h"
#include "ckpt/checkpoint_path.h"

namespace bk {

namespace {

// Unmasked inputs (mkpretrain --masking none) are masked by the loader at every epoch, which needs the
// vocabulary ([MASK], the random replacements, "##" pieces) and --max-predictions; masked inputs keep their masks.
void resolve_masking(PretrainingConfig& data, const PretrainInputs& train) {
  const std::string& first = train.sources.front().front().path;
  if (train.masked) {
    if (data.masking == true)
      fail("{}: holds its masks (mkpretrain's default); --masking dynamic takes unmasked files (mkpretrain --masking "
           "none)", first);
    if (data.masked_lm_prob || data.whole_word_mask)
      usage_fail("--masked-lm-prob and --whole-word-mask are dynamic masking's; {} holds its masks", first);
    return;
  }
  if (data.masking == false)
    usage_fail("--masking static: {} is unmasked (mkpretrain --masking none); its masks are drawn every epoch", first);
  if (data.vocab_path.empty())
    usage_fail("dynamic masking needs the data's vocabulary ([MASK], the random replacements): give --vocab");
  if (data.max_predictions == 0)
    usage_fail("dynamic masking needs --max-predictions, the most masks per sample (create_pretraining_data.py's: 20 "
               "for 128 tokens, 80 for 512)");
  data.dynamic_masking = true;
}

// What the inputs decide before the run starts: their vocabulary (tok/vocab_stamp.h), which the loop compares with
// --vocab's and the checkpoint's (--eval-input's must be the same, or the evaluation would score ids of another
// vocabulary), and whether the loader masks them. The held-out set is masked once, so that evaluations compare.
void resolve_data(BertTrainConfig& config) {
  const PretrainInputs train = resolve_pretrain_inputs(config.data.inputs);
  if (!config.data.eval_inputs.empty()) {
    const PretrainInputs eval = resolve_pretrain_inputs(config.data.eval_inputs);
    if (!eval.masked)
      fail("{}: --eval-input is unmasked; evaluation needs a held-out set masked once, the same for every run "
           "(mkpretrain's default --masking static)", eval.sources.front().front().path);
    if (eval.vocab && train.vocab) check_same_vocabulary(*train.vocab, *eval.vocab, true, config.loop.allow_vocab_mismatch);
  }
  if (train.vocab) {
    config.loop.data_vocab_stamp = train.vocab->stamp.text();
    config.loop.data_vocab_source = train.vocab->where;
  }
  resolve_masking(config.data, train);
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
