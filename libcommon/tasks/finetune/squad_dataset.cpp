#include "tasks/finetune/squad_dataset.h"

#include "io/input.h"
#include "util/error.h"
#include "util/printable.h"

namespace bk {

bool SquadDataset::has_answers() const {
  for (const SquadGoldQuestion& q : gold)
    if (!q.answers.empty()) return true;
  return false;
}

SquadDataset read_squad_dataset(const std::string& json, const std::string& name, const TextTokenizer& tokenizer,
                                const SquadFeatureOptions& features, bool v2) {
  SquadDataset d;
  d.examples = parse_squad_examples(json, name, {false, v2});
  d.gold = parse_squad_gold(json, name);
  if (!v2 && d.has_answers())
    for (const SquadGoldQuestion& q : d.gold)
      if (q.answers.empty())
        fail("{}: question {} has no answer, which SQuAD v1.1's evaluation cannot score (a v2.0 file? --task squad2)",
             name, printable_excerpt(q.id));
  d.features = SquadFeatures::convert(d.examples, tokenizer, features);
  return d;
}

nlohmann::ordered_json score_squad_predictions(const SquadDataset& dataset, const SquadPredictions& predictions) {
  if (!predictions.version_2_with_negative) return score_squad_v1(dataset.gold, predictions.answers()).scores;
  const SquadNullOdds odds = predictions.null_odds();
  return score_squad_v2(dataset.gold, predictions.answers(), &odds).scores;
}

nlohmann::ordered_json SquadEvalSet::score(const SquadLogits& logits) const {
  return score_squad_predictions(dataset, make_squad_predictions(dataset.examples, dataset.features, logits, options));
}

std::unique_ptr<SquadEvalSet> load_squad_eval_set(const std::string& path, const std::string& tokenizer_path,
                                                  bool cased, bool v2, const SquadFeatureOptions& features) {
  auto set = std::make_unique<SquadEvalSet>();
  const TextTokenizer tokenizer = TextTokenizer::load(tokenizer_path, !cased);
  set->dataset = read_squad_dataset(read_file(path), path, tokenizer, features, v2);
  if (!set->dataset.has_answers()) fail("{}: no answers to score predictions against", path);
  set->options.do_lower_case = !cased;
  set->options.version_2_with_negative = v2;
  return set;
}

}  // namespace bk
