#include "tasks/pretraining/bert_train.h"

#include "tok/text_tokenizer.h"

#include "launch/dist_env.h"
#include "tasks/pretraining/inputs.h"
#include "tasks/pretraining/pretraining_task.h"
#include "train/loop/loop.h"
#include "ckpt/checkpoint_path.h"
#include "ckpt/convert.h"
#include "model_config/config_presets.h"
#include "util/error.h"
#include "util/tool_name.h"

#include <filesystem>

#include <fmt/format.h>

namespace bk {

namespace {

// What the inputs decide before the run starts: their vocabulary (tok/vocab_stamp.h), which the loop compares with
// --vocab's and the checkpoint's (--eval-input's must be the same, or the evaluation would score ids of another
// vocabulary), and the masking rule of unmasked inputs (masking_flags.h). An unmasked held-out set is masked once,
// with the default rule from bert-eval's fixed seed, so that every run's evaluation (and bert-eval's) is over the
// same masks.
void resolve_data(BertTrainConfig& config, bool nsp_head) {
  PretrainingConfig& data = config.data;
  data.train_set = resolve_pretrain_inputs(data.inputs);
  const PretrainInputs& train = data.train_set;
  if (!nsp_head && !data.no_nsp) {
    // The architecture has no next-sentence head (ModernBERT): masked LM alone, as --no-nsp.
    data.no_nsp = true;
    if (train.next_sentence_labels && !config.loop.quiet && detect_dist_env().rank == 0)
      print_warning(fmt::format("{}: next-sentence labels ignored: the model has no next-sentence head (masked LM "
                                "only; mkpretrain --full-sentences writes rows for it)",
                                train.sources.front().front().path));
  }
  if (train.single_segment && !data.no_nsp)
    usage_fail("{}: every sample of its first rows is labelled \"is next\" (single-segment data: mkpretrain --no-nsp "
               "or --full-sentences); a next-sentence head would learn a constant: add --no-nsp",
               train.sources.front().front().path);
  if (!config.loop.quiet && detect_dist_env().rank == 0)
    for (const std::string& warning : train.warnings) print_warning(warning);
  data.masking = resolve_masking(data.masking_flags, train, data.vocab_path, data.max_predictions, true,
                                 config.loop.max_steps, config.loop.batch_schedule());
  if (data.masking && data.max_predictions == 0) data.max_predictions = data.masking->rule.max_predictions;
  if (!data.eval_inputs.empty()) {
    data.eval_set = resolve_pretrain_inputs(data.eval_inputs);
    const PretrainInputs& eval = data.eval_set;
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

// The config beside the checkpoint a run starts from: its directory's config.json, or the bert_config.json or
// config.json beside a weights file or TF prefix.
std::string init_checkpoint_config(const std::string& resolved) {
  std::error_code ec;
  const std::string config = std::filesystem::is_directory(resolved, ec)
                                 ? (std::filesystem::path(resolved) / "config.json").string()
                                 : config_beside_file(resolved);
  if (config.empty() || !std::filesystem::exists(config, ec))
    usage_fail("--config: {} has no config.json beside it; give one", resolved);
  return config;
}

}  // namespace

void run_bert_train(BertTrainConfig config) {
  config.validate();
  config.loop.vocab = TokenizerFlags{config.loop.vocab, config.loop.tokenizer}.path();  // the file decides the kind
  if (!config.loop.init_checkpoint.empty()) config.loop.init_checkpoint = resolve_checkpoint(config.loop.init_checkpoint);
  if (config.data.config_path.empty()) config.data.config_path = init_checkpoint_config(config.loop.init_checkpoint);
  // A preset's vocabulary size: --vocab's, else that of the vocabulary beside the checkpoint the run starts from
  // (phase 2 from phase 1, a resumed run).
  config.data.vocab_path = config.loop.vocab;
  if (config.data.vocab_path.empty()) {
    std::string from = config.loop.init_checkpoint;
    if (config.loop.resume)
      if (const auto latest = latest_checkpoint(config.loop.output_dir)) from = *latest;
    if (!from.empty()) config.data.vocab_path = vocab_beside_checkpoint(from);
  }
  const BertConfig model = BertConfig::load(resolve_bert_config(config.data.config_path));
  resolve_data(config, model.has_next_sentence_head());
  PretrainingTask task(config.data);
  run_training_loop(config.loop, task);
}

}  // namespace bk
