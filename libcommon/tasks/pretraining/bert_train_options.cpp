#include "tasks/pretraining/bert_train.h"

#include "cli/options.h"
#include "tasks/attention_option.h"
#include "tok/text_tokenizer.h"
#include "util/error.h"

#include <cstdint>
#include <limits>

namespace bk {

void BertTrainConfig::validate() const {
  loop.validate();
  if (data.inputs.empty()) usage_fail("--input: give at least one HDF5 file or directory");
  if (data.config_path.empty() && loop.init_checkpoint.empty())
    usage_fail("--config is required (without it, --init-checkpoint's config is taken)");
  if (data.max_predictions < 0) usage_fail("--max-predictions must not be negative, got {}", data.max_predictions);
  if (data.max_predictions > std::numeric_limits<int32_t>::max())  // the masking rule counts in int
    usage_fail("--max-predictions {}: more than any row holds", data.max_predictions);
  if (data.eval_inputs.empty() && (loop.eval_every_samples > 0 || loop.target_score || !loop.mlperf_log.empty()))
    usage_fail("--eval-every-samples, --target-mlm-accuracy and --mlperf-log need --eval-input");
  if (!data.eval_inputs.empty() && data.eval_samples == 0) usage_fail("--eval-samples must be positive");
  // 2^24 tokens: far past any WordPiece vocabulary, and an embedding a GPU could still hold at small widths.
  if (data.vocab_size && (*data.vocab_size < 1 || *data.vocab_size > (int64_t{1} << 24)))
    usage_fail("--vocab-size must be from 1 to 16777216, got {}", *data.vocab_size);
  data.masking_flags.validate();
  if (loop.target_score && (*loop.target_score <= 0 || *loop.target_score > 1))
    usage_fail("--target-mlm-accuracy must be in (0, 1], got {}", *loop.target_score);
}

void add_bert_train_options(Options& options, BertTrainConfig& c) {
  const PretrainingConfig d;  // the defaults, written once in PretrainingConfig's initialisers
  options.add()
    ("config", po::value(&c.data.config_path)->value_name("FILE"),
     "bert_config.json (Google's or HF's keys, BERT or ModernBERT),\nor a preset (see man bert-train):\n"
     "bert-base, bert-large,\nbert-L{2,4,6,8,10,12}-H{128,256,512,768},\nmodernbert-base, modernbert-large;\n"
     "default: --init-checkpoint's config.json")
    ("input", po::value(&c.data.inputs)->required()->multitoken()->value_name("PATH..."),
     "HDF5 files, directories of them, or bin4 directories")
    ("max-predictions", po::value(&c.data.max_predictions)->default_value(d.max_predictions, "0: from the data")
                            ->value_name("P"),
     "masked positions per sample in the data (the width of masked_lm_positions; varlength files need it given)")
    ("eval-input", po::value(&c.data.eval_inputs)->multitoken()->value_name("PATH..."),
     "held-out HDF5 files or directories: evaluate during training (MLPerf's eval set)")
    ("eval-samples", po::value(&c.data.eval_samples)->default_value(d.eval_samples)->value_name("N"),
     "the first N samples of --eval-input, the same set every time, split over the processes")
    ("eval-every-samples", po::value(&c.loop.eval_every_samples)->value_name("N"),
     "training samples (global) between evaluations (default: only at the end)")
    ("target-mlm-accuracy", po::value<double>()->value_name("X")->notifier([&c](double x) { c.loop.target_score = x; }),
     "stop with a checkpoint once eval_mlm_accuracy reaches X (MLPerf: 0.720)")
    ("mlperf-log", po::value(&c.loop.mlperf_log)->value_name("FILE")->notifier([&c](const std::string&) {
       c.loop.mlperf_benchmark = "bert";
     }), "MLCommons :::MLLOG lines (run, hyperparameters, evaluations) to FILE")
    ("vocab", po::value(&c.loop.vocab)->value_name("FILE"),
     "the data's vocabulary, written into every checkpoint with its tokenizer files, so that bert-eval, "
     "ckpt-convert and bert-finetune find it (default: the one beside --init-checkpoint, if any)")
    ("tokenizer", po::value(&c.loop.tokenizer)->value_name("FILE"), kTokenizerFlagHelp)
    ("vocab-size", optional_value(c.data.vocab_size)->value_name("N"),
     "a preset --config's vocabulary size (default: --vocab's size, else 30522)")
    ("no-nsp", po::bool_switch(&c.data.no_nsp), "masked-LM loss only, no next-sentence loss (mkpretrain --no-nsp data)")
    ("batch-size-warmup-steps", po::value(&c.loop.batch_size_warmup_steps)->value_name("N"),
     "raise the batch linearly, in whole micro-batches, from --batch-size-warmup-start to --train-batch-size over "
     "the first N steps (ModernBERT's batch-size warm-up); the learning rate keeps its schedule")
    ("batch-size-warmup-start", po::value(&c.loop.batch_size_warmup_start)->value_name("B"),
     "the batch per process at step 1 of a batch-size warm-up (a multiple of the micro-batch)")
    ("global-data-order", po::bool_switch(&c.data.global_data_order),
     "every worker reads the single-process sample order and keeps its slice of each global batch");
  add_masking_options(options, c.data.masking_flags,
                      "dynamic: draw the masks of unmasked data (mkpretrain --masking none) at every epoch; static: "
                      "the data's own (default: as the data is)",
                      /*schedule=*/true);
  add_attention_option(options, c.data.unpadded,
                       "unpadded: the encoder computes on real tokens only (needed for packed input); padded: rows with a mask");
  add_loop_options(options, c.loop);
}

}  // namespace bk
