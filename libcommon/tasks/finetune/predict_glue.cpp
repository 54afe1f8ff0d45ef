#include "tasks/finetune/predict_glue.h"

#include "glue/glue_tasks.h"
#include "io/input.h"
#include "io/output.h"
#include "io/output_over_input.h"
#include "io/progress.h"
#include "tasks/finetune/finetuned_model.h"
#include "tasks/finetune/glue_metrics.h"
#include "tok/text_tokenizer.h"
#include "util/error.h"

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

}  // namespace

void predict_glue_file(const GluePredictSettings& s, const FinetunedModel& model, const TextTokenizer& tokenizer) {
  const FinetuneTaskInfo& info = *model.info;
  const GlueTask& task = *find_glue_task(info.name);
  Progress progress(s.quiet);
  const std::string text = read_file(s.predict_file);
  const std::string name = s.predict_file == "-" ? std::string("<stdin>") : s.predict_file;
  const GlueExamples examples = parse_glue_examples(task, text, name, glue_split(s.predict_file, false));
  if (examples.examples.empty()) fail("{}: no examples to predict", name);
  const GlueFeatures features = GlueFeatures::convert(task, examples, tokenizer, s.features);
  const std::string path = (fs::path(s.output_dir) / (glue_submission_name(info.name, name) + ".tsv")).string();
  refuse_output_over_inputs("-o", path, OutputKind::file, s.inputs);
  // Opened first: an output that cannot be written fails before the model runs. It makes a missing -o DIR and
  // removes it again if the run fails.
  Output out(path, s.force);
  const ClassLogitRows logits = predict_classes(model, features, s.inference);
  out.write("index\tprediction\n");
  for (size_t i = 0; i < features.size(); ++i) out.write(fmt::format("{}\t{}\n", i, glue_label(info, logits, i).first));
  // Scored before the file is put in place: a file the metrics refuse leaves nothing behind.
  nlohmann::ordered_json scores;
  if (examples.split != GlueSplit::test) scores = glue_scores(info, features, logits);
  out.commit();
  if (!scores.is_null()) std::cout << scores.dump() << std::endl;
  progress.finish(text.size(), fmt::format("{}: {} examples in {} -> {}", info.name, features.size(),
                                           s.inference.precision.text(), path));
  if (!s.quiet) tokenizer.warn_if_misfit(features.unknown());
}

void classify_glue_text(const GluePredictSettings& s, const std::string& text, const std::string& text_b,
                        const FinetunedModel& model, const TextTokenizer& tokenizer) {
  const FinetuneTaskInfo& info = *model.info;
  const GlueTask& task = *find_glue_task(info.name);
  if (task.pair() && text_b.empty()) usage_fail("--task {} classifies a pair: give --text and --text-b", info.name);
  if (!task.pair() && !text_b.empty())
    usage_fail("--task {} classifies one sentence: --text-b does not apply", info.name);
  GlueExamples examples;
  examples.split = GlueSplit::test;
  examples.examples.push_back({"interactive", text, text_b, 0, 0, 1});
  const GlueFeatures features = GlueFeatures::convert(task, examples, tokenizer, s.features);
  const ClassLogitRows logits = predict_classes(model, features, s.inference);
  const auto [label, probability] = glue_label(info, logits, 0);
  nlohmann::ordered_json line;
  line[info.kind == FinetuneKind::regression ? "value" : "label"] = label;
  if (info.kind != FinetuneKind::regression) line["probability"] = probability;
  std::cout << line.dump() << std::endl;
  if (!s.quiet) tokenizer.warn_if_misfit(features.unknown());
}

}  // namespace bk
