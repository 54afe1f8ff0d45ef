#include "tasks/finetune/bert_finetune_predict.h"

#include "ckpt/checkpoint_path.h"
#include "ckpt/checkpoint_tokenizer.h"
#include "ckpt/tokenizer_files.h"
#include "io/input.h"
#include "device/device.h"
#include "device/precision.h"
#include "launch/dist_env.h"
#include "tasks/finetune/finetuned_model.h"
#include "tasks/finetune/predict_glue.h"
#include "tasks/finetune/predict_squad.h"
#include "tok/tokenizer_json.h"
#include "util/error.h"
#include "util/utf8.h"

namespace bk {

namespace {

// --context, or with '-' the paragraph read from stdin (checked as UTF-8 as the flag's text is).
std::string read_context(const FinetunePredictConfig& config) {
  if (config.context != "-") return config.context;
  std::string text = read_file("-");
  if (const size_t at = utf8_invalid_offset(text); at != std::string_view::npos)
    usage_fail("--context -: byte {} of stdin is not UTF-8 (the answer is printed as JSON)", at);
  return text;
}

// The vocabulary the features are made with, and its case: ckpt/checkpoint_tokenizer.h's rule (what the
// fine-tuned checkpoint carries, bert-finetune train writing its tokenizer into it, or --vocab and --cased, which
// must agree with it).
using Tokenization = CheckpointTokenizer;

Tokenization resolve_tokenization(const FinetunePredictConfig& config) {
  if (config.checkpoint.empty()) return {config.features.tokenizer.path(), config.features.tokenizer.cased};
  return checkpoint_tokenizer(resolve_checkpoint(config.checkpoint), config.features.tokenizer,
                              config.allow_vocab_mismatch, "predict", "--vocab or --tokenizer");
}

// Unset, the length is the one the model was fine-tuned with (task.json), else the task's default.
template <typename FeatureOptions>
FeatureOptions with_model_length(FeatureOptions options, const FinetunePredictConfig& config,
                                 const FinetunedModel& model) {
  if (!config.features.max_seq_length && model.fine_tuned_length > 0)
    options.max_seq_length = static_cast<int>(model.fine_tuned_length);
  options.validate();
  return options;
}

// Unset, SQuAD's windows are those the model's evaluation used in training (task.json), else run_squad.py's.
SquadFeatureOptions with_model_windows(SquadFeatureOptions options, const FinetunePredictConfig& config,
                                       const FinetunedModel& model) {
  if (!config.features.doc_stride && model.fine_tuned_doc_stride > 0) options.doc_stride = model.fine_tuned_doc_stride;
  if (!config.features.max_query_length && model.fine_tuned_max_query_length > 0)
    options.max_query_length = model.fine_tuned_max_query_length;
  return with_model_length(options, config, model);
}

// What the run reads, never written over nor written into: the predict file, the vocabulary, and the checkpoint
// with everything it holds (a run's `latest` too).
std::vector<std::string> read_paths(const FinetunePredictConfig& config, const Tokenization& tokenization) {
  std::vector<std::string> paths = checkpoint_read_paths(resolve_checkpoint(config.checkpoint));
  paths.push_back(config.predict_file);
  for (const std::string& path : tokenizer_file_paths(tokenization.path)) paths.push_back(path);
  return paths;
}

SquadPredictSettings squad_settings(const FinetunePredictConfig& config, const Tokenization& tokenization,
                                    const FinetunedModel& model, const ChosenPrecision& precision) {
  SquadPredictSettings s;
  s.features = with_model_windows(config.features.squad_options(), config, model);
  s.post.n_best_size = config.n_best_size;
  s.post.max_answer_length = config.max_answer_length;
  s.post.do_lower_case = !tokenization.cased;
  s.post.version_2_with_negative = model.info->name == "squad2";
  s.post.null_score_diff_threshold = config.null_score_diff_threshold;
  s.post.validate();
  s.inference = {config.batch_size, precision, config.unpadded};
  s.predict_file = config.predict_file;
  s.outputs = {config.output_dir, config.save_logits, s.post.version_2_with_negative, config.force,
               read_paths(config, tokenization)};
  s.quiet = config.quiet;
  return s;
}

GluePredictSettings glue_settings(const FinetunePredictConfig& config, const Tokenization& tokenization,
                                  const FinetunedModel& model, const ChosenPrecision& precision) {
  GluePredictSettings s;
  s.features = with_model_length(config.features.glue_options(), config, model);
  s.inference = {config.batch_size, precision};
  s.predict_file = config.predict_file;
  s.output_dir = config.output_dir;
  s.force = config.force;
  s.quiet = config.quiet;
  s.inputs = read_paths(config, tokenization);
  return s;
}

}  // namespace

void run_bert_finetune_predict(const FinetunePredictConfig& config) {
  const Tokenization tokenization = resolve_tokenization(config);
  config.validate();
  const at::Device device = choose_device(config.device, detect_dist_env());
  set_up_cuda_runtime(device);
  const ChosenPrecision precision = choose_precision(config.precision, device, !config.quiet);
  const FinetunedModel model = load_finetuned_model(config.checkpoint, config.features.task, device);
  const TextTokenizer tokenizer = tokenization.load();
  check_vocab_matches(model, tokenizer.size(), tokenization.path);
  if (model.info->kind == FinetuneKind::span) {
    const SquadPredictSettings settings = squad_settings(config, tokenization, model, precision);
    if (config.interactive()) answer_squad_question(settings, config.question, read_context(config), model, tokenizer);
    else predict_squad_file(settings, model, tokenizer);
  } else {
    const GluePredictSettings settings = glue_settings(config, tokenization, model, precision);
    if (config.interactive()) classify_glue_text(settings, config.text, config.text_b, model, tokenizer);
    else predict_glue_file(settings, model, tokenizer);
  }
}

}  // namespace bk
