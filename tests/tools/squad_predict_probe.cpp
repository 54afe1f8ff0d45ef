// Test-only (not a product tool): SQuAD predictions from a logits file and their official scores, for
// tests/compat/test_squad_predictions.py.
//
//   squad_predict_probe --vocab V [--cased] [--v2] [--max-seq-length L --doc-stride S --max-query-length Q]
//       [--n-best-size N --max-answer-length M --null-score-diff-threshold X] --logits LOGITS.jsonl -o DIR
//       [--copy-logits FILE] [-f] DATASET.json
//     reads the examples (not for training), makes their features, reads the logits, writes predictions.json,
//     nbest_predictions.json and (--v2) null_odds.json into DIR, and prints the scores as one JSON line when
//     the dataset has answers (v1.1's, or v2.0's with the null odds). --copy-logits writes the logits read back
//     out with the library's writer.
//   squad_predict_probe [--v2] --score PREDICTIONS.json [--null-odds ODDS.json] DATASET.json
//     only the scores, of a predictions file (and null odds) given.
// Questions without a prediction are named on stderr, as the official scripts do.
#include "cli/options.h"
#include "cli/run_tool.h"
#include "squad/squad_examples.h"
#include "squad/squad_features.h"
#include "squad/squad_logits.h"
#include "squad/squad_predictions.h"
#include "squad/squad_scoring.h"
#include "io/input.h"
#include "io/output.h"
#include "io/staged_output.h"
#include "tok/text_tokenizer.h"
#include "tok/vocab.h"
#include "util/py_json.h"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>

namespace {

double parse_double(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);  // correctly rounded, as Python's float()
  if (text.empty() || *end != '\0') bk::usage_fail("{}: not a number: '{}'", flag, text);
  return value;
}

// A JSON object file read as the scripts' dict: (key, value) pairs in file order.
nlohmann::ordered_json read_object(const std::string& path) {
  auto value = nlohmann::ordered_json::parse(bk::read_file(path));
  if (!value.is_object()) bk::fail("{}: expected a JSON object", path);
  return value;
}

void print_scores(const bk::SquadScores& scores, bool v2) {
  for (const std::string& id : scores.missing) {
    if (v2) std::cerr << "Missing prediction for " << id << "\n";
    else std::cerr << "Unanswered question " << id << " will receive score 0.\n";
  }
  std::cout << bk::py_json_dumps(scores.scores) << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  return bk::run_tool("squad_predict_probe", argc, argv, [](int argc, char** argv) {
    bk::SquadFeatureOptions features_options;
    bk::SquadPredictOptions predict_options;
    std::string vocab_path, logits_path, out_dir, copy_logits, score_path, odds_path, threshold;
    bool cased = false, force = false;
    bk::Options opts("squad_predict_probe", "[options] DATASET.json", "SQuAD predictions and scores (test probe).");
    opts.add()("vocab", bk::po::value(&vocab_path), "vocabulary")(
        "cased", bk::po::bool_switch(&cased), "cased vocabulary (no lowercasing)")(
        "v2", bk::po::bool_switch(&predict_options.version_2_with_negative), "SQuAD v2.0")(
        "max-seq-length", bk::po::value(&features_options.max_seq_length)->default_value(features_options.max_seq_length), "")(
        "doc-stride", bk::po::value(&features_options.doc_stride)->default_value(features_options.doc_stride), "")(
        "max-query-length", bk::po::value(&features_options.max_query_length)->default_value(features_options.max_query_length), "")(
        "n-best-size", bk::po::value(&predict_options.n_best_size)->default_value(predict_options.n_best_size), "")(
        "max-answer-length", bk::po::value(&predict_options.max_answer_length)->default_value(predict_options.max_answer_length), "")(
        "null-score-diff-threshold", bk::po::value(&threshold), "v2.0's threshold (default 0.0)")(
        "logits", bk::po::value(&logits_path), "the logits file")(
        "output-dir,o", bk::po::value(&out_dir), "where the predictions go")(
        "copy-logits", bk::po::value(&copy_logits), "write the logits read back out here")(
        "force,f", bk::po::bool_switch(&force), "replace existing files")(
        "score", bk::po::value(&score_path), "score this predictions file instead")(
        "null-odds", bk::po::value(&odds_path), "with --score: its null odds");
    opts.positional("dataset", 1);
    if (!opts.parse(argc, argv)) return 0;
    const auto positionals = opts.positionals();
    if (positionals.size() != 1) bk::usage_fail("one DATASET.json expected");
    const std::string& dataset = positionals[0];
    const bool v2 = predict_options.version_2_with_negative;
    const std::vector<bk::SquadGoldQuestion> gold = bk::read_squad_gold(dataset);

    if (!score_path.empty()) {
      bk::SquadAnswers answers;
      const auto predictions = read_object(score_path);
      for (const auto& [id, text] : predictions.items()) answers.emplace_back(id, text.get<std::string>());
      std::optional<bk::SquadNullOdds> odds;
      if (!odds_path.empty()) {
        odds.emplace();
        const auto values = read_object(odds_path);
        for (const auto& [id, x] : values.items()) odds->emplace_back(id, x.get<double>());
      }
      print_scores(v2 ? bk::score_squad_v2(gold, answers, odds ? &*odds : nullptr) : bk::score_squad_v1(gold, answers),
                   v2);
      return 0;
    }

    if (vocab_path.empty() || logits_path.empty() || out_dir.empty())
      bk::usage_fail("--vocab, --logits and -o are needed to make predictions");
    if (!threshold.empty()) predict_options.null_score_diff_threshold = parse_double("--null-score-diff-threshold", threshold);
    predict_options.do_lower_case = !cased;
    const bk::TextTokenizer tokenizer = bk::TextTokenizer::load(vocab_path, !cased);
    const bk::SquadExamples examples = bk::read_squad_examples(dataset, {.is_training = false, .version_2_with_negative = v2});
    const bk::SquadFeatures features = bk::SquadFeatures::convert(examples, tokenizer, features_options);
    const bk::SquadLogits logits = bk::read_squad_logits(logits_path);
    const bk::SquadPredictions predictions = bk::make_squad_predictions(examples, features, logits, predict_options);
    {
      bk::StagedFiles files;
      for (const auto& [name, text] : bk::squad_prediction_files(predictions)) {
        const std::string path = (std::filesystem::path(out_dir) / name).string();
        bk::check_overwrite(path, force);
        bk::write_file_atomic(files.stage(path), text);
      }
      files.commit();
    }
    if (!copy_logits.empty()) {
      bk::Output out(copy_logits, force);
      bk::SquadLogitsWriter writer(out);
      for (size_t i = 0; i < logits.size(); ++i) writer.write(logits.unique_ids[i], logits.start_logits(i), logits.end_logits(i));
      out.commit();
    }
    std::cerr << examples.examples.size() << " examples, " << features.features().size() << " features, "
              << predictions.predictions.size() << " predictions\n";

    bool has_answers = false;
    for (const auto& question : gold) has_answers |= !question.answers.empty();
    if (has_answers) {
      const bk::SquadNullOdds odds = predictions.null_odds();
      const bk::SquadAnswers answers = predictions.answers();
      print_scores(v2 ? bk::score_squad_v2(gold, answers, &odds) : bk::score_squad_v1(gold, answers), v2);
    }
    return 0;
  });
}
