#include "tasks/finetune/bert_finetune_train.h"

#include "cli/options.h"
#include "tasks/attention_option.h"
#include "tasks/finetune/bert_finetune_features.h"
#include "util/error.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace bk {

// google-research/bert's run_classifier.py / run_squad.py defaults (AdamW-style Adam with weight decay 0.01, linear
// decay after a 10% warm-up, batch 32; the learning rate, 5e-5, is the task's: tasks/lr_recipe.h).
FinetuneTrainConfig::FinetuneTrainConfig() {
  loop.optimizer = OptimizerKind::adamw;
  loop.lr_decay = LrDecay::linear;
  loop.warmup_proportion = 0.1;
  loop.train_batch_size = 32;
  loop.keep_best = true;
}

void FinetuneTrainConfig::validate() const {
  task.validate();
  loop.validate();
}

void add_bert_finetune_train_options(Options& options, FinetuneTrainConfig& c) {
  const FinetuneTrainConfig d;
  options.add()
    ("task", po::value(&c.task.task)->required()->value_name("T"),
     fmt::format("{}", fmt::join(finetune_task_names(), ", ")).c_str())
    ("train-file", po::value(&c.task.train_file)->required()->value_name("FILE"),
     "training features (bert-finetune features --train)")
    ("eval-file", po::value(&c.task.eval_file)->value_name("FILE"),
     "scored after every epoch, the best model kept in OUTPUT_DIR/best: GLUE features with labels, or the SQuAD "
     "dev JSON itself (official EM/F1 of its predictions; needs the model's tokenizer)")
    ("vocab", po::value(&c.task.vocab_path)->value_name("FILE"), "the model's vocabulary: makes a SQuAD --eval-file's features and is written into every checkpoint "
     "(default: the tokenizer beside --init-checkpoint)")
    ("tokenizer", po::value(&c.task.tokenizer_path)->value_name("FILE"), kTokenizerFlagHelp)
    ("cased", po::bool_switch(&c.task.cased), "SQuAD --eval-file: keep case and accents")
    ("epochs", po::value(&c.task.epochs)->default_value(d.task.epochs)->value_name("N"), "passes over the training features");
  add_squad_window_options(options, c.task.doc_stride, c.task.max_query_length);
  add_attention_option(options, c.task.unpadded,
                       "classification: unpadded computes on each feature's real tokens only, padded on rows cut to the "
                       "batch's longest; SQuAD is always padded (the references' softmax spans every position)");
  add_loop_options(options, c.loop, d.loop, /*steps_from_data=*/true);
}

}  // namespace bk
