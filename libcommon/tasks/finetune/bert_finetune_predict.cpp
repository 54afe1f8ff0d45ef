#include "tasks/finetune/bert_finetune_predict.h"

#include "ckpt/checkpoint_path.h"

#include "io/progress.h"
#include "glue/glue_features.h"
#include "glue/glue_tasks.h"
#include "squad/squad_examples.h"
#include "squad/squad_features.h"
#include "io/input.h"
#include "io/output.h"
#include "io/output_over_input.h"
#include "device/device.h"
#include "launch/dist_env.h"
#include "tasks/finetune/finetune_config.h"
#include "tasks/finetune/finetune_inference.h"
#include "tasks/finetune/finetuned_model.h"
#include "tasks/finetune/glue_metrics.h"
#include "squad/squad_logits.h"
#include "squad/squad_predictions.h"
#include "squad/squad_scoring.h"
#include "tasks/finetune/squad_predict.h"
#include "tok/full_tokenizer.h"
#include "tok/vocab.h"
#include "util/error.h"
#include "util/py_json.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>

namespace bk {

namespace fs = std::filesystem;

namespace {

// The file a GLUE submission expects for a task's predictions (MNLI: matched and mismatched apart).
std::string glue_submission_name(const std::string& task, const std::string& input) {
  if (task == "mnli")
    return fs::path(input).filename().string().find("mismatched") != std::string::npos ? "MNLI-mm" : "MNLI-m";
  static const std::pair<const char*, const char*> kNames[] = {
      {"cola", "CoLA"}, {"sst-2", "SST-2"}, {"mrpc", "MRPC"}, {"sts-b", "STS-B"}, {"qqp", "QQP"},
      {"qnli", "QNLI"}, {"rte", "RTE"},     {"wnli", "WNLI"}};
  for (const auto& [name, file] : kNames)
    if (task == name) return file;
  return task;
}

// The scores of `predicted` against the file's labels, as the task's metrics define them.
nlohmann::ordered_json glue_scores(const FinetuneTaskInfo& info, const GlueFeatures& features,
                                   const ClassLogitRows& logits) {
  nlohmann::ordered_json scores;
  scores["task"] = info.name;
  scores["examples"] = features.size();
  if (info.kind == FinetuneKind::regression) {
    std::vector<double> values(logits.logits.begin(), logits.logits.end()), gold;
    for (size_t i = 0; i < features.size(); ++i) gold.push_back(features.label_value(i));
    scores["pearson"] = pearson(values, gold);
    scores["spearman"] = spearman(values, gold);
    return scores;
  }
  std::vector<int64_t> predicted, gold;
  for (size_t i = 0; i < features.size(); ++i) {
    const float* row = logits.logits.data() + i * static_cast<size_t>(logits.num_labels);
    predicted.push_back(std::max_element(row, row + logits.num_labels) - row);
    gold.push_back(features.label_id(i));
  }
  scores["accuracy"] = accuracy(predicted, gold);
  if (info.metric == "f1") scores["f1"] = f1_score(predicted, gold);
  if (info.metric == "mcc") scores["mcc"] = matthews_corrcoef(predicted, gold);
  return scores;
}

// The label (or value) of row i and its probability (softmax over the labels; 1 for a regression).
std::pair<std::string, double> glue_label(const FinetuneTaskInfo& info, const ClassLogitRows& logits, size_t i) {
  const float* row = logits.logits.data() + i * static_cast<size_t>(logits.num_labels);
  if (info.kind == FinetuneKind::regression) return {fmt::format("{:.6g}", row[0]), 1.0};
  const int64_t best = std::max_element(row, row + logits.num_labels) - row;
  double total = 0;
  for (int64_t k = 0; k < logits.num_labels; ++k) total += std::exp(static_cast<double>(row[k] - row[best]));
  return {info.labels[static_cast<size_t>(best)], 1.0 / total};
}

void predict_glue(const FinetunePredictConfig& config, const FinetunedModel& model, FullTokenizer& tokenizer) {
  const FinetuneTaskInfo& info = *model.info;
  const GlueTask& task = *find_glue_task(info.name);
  const InferenceOptions inference{config.batch_size, config.precision};
  if (config.interactive()) {
    if (task.pair() && config.text_b.empty()) usage_fail("--task {} classifies a pair: give --text and --text-b", info.name);
    if (!task.pair() && !config.text_b.empty()) usage_fail("--task {} classifies one sentence: --text-b does not apply", info.name);
    GlueExamples examples;
    examples.split = GlueSplit::test;
    examples.examples.push_back({"interactive", config.text, config.text_b, 0, 0, 1});
    const GlueFeatures features = GlueFeatures::convert(task, examples, tokenizer, config.features.glue_options());
    const ClassLogitRows logits = predict_classes(model, features, inference);
    const auto [label, probability] = glue_label(info, logits, 0);
    nlohmann::ordered_json line;
    line[info.kind == FinetuneKind::regression ? "value" : "label"] = label;
    if (info.kind != FinetuneKind::regression) line["probability"] = probability;
    std::cout << line.dump() << std::endl;
    return;
  }
  Progress progress(config.quiet);
  const std::string text = read_file(config.predict_file);
  const std::string name = config.predict_file == "-" ? std::string("<stdin>") : config.predict_file;
  const GlueExamples examples = parse_glue_examples(task, text, name, glue_split(config.predict_file, false));
  if (examples.examples.empty()) fail("{}: no examples to predict", name);
  const GlueFeatures features = GlueFeatures::convert(task, examples, tokenizer, config.features.glue_options());
  const std::string path = (fs::path(config.output_dir) / (glue_submission_name(info.name, name) + ".tsv")).string();
  refuse_output_over_inputs("-o", path, OutputKind::file, {config.predict_file, config.features.vocab_path});
  // Opened first: an output that cannot be written fails before the model runs. It makes a missing -o DIR and
  // removes it again if the run fails.
  Output out(path, config.force);
  const ClassLogitRows logits = predict_classes(model, features, inference);
  out.write("index\tprediction\n");
  for (size_t i = 0; i < features.size(); ++i) out.write(fmt::format("{}\t{}\n", i, glue_label(info, logits, i).first));
  // Scored before the file is put in place: a file the metrics refuse leaves nothing behind.
  nlohmann::ordered_json scores;
  if (examples.split != GlueSplit::test) scores = glue_scores(info, features, logits);
  out.commit();
  if (!scores.is_null()) std::cout << scores.dump() << std::endl;
  progress.finish(text.size(), fmt::format("{}: {} examples -> {}", info.name, features.size(), path));
}

void predict_squad(const FinetunePredictConfig& config, const FinetunedModel& model, FullTokenizer& tokenizer) {
  const bool v2 = model.info->name == "squad2";
  const InferenceOptions inference{config.batch_size, config.precision, config.unpadded};
  const SquadPredictOptions post = squad_predict_options(config, v2);
  if (config.interactive()) {
    const SquadExamples examples = single_squad_example(config.question, config.context);
    const SquadFeatures features = SquadFeatures::convert(examples, tokenizer, config.features.squad_options());
    std::cout << best_squad_answer(examples, features, predict_spans(model, features, inference), post).dump()
              << std::endl;
    return;
  }
  check_squad_outputs(config, v2);  // before the model runs
  Progress progress(config.quiet);
  const std::string text = read_file(config.predict_file);
  const std::string name = config.predict_file == "-" ? std::string("<stdin>") : config.predict_file;
  const SquadExamples examples = parse_squad_examples(text, name, {false, v2});
  const std::vector<SquadGoldQuestion> gold = read_squad_gold(text, name, v2);
  const SquadFeatures features = SquadFeatures::convert(examples, tokenizer, config.features.squad_options());
  const SquadLogits logits = predict_spans(model, features, inference);
  const nlohmann::ordered_json scores = write_squad_outputs(config, gold, examples, features, logits, post);
  if (!scores.is_null()) std::cout << py_json_dumps(scores) << std::endl;  // as the official script prints them
  progress.finish(text.size(), fmt::format("{}: {} questions, {} features -> {}", model.info->name,
                                           examples.examples.size(), features.features().size(), config.output_dir));
}

}  // namespace

void run_bert_finetune_predict(FinetunePredictConfig config) {
  if (config.features.vocab_path.empty() && !config.checkpoint.empty()) {
    // The vocabulary a fine-tuned checkpoint carries (bert-finetune train writes it), with its case.
    config.features.vocab_path = vocab_beside_checkpoint(resolve_checkpoint(config.checkpoint));
    if (config.features.vocab_path.empty())
      usage_fail("--vocab is required: there is no vocab.txt beside {}", config.checkpoint);
    if (tokenizer_lower_case(config.features.vocab_path) == false) config.features.cased = true;
  }
  config.validate();
  const at::Device device = choose_device(config.device, detect_dist_env());
  set_up_cuda_runtime(device);
  const FinetunedModel model = load_finetuned_model(config.checkpoint, config.features.task, device);
  // Unset, the length is the one the model was fine-tuned with (task.json), else the task's default.
  if (!config.features.max_seq_length && model.fine_tuned_length > 0)
    config.features.max_seq_length = static_cast<int>(model.fine_tuned_length);
  config.validate();
  const Vocab vocab = Vocab::load(config.features.vocab_path);
  check_vocab_matches(model, vocab.size(), config.features.vocab_path);
  FullTokenizer tokenizer(vocab, !config.features.cased);
  if (model.info->kind == FinetuneKind::span) predict_squad(config, model, tokenizer);
  else predict_glue(config, model, tokenizer);
}

}  // namespace bk
