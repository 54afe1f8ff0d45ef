#include "tasks/finetune/squad_predict.h"

#include "squad/squad_examples.h"
#include "squad/squad_features.h"
#include "squad/squad_logits.h"
#include "squad/squad_predictions.h"
#include "squad/squad_scoring.h"
#include "io/input.h"
#include "io/output.h"
#include "io/output_over_input.h"
#include "io/staged_output.h"
#include "tasks/finetune/bert_finetune_predict.h"
#include "tok/full_tokenizer.h"
#include "tok/vocab.h"
#include "util/error.h"
#include "util/printable.h"

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

namespace {

std::vector<std::string> squad_output_paths(const FinetunePredictConfig& config, bool v2) {
  std::vector<std::string> paths = {(fs::path(config.output_dir) / "predictions.json").string(),
                                    (fs::path(config.output_dir) / "nbest_predictions.json").string()};
  if (v2) paths.push_back((fs::path(config.output_dir) / "null_odds.json").string());
  return paths;
}

}  // namespace

void check_squad_outputs(const FinetunePredictConfig& config, bool v2) {
  const std::vector<std::string> paths = squad_output_paths(config, v2);
  const std::vector<std::string> inputs = {config.predict_file, config.features.vocab_path};
  std::error_code ec;
  for (const std::string& path : paths) {
    refuse_output_over_inputs("-o", path, OutputKind::file, inputs);
    if (!config.save_logits.empty() && fs::weakly_canonical(config.save_logits, ec) == fs::weakly_canonical(path, ec))
      usage_fail("--save-logits {}: is where the predictions go; name another file", config.save_logits);
  }
  refuse_output_over_inputs("--save-logits", config.save_logits, OutputKind::file, inputs);
  if (config.force) return;
  std::vector<std::string> existing = paths;
  if (!config.save_logits.empty() && config.save_logits != "-") existing.push_back(config.save_logits);
  for (const std::string& p : existing)
    if (fs::exists(p)) fail("{}: already exists; use --force to overwrite it", p);
}

std::vector<SquadGoldQuestion> read_squad_gold(const std::string& dataset_json, const std::string& dataset_name,
                                               bool v2) {
  std::vector<SquadGoldQuestion> gold = parse_squad_gold(dataset_json, dataset_name);
  if (!v2 && has_answers(gold))
    for (const SquadGoldQuestion& q : gold)
      if (q.answers.empty())
        fail("{}: question {} has no answer, which SQuAD v1.1's evaluation cannot score (a v2.0 file? --task squad2)",
             dataset_name, printable_excerpt(q.id));
  return gold;
}

nlohmann::ordered_json write_squad_outputs(const FinetunePredictConfig& config,
                                           const std::vector<SquadGoldQuestion>& gold, const SquadExamples& examples,
                                           const SquadFeatures& features, const SquadLogits& logits,
                                           const SquadPredictOptions& options) {
  const SquadPredictions predictions = predict_squad(examples, features, logits, options);
  // Scored before anything is written: a file the official scorer refuses leaves no predictions behind.
  const nlohmann::ordered_json scores = has_answers(gold) ? official_scores(gold, predictions) : nlohmann::ordered_json();
  auto write_logits = [&](const std::string& path) {
    Output out(path, true);
    SquadLogitsWriter writer(out);
    for (size_t i = 0; i < logits.size(); ++i)
      writer.write(logits.unique_ids[i], logits.start_logits(i), logits.end_logits(i));
    out.commit();
  };
  StagedFiles files;  // the logits and the predictions go in place together, or none of them
  if (!config.save_logits.empty() && config.save_logits != "-") write_logits(files.stage(config.save_logits));
  const auto written = squad_prediction_files(predictions);
  const std::vector<std::string> paths = squad_output_paths(config, options.version_2_with_negative);
  for (size_t i = 0; i < written.size(); ++i) write_file_atomic(files.stage(paths[i]), written[i].second);
  files.commit();
  if (config.save_logits == "-") write_logits("-");
  return scores;
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
