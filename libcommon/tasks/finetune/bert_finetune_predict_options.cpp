#include "tasks/finetune/bert_finetune_predict.h"

#include "cli/options.h"
#include "tok/vocab_stamp.h"
#include "tasks/finetune/finetune_config.h"
#include "tasks/attention_option.h"
#include "util/utf8.h"
#include "util/error.h"

namespace bk {

void FinetunePredictConfig::validate() const {
  const FinetuneTaskInfo& info = finetune_task_info(features.task);
  features.validate_tokenization(/*vocab_required=*/false);  // predict reads the one its checkpoint carries
  if (checkpoint.empty()) usage_fail("--checkpoint is required");
  const bool span = info.kind == FinetuneKind::span;
  if (interactive()) {
    if (!predict_file.empty()) usage_fail("--predict-file and --question/--text exclude each other");
    if (!save_logits.empty()) usage_fail("--save-logits goes with --predict-file");
    if (span && (question.empty() || context.empty()))
      usage_fail("--task {} answers a --question about a --context: give both", info.name);
    if (span && (!text.empty() || !text_b.empty()))
      usage_fail("--text and --text-b are for GLUE tasks; --task {} takes --question and --context", info.name);
    if (!span && (!question.empty() || !context.empty()))
      usage_fail("--question and --context are for squad and squad2; --task {} takes --text", info.name);
    if (!span && text.empty()) usage_fail("--text-b needs --text (the first sentence of the pair)");
    for (const auto& [flag, value] : {std::pair{"--question", &question}, {"--context", &context},
                                      {"--text", &text}, {"--text-b", &text_b}})
      if (const size_t at = utf8_invalid_offset(*value); at != std::string_view::npos)
        usage_fail("{}: byte {} is not UTF-8 (the answer is printed as JSON)", flag, at);
  } else {
    if (predict_file.empty()) usage_fail("give --predict-file (with -o), or --question/--context or --text");
    if (output_dir.empty()) usage_fail("--predict-file needs -o DIR for the predictions");
    if (!save_logits.empty() && !span) usage_fail("--save-logits is for squad and squad2");
    if (!save_logits.empty() && unpadded)
      usage_fail("--save-logits writes the logits of every position, padding included: it needs --attention padded "
                 "(its default)");
  }
  if (n_best_size < 1) usage_fail("--n-best-size must be positive, got {}", n_best_size);
  if (max_answer_length < 1) usage_fail("--max-answer-length must be positive, got {}", max_answer_length);
  if (batch_size < 1) usage_fail("--batch-size must be positive, got {}", batch_size);
  if (device != "cpu" && device != "cuda") usage_fail("--device must be cpu or cuda, got '{}'", device);
}

void settle_predict_attention(const Options& options, FinetunePredictConfig& c) {
  if (!c.save_logits.empty() && !options.has("attention")) c.unpadded = false;
}

void add_bert_finetune_predict_options(Options& options, FinetunePredictConfig& c) {
  const FinetunePredictConfig d;
  add_finetune_feature_options(options, c.features, /*training=*/false);
  add_attention_option(options, c.unpadded,
                       "SQuAD: unpadded (the encoder on each feature's real tokens only; padding never ranks among "
                       "the n-best, where run_squad.py's can, so an answer can differ) or padded (every position, "
                       "run_squad.py's predictions exactly; the default with --save-logits)");
  options.add()
    ("checkpoint", po::value(&c.checkpoint)->required()->value_name("DIR"), "a fine-tuned checkpoint directory")
    ("predict-file", po::value(&c.predict_file)->value_name("FILE"),
     "the SQuAD JSON or GLUE TSV file to predict (\"-\" = stdin)")
    ("output-dir,o", po::value(&c.output_dir)->value_name("DIR"), "where the prediction files go")
    ("force,f", po::bool_switch(&c.force), "replace prediction files that exist")
    (kAllowVocabMismatchFlag, po::bool_switch(&c.allow_vocab_mismatch), kAllowVocabMismatchHelp)
    ("save-logits", po::value(&c.save_logits)->value_name("FILE"),
     "SQuAD: also write every feature's start and end logits (JSON lines)")
    ("question", po::value(&c.question)->value_name("TEXT"), "SQuAD: a question to answer from --context")
    ("context", po::value(&c.context)->value_name("TEXT"),
     "SQuAD: the paragraph holding the answer ('-': read it from stdin)")
    ("text", po::value(&c.text)->value_name("TEXT"), "GLUE: a sentence to classify")
    ("text-b", po::value(&c.text_b)->value_name("TEXT"), "GLUE: the second sentence of a pair task")
    ("n-best-size", po::value(&c.n_best_size)->default_value(d.n_best_size)->value_name("N"),
     "SQuAD: start and end candidates per feature, answers kept per question")
    ("max-answer-length", po::value(&c.max_answer_length)->default_value(d.max_answer_length)->value_name("N"),
     "SQuAD: the longest answer in pieces")
    ("null-score-diff-threshold",
     po::value(&c.null_score_diff_threshold)->default_value(d.null_score_diff_threshold)->value_name("X"),
     "squad2: answer \"\" when the null score exceeds the best answer's by more than X")
    ("batch-size", po::value(&c.batch_size)->default_value(d.batch_size)->value_name("B"), "features per forward pass")
    ("precision", choice_value("precision", kPrecisionFlags, c.precision, d.precision)->value_name("P"), kPrecisionHelp)
    ("device", po::value(&c.device)->default_value(d.device)->value_name("D"), "cpu or cuda");
}

}  // namespace bk
