#include "squad/squad_predictions.h"

#include "util/utf8.h"
#include "tok/basic_tokenizer.h"
#include "util/error.h"
#include "util/py_json.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace bk {
namespace {

// write_predictions' _PrelimPrediction.
struct Prelim {
  size_t feature_index = 0;  // among the example's features
  int32_t start_index = 0, end_index = 0;
  double start_logit = 0, end_logit = 0;
  bool integer_logits = false;
};

std::u32string decode(std::string_view utf8) {
  std::u32string out;
  out.reserve(utf8.size());
  for (size_t pos = 0; pos < utf8.size();) out.push_back(next_code_point(utf8, pos));
  return out;
}

std::string encode(std::u32string_view text) {
  std::string out;
  for (char32_t cp : text) append_utf8(out, cp);
  return out;
}

// _strip_spaces: the text without ' ' and, per remaining character, its index in the text.
void strip_spaces(const std::u32string& text, std::u32string& ns_text, std::vector<size_t>& ns_to_s) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == U' ') continue;
    ns_to_s.push_back(i);
    ns_text.push_back(text[i]);
  }
}

// Python's str.replace(old, ""): every occurrence, left to right, without overlaps.
std::string remove_all(std::string_view text, std::string_view old) {
  std::string out;
  size_t at = 0;
  for (size_t found; (found = text.find(old, at)) != std::string_view::npos; at = found + old.size())
    out.append(text.substr(at, found - at));
  out.append(text.substr(at));
  return out;
}

// The prediction's pieces as text: " ".join(tokens), "##" glued back, whitespace cleaned.
std::string piece_text(std::span<const std::string_view> tokens) {
  std::string text;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (i > 0) text.push_back(' ');
    text.append(tokens[i]);
  }
  return join_python_words(remove_all(remove_all(text, " ##"), "##"));
}

void check_logits(const SquadFeatures& features, const SquadLogits& logits) {
  const auto& all = features.features();
  if (logits.size() != all.size())
    fail("{}: logits for {} features, but the examples make {}", logits.name, logits.size(), all.size());
  const auto positions = static_cast<size_t>(features.options().max_seq_length);
  if (!all.empty() && logits.positions != positions)
    fail("{}: {} logits per feature, but the features have max_seq_length {}", logits.name, logits.positions, positions);
  for (size_t i = 0; i < all.size(); ++i)
    if (logits.unique_ids[i] != all[i].unique_id)
      fail("{}: feature {} (line {}) has unique_id {}, expected {}", logits.name, i, i + 1, logits.unique_ids[i],
           all[i].unique_id);
}

// One example's write_predictions step.
class ExamplePredictor {
 public:
  ExamplePredictor(const SquadExamples& examples, const SquadFeatures& features, const SquadLogits& logits,
                   const SquadPredictOptions& options)
      : examples_(examples), features_(features), logits_(logits), options_(options), basic_(options.do_lower_case) {}

  SquadPrediction predict(size_t example_index);

 private:
  std::vector<Prelim> prelim_predictions(std::span<const SquadFeature> features);
  std::string candidate_text(const SquadDocument& doc, const SquadFeature& f, const Prelim& pred);

  const SquadExamples& examples_;
  const SquadFeatures& features_;
  const SquadLogits& logits_;
  const SquadPredictOptions& options_;
  BasicTokenizer basic_;
  // The null candidate of the example being predicted (v2.0).
  double score_null_ = 0, null_start_logit_ = 0, null_end_logit_ = 0;
  size_t min_null_feature_index_ = 0;
  bool null_is_integer_ = false;
};

std::vector<Prelim> ExamplePredictor::prelim_predictions(std::span<const SquadFeature> features) {
  std::vector<Prelim> prelim;
  // The reference's starting values are Python ints; they stay ints unless a feature's null score is below.
  score_null_ = 1000000;
  min_null_feature_index_ = 0;
  null_start_logit_ = null_end_logit_ = 0;
  null_is_integer_ = true;
  std::vector<DocSpan> spans;
  for (const SquadFeature& f : features) spans.push_back(f.span);

  for (size_t feature_index = 0; feature_index < features.size(); ++feature_index) {
    const SquadFeature& f = features[feature_index];
    const size_t row = static_cast<size_t>(&f - features_.features().data());
    const auto start_logits = logits_.start_logits(row), end_logits = logits_.end_logits(row);
    const std::vector<int32_t> start_indexes = best_indexes(start_logits, options_.n_best_size);
    const std::vector<int32_t> end_indexes = best_indexes(end_logits, options_.n_best_size);
    if (options_.version_2_with_negative) {
      const double feature_null_score = start_logits[0] + end_logits[0];
      if (feature_null_score < score_null_) {
        score_null_ = feature_null_score;
        min_null_feature_index_ = feature_index;
        null_start_logit_ = start_logits[0];
        null_end_logit_ = end_logits[0];
        null_is_integer_ = false;
      }
    }
    const auto length = static_cast<int32_t>(features_.length(f));
    for (int32_t start_index : start_indexes) {
      for (int32_t end_index : end_indexes) {
        // The reference's filters, in its order.
        if (start_index >= length || end_index >= length) continue;
        if (features_.token_to_orig(f, start_index) < 0 || features_.token_to_orig(f, end_index) < 0) continue;
        const int32_t piece = f.span.start + start_index - features_.doc_offset(f);
        if (!check_is_max_context(spans, f.doc_span_index, piece)) continue;  // token_is_max_context[start]
        if (end_index < start_index) continue;
        if (end_index - start_index + 1 > options_.max_answer_length) continue;
        prelim.push_back({feature_index, start_index, end_index, start_logits[static_cast<size_t>(start_index)],
                          end_logits[static_cast<size_t>(end_index)], false});
      }
    }
  }
  if (options_.version_2_with_negative)
    prelim.push_back({min_null_feature_index_, 0, 0, null_start_logit_, null_end_logit_, null_is_integer_});
  // sorted(..., key=start_logit + end_logit, reverse=True): stable, so equal sums keep their order.
  std::stable_sort(prelim.begin(), prelim.end(), [](const Prelim& a, const Prelim& b) {
    return a.start_logit + a.end_logit > b.start_logit + b.end_logit;
  });
  return prelim;
}

std::string ExamplePredictor::candidate_text(const SquadDocument& doc, const SquadFeature& f, const Prelim& pred) {
  // Byte-level pieces know their characters: the text is the context's, as run_qa.py's postprocessing takes it.
  if (features_.byte_spans()) return std::string(features_.context_text(examples_, f, pred.start_index, pred.end_index));
  const std::vector<std::string_view> tokens = features_.tokens(f);
  const std::string tok_text = piece_text(std::span(tokens).subspan(
      static_cast<size_t>(pred.start_index), static_cast<size_t>(pred.end_index - pred.start_index + 1)));
  const int32_t orig_doc_start = features_.token_to_orig(f, pred.start_index);
  const int32_t orig_doc_end = features_.token_to_orig(f, pred.end_index);
  std::string orig_text;
  for (int32_t i = orig_doc_start; i <= orig_doc_end; ++i) {
    if (i > orig_doc_start) orig_text.push_back(' ');
    orig_text.append(doc[static_cast<size_t>(i)]);
  }
  return get_final_text(tok_text, orig_text, options_.do_lower_case);
}

SquadPrediction ExamplePredictor::predict(size_t example_index) {
  const SquadExample& example = examples_.examples[example_index];
  const std::span<const SquadFeature> features = features_.example_features(example_index);
  const std::vector<Prelim> prelim = prelim_predictions(features);

  SquadPrediction out;
  out.qas_id = example.qas_id;
  std::vector<SquadNbestEntry>& nbest = out.nbest;
  std::unordered_set<std::string> seen;
  for (const Prelim& pred : prelim) {
    if (nbest.size() >= static_cast<size_t>(options_.n_best_size)) break;
    std::string final_text;
    if (pred.start_index > 0) {  // a non-null candidate
      final_text = candidate_text(examples_.doc_tokens(example), features[pred.feature_index], pred);
      if (!seen.insert(final_text).second) continue;
    } else {
      seen.insert(final_text);
    }
    nbest.push_back({std::move(final_text), 0, pred.start_logit, pred.end_logit, pred.integer_logits});
  }
  if (options_.version_2_with_negative && !seen.count(""))
    nbest.push_back({"", 0, null_start_logit_, null_end_logit_, null_is_integer_});
  // "In very rare edge cases we could have no valid predictions": the reference's nonce answer.
  if (nbest.empty()) nbest.push_back({"empty", 0, 0.0, 0.0, false});

  std::vector<double> total_scores;
  const SquadNbestEntry* best_non_null = nullptr;
  for (const SquadNbestEntry& entry : nbest) {
    total_scores.push_back(entry.start_logit + entry.end_logit);
    if (!best_non_null && !entry.text.empty()) best_non_null = &entry;
  }
  const std::vector<double> probs = compute_softmax(total_scores);
  for (size_t i = 0; i < nbest.size(); ++i) nbest[i].probability = probs[i];

  if (!options_.version_2_with_negative) {
    out.text = nbest[0].text;
  } else if (!best_non_null) {
    // The reference fails here (best_non_null_entry is None); nothing but the null answer is possible.
    out.null_odds = std::numeric_limits<double>::infinity();
  } else {
    // score_null - start - end, left to right as the reference subtracts.
    out.null_odds = score_null_ - best_non_null->start_logit - best_non_null->end_logit;
    if (!(out.null_odds > options_.null_score_diff_threshold)) out.text = best_non_null->text;
  }
  return out;
}

void append_key(std::string& out, int level, std::string_view key) {
  out.append(static_cast<size_t>(4 * level), ' ');
  append_py_json_string(out, key);
  out += ": ";
}

void append_logit(std::string& out, double value, bool integer) {
  if (integer) out += "0";  // only ever the reference's int 0
  else append_py_json_float(out, value);
}

// json.dumps(dict, indent=4) + "\n" of a flat dict whose values `append_value` writes.
template <typename AppendValue>
std::string flat_dict(const std::vector<SquadPrediction>& predictions, AppendValue append_value) {
  if (predictions.empty()) return "{}\n";
  std::string out = "{\n";
  for (size_t i = 0; i < predictions.size(); ++i) {
    append_key(out, 1, predictions[i].qas_id);
    append_value(out, predictions[i]);
    out += i + 1 < predictions.size() ? ",\n" : "\n";
  }
  out += "}\n";
  return out;
}

}  // namespace

void SquadPredictOptions::validate() const {
  if (n_best_size < 1) usage_fail("--n-best-size must be positive, got {}", n_best_size);
  if (max_answer_length < 1) usage_fail("--max-answer-length must be positive, got {}", max_answer_length);
}

std::vector<int32_t> best_indexes(std::span<const double> logits, int n_best_size) {
  std::vector<int32_t> index(logits.size());
  for (size_t i = 0; i < index.size(); ++i) index[i] = static_cast<int32_t>(i);
  const size_t n = std::min(index.size(), static_cast<size_t>(std::max(n_best_size, 0)));
  // A stable descending sort's first n: of equal logits the lower index first.
  std::partial_sort(index.begin(), index.begin() + static_cast<ptrdiff_t>(n), index.end(), [&](int32_t a, int32_t b) {
    const double la = logits[static_cast<size_t>(a)], lb = logits[static_cast<size_t>(b)];
    return la > lb || (la == lb && a < b);
  });
  index.resize(n);
  return index;
}

std::vector<double> compute_softmax(std::span<const double> scores) {
  if (scores.empty()) return {};
  double max_score = scores[0];
  for (double score : scores)
    if (score > max_score) max_score = score;
  std::vector<double> probs;
  probs.reserve(scores.size());
  double total_sum = 0.0;
  for (double score : scores) {
    probs.push_back(std::exp(score - max_score));  // math.exp is the C library's exp
    total_sum += probs.back();
  }
  for (double& p : probs) p /= total_sum;
  return probs;
}

std::string get_final_text(std::string_view pred_text, std::string_view orig_text, bool do_lower_case) {
  // The original words through the features' BasicTokenizer: what pred_text was made from, lowercased and
  // without accents when uncased, punctuation split off.
  BasicTokenizer tokenizer(do_lower_case);
  LineWords words;
  tokenizer.tokenize(orig_text, words);
  std::string tok_utf8;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i > 0) tok_utf8.push_back(' ');
    tok_utf8.append(words[i]);
  }
  const std::u32string tok_text = decode(tok_utf8), pred = decode(pred_text), orig = decode(orig_text);
  const size_t found = tok_text.find(pred);
  if (found == std::u32string::npos) return std::string(orig_text);
  const auto start_position = static_cast<int64_t>(found);
  const int64_t end_position = start_position + static_cast<int64_t>(pred.size()) - 1;

  // Characters are aligned one to one once spaces are gone; if the lengths differ, they cannot be.
  std::u32string orig_ns, tok_ns;
  std::vector<size_t> orig_ns_to_s, tok_ns_to_s;
  strip_spaces(orig, orig_ns, orig_ns_to_s);
  strip_spaces(tok_text, tok_ns, tok_ns_to_s);
  if (orig_ns.size() != tok_ns.size()) return std::string(orig_text);

  std::vector<int64_t> tok_s_to_ns(tok_text.size(), -1);
  for (size_t i = 0; i < tok_ns_to_s.size(); ++i) tok_s_to_ns[tok_ns_to_s[i]] = static_cast<int64_t>(i);
  // A position on a space (or off the text) has no projection: the reference then gives up.
  auto project = [&](int64_t s) -> std::optional<size_t> {
    if (s < 0 || s >= static_cast<int64_t>(tok_s_to_ns.size()) || tok_s_to_ns[static_cast<size_t>(s)] < 0)
      return std::nullopt;
    return orig_ns_to_s[static_cast<size_t>(tok_s_to_ns[static_cast<size_t>(s)])];
  };
  const auto orig_start = project(start_position), orig_end = project(end_position);
  if (!orig_start || !orig_end) return std::string(orig_text);
  if (*orig_end < *orig_start) return {};  // Python's empty slice
  return encode(std::u32string_view(orig).substr(*orig_start, *orig_end - *orig_start + 1));
}

SquadPredictions make_squad_predictions(const SquadExamples& examples, const SquadFeatures& features,
                                        const SquadLogits& logits, const SquadPredictOptions& options) {
  options.validate();
  check_logits(features, logits);
  SquadPredictions out;
  out.version_2_with_negative = options.version_2_with_negative;
  ExamplePredictor predictor(examples, features, logits, options);
  std::unordered_map<std::string, size_t> place;  // the reference's OrderedDicts by qas_id
  for (size_t example_index = 0; example_index < examples.examples.size(); ++example_index) {
    SquadPrediction prediction = predictor.predict(example_index);
    const auto [it, added] = place.emplace(prediction.qas_id, out.predictions.size());
    if (added) out.predictions.push_back(std::move(prediction));
    else out.predictions[it->second] = std::move(prediction);
  }
  return out;
}

SquadAnswers SquadPredictions::answers() const {
  SquadAnswers out;
  for (const SquadPrediction& p : predictions) out.emplace_back(p.qas_id, p.text);
  return out;
}

SquadNullOdds SquadPredictions::null_odds() const {
  SquadNullOdds out;
  for (const SquadPrediction& p : predictions) out.emplace_back(p.qas_id, p.null_odds);
  return out;
}

std::string SquadPredictions::predictions_json() const {
  return flat_dict(predictions, [](std::string& out, const SquadPrediction& p) { append_py_json_string(out, p.text); });
}

std::string SquadPredictions::null_odds_json() const {
  return flat_dict(predictions, [](std::string& out, const SquadPrediction& p) { append_py_json_float(out, p.null_odds); });
}

std::string SquadPredictions::nbest_json() const {
  return flat_dict(predictions, [](std::string& out, const SquadPrediction& p) {
    out += "[\n";  // never empty
    for (size_t i = 0; i < p.nbest.size(); ++i) {
      const SquadNbestEntry& e = p.nbest[i];
      out.append(8, ' ');
      out += "{\n";
      append_key(out, 3, "text");
      append_py_json_string(out, e.text);
      out += ",\n";
      append_key(out, 3, "probability");
      append_py_json_float(out, e.probability);
      out += ",\n";
      append_key(out, 3, "start_logit");
      append_logit(out, e.start_logit, e.integer_logits);
      out += ",\n";
      append_key(out, 3, "end_logit");
      append_logit(out, e.end_logit, e.integer_logits);
      out += "\n";
      out.append(8, ' ');
      out += i + 1 < p.nbest.size() ? "},\n" : "}\n";
    }
    out.append(4, ' ');
    out += "]";
  });
}

std::vector<std::pair<std::string, std::string>> squad_prediction_files(const SquadPredictions& predictions) {
  std::vector<std::pair<std::string, std::string>> files = {
      {"predictions.json", predictions.predictions_json()}, {"nbest_predictions.json", predictions.nbest_json()}};
  if (predictions.version_2_with_negative) files.emplace_back("null_odds.json", predictions.null_odds_json());
  return files;
}

}  // namespace bk
