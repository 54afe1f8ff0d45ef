#include "tasks/finetune/squad_predict.h"

#include "finetune/squad_examples.h"
#include "finetune/squad_features.h"
#include "finetune/squad_logits.h"
#include "finetune/squad_predictions.h"
#include "finetune/squad_scoring.h"
#include "io/input.h"
#include "io/output.h"
#include "tasks/finetune/bert_finetune_predict.h"
#include "tok/full_tokenizer.h"
#include "tok/vocab.h"
#include "util/error.h"

#include <filesystem>

namespace bk {

namespace fs = std::filesystem;

namespace {

bool has_answers(const std::vector<SquadGoldQuestion>& gold) {
  for (const SquadGoldQuestion& q : gold)
    if (!q.answers.empty()) return true;
  return false;
}

// The official scores of `predictions` on `gold`: evaluate-v1.1.py's for SQuAD v1.1, evaluate-v2.0.py's with the
// null odds as no-answer probabilities for v2.0.
nlohmann::ordered_json official_scores(const std::vector<SquadGoldQuestion>& gold, const SquadPredictions& predictions) {
  if (!predictions.version_2_with_negative) return score_squad_v1(gold, predictions.answers()).scores;
  const SquadNullOdds odds = predictions.null_odds();
  return score_squad_v2(gold, predictions.answers(), &odds).scores;
}

}  // namespace

SquadPredictOptions squad_predict_options(const FinetunePredictConfig& config, bool v2) {
  SquadPredictOptions o;
  o.n_best_size = config.n_best_size;
  o.max_answer_length = config.max_answer_length;
  o.do_lower_case = !config.features.cased;
  o.version_2_with_negative = v2;
  o.null_score_diff_threshold = config.null_score_diff_threshold;
  o.validate();
  return o;
}

SquadExamples single_squad_example(const std::string& question, const std::string& context) {
  const nlohmann::json file = {
      {"version", "1.1"},
      {"data", {{{"title", "interactive"},
                 {"paragraphs", {{{"context", context}, {"qas", {{{"id", "interactive"}, {"question", question}}}}}}}}}}};
  return parse_squad_examples(file.dump(), "--question/--context", {});
}

nlohmann::ordered_json best_squad_answer(const SquadExamples& examples, const SquadFeatures& features,
                                         const SquadLogits& logits, const SquadPredictOptions& options) {
  const SquadPredictions predictions = predict_squad(examples, features, logits, options);
  const SquadPrediction& p = predictions.predictions.at(0);
  nlohmann::ordered_json answer;
  answer["answer"] = p.text;
  for (const SquadNbestEntry& e : p.nbest) {
    if (e.text != p.text) continue;
    answer["probability"] = e.probability;
    answer["start_logit"] = e.start_logit;
    answer["end_logit"] = e.end_logit;
    break;
  }
  if (options.version_2_with_negative) answer["null_odds"] = p.null_odds;
  return answer;
}

void check_squad_outputs(const FinetunePredictConfig& config, bool v2) {
  if (config.force) return;
  std::vector<fs::path> paths = {fs::path(config.output_dir) / "predictions.json",
                                 fs::path(config.output_dir) / "nbest_predictions.json"};
  if (v2) paths.push_back(fs::path(config.output_dir) / "null_odds.json");
  if (!config.save_logits.empty() && config.save_logits != "-") paths.emplace_back(config.save_logits);
  for (const fs::path& p : paths)
    if (fs::exists(p)) fail("{}: already exists; use --force to overwrite it", p.string());
}

nlohmann::ordered_json write_squad_outputs(const FinetunePredictConfig& config, const std::string& dataset_json,
                                           const std::string& dataset_name, const SquadExamples& examples,
                                           const SquadFeatures& features, const SquadLogits& logits,
                                           const SquadPredictOptions& options) {
  const SquadPredictions predictions = predict_squad(examples, features, logits, options);
  const std::vector<SquadGoldQuestion> gold = parse_squad_gold(dataset_json, dataset_name);
  if (!config.save_logits.empty()) {
    Output out(config.save_logits, config.force);
    SquadLogitsWriter writer(out);
    for (size_t i = 0; i < logits.size(); ++i)
      writer.write(logits.unique_ids[i], logits.start_logits(i), logits.end_logits(i));
    out.commit();
  }
  write_squad_predictions(predictions, config.output_dir, config.force);
  return has_answers(gold) ? official_scores(gold, predictions) : nlohmann::ordered_json();
}

struct SquadEvalSet {
  std::vector<SquadGoldQuestion> gold;
  std::unique_ptr<Vocab> vocab;  // the features point into it
  SquadExamples examples;
  SquadFeatures features;
  SquadPredictOptions options;
};

void SquadEvalSetDeleter::operator()(SquadEvalSet* set) const { delete set; }

SquadEvalSetPtr load_squad_eval_set(const std::string& path, const std::string& vocab_path, bool cased, bool v2,
                                    int max_seq_length) {
  SquadEvalSetPtr set(new SquadEvalSet);
  const std::string json = read_file(path);
  set->gold = parse_squad_gold(json, path);
  if (!has_answers(set->gold)) fail("{}: no answers to score predictions against", path);
  set->vocab = std::make_unique<Vocab>(Vocab::load(vocab_path));
  FullTokenizer tokenizer(*set->vocab, !cased);
  set->examples = parse_squad_examples(json, path, {false, v2});
  SquadFeatureOptions feature_options;
  feature_options.max_seq_length = max_seq_length;
  feature_options.validate();
  set->features = SquadFeatures::convert(set->examples, tokenizer, feature_options);
  set->options.do_lower_case = !cased;
  set->options.version_2_with_negative = v2;
  return set;
}

const SquadFeatures& squad_eval_features(const SquadEvalSet& set) { return set.features; }

nlohmann::ordered_json score_squad(const SquadEvalSet& set, const SquadLogits& logits) {
  return official_scores(set.gold, predict_squad(set.examples, set.features, logits, set.options));
}

}  // namespace bk
