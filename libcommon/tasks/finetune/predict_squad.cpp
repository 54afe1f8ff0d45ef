#include "tasks/finetune/predict_squad.h"

#include "io/input.h"
#include "io/progress.h"
#include "squad/squad_logits.h"
#include "tasks/finetune/finetuned_model.h"
#include "tasks/finetune/squad_dataset.h"
#include "tok/text_tokenizer.h"
#include "util/py_json.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <iostream>

namespace bk {

namespace {

// One question about one context, as read_squad_examples reads a file holding only them.
SquadExamples single_squad_example(const std::string& question, const std::string& context) {
  const nlohmann::json file = {
      {"version", "1.1"},
      {"data", {{{"title", "interactive"},
                 {"paragraphs", {{{"context", context}, {"qas", {{{"id", "interactive"}, {"question", question}}}}}}}}}}};
  return parse_squad_examples(file.dump(), "--question/--context", {});
}

}  // namespace

void predict_squad_file(const SquadPredictSettings& s, const FinetunedModel& model, const TextTokenizer& tokenizer) {
  check_squad_outputs(s.outputs);  // before the model runs
  Progress progress(s.quiet);
  const std::string text = read_file(s.predict_file);
  const std::string name = s.predict_file == "-" ? std::string("<stdin>") : s.predict_file;
  const SquadDataset dataset = read_squad_dataset(text, name, tokenizer, s.features, s.post.version_2_with_negative);
  const SquadLogits logits = predict_spans(model, dataset.features, s.inference);
  const SquadPredictions predictions = make_squad_predictions(dataset.examples, dataset.features, logits, s.post);
  // Scored before anything is written: a file the official scorer refuses leaves no predictions behind.
  const nlohmann::ordered_json scores =
      dataset.has_answers() ? score_squad_predictions(dataset, predictions) : nlohmann::ordered_json();
  write_squad_outputs(s.outputs, predictions, logits);
  if (!scores.is_null()) std::cout << py_json_dumps(scores) << std::endl;  // as the official script prints them
  progress.finish(text.size(), fmt::format("{}: {} questions, {} features in {} -> {}", model.info->name,
                                           dataset.examples.examples.size(), dataset.features.features().size(),
                                           s.inference.precision.text(), s.outputs.output_dir));
  if (!s.quiet) tokenizer.warn_if_misfit(dataset.features.unknown());
}

void answer_squad_question(const SquadPredictSettings& s, const std::string& question, const std::string& context,
                           const FinetunedModel& model, const TextTokenizer& tokenizer) {
  const SquadExamples examples = single_squad_example(question, context);
  const SquadFeatures features = SquadFeatures::convert(examples, tokenizer, s.features);
  const SquadPredictions predictions =
      make_squad_predictions(examples, features, predict_spans(model, features, s.inference), s.post);
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
  if (s.post.version_2_with_negative) answer["null_odds"] = p.null_odds;
  std::cout << answer.dump() << std::endl;
  if (!s.quiet) tokenizer.warn_if_misfit(features.unknown());
}

}  // namespace bk
