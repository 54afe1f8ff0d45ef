#include "squad/squad_scoring.h"

#include "squad/squad_json.h"
#include "io/input.h"
#include "util/utf8.h"
#include "tok/vocab.h"
#include "util/error.h"
#include "util/json_read.h"

#include <unicode/uchar.h>
#include <unicode/ustring.h>

#include <algorithm>
#include <unordered_map>

namespace bk {
namespace {

using json = nlohmann::json;

// Python's str.lower(): ICU's full lowercasing in the root locale (special casing and final sigma included).
std::u32string python_lower(std::string_view utf8) {
  std::u16string utf16;
  for (size_t pos = 0; pos < utf8.size();) {
    const char32_t cp = next_code_point(utf8, pos);
    if (cp < 0x10000) {
      utf16.push_back(static_cast<char16_t>(cp));
    } else {
      utf16.push_back(static_cast<char16_t>(0xD7C0 + (cp >> 10)));
      utf16.push_back(static_cast<char16_t>(0xDC00 + (cp & 0x3FF)));
    }
  }
  std::u16string lowered(utf16.size() + 16, u'\0');
  for (int attempt = 0; attempt < 2; ++attempt) {  // the second with the size ICU asked for
    UErrorCode error = U_ZERO_ERROR;
    const int32_t n = u_strToLower(lowered.data(), static_cast<int32_t>(lowered.size()), utf16.data(),
                                   static_cast<int32_t>(utf16.size()), "", &error);
    if (error == U_BUFFER_OVERFLOW_ERROR) {
      lowered.assign(static_cast<size_t>(n), u'\0');
      continue;
    }
    if (U_FAILURE(error)) fail("cannot lowercase an answer: {}", u_errorName(error));
    lowered.resize(static_cast<size_t>(n));
    break;
  }
  std::u32string out;
  for (int32_t i = 0; i < static_cast<int32_t>(lowered.size());) {
    UChar32 cp;
    U16_NEXT(lowered.data(), i, static_cast<int32_t>(lowered.size()), cp);
    out.push_back(static_cast<char32_t>(cp));
  }
  return out;
}

// string.punctuation: !"#$%&'()*+,-./:;<=>?@[\]^_`{|}~
bool is_ascii_punctuation(char32_t c) {
  return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126);
}

// Python 3's re \w for str patterns: str.isalnum() (a letter, L*, or any character with a numeric type:
// decimal, digit or numeric) or '_'.
bool is_python_word(char32_t c) {
  if (c < 0x80) return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  switch (u_charType(static_cast<UChar32>(c))) {
    case U_UPPERCASE_LETTER: case U_LOWERCASE_LETTER: case U_TITLECASE_LETTER: case U_MODIFIER_LETTER:
    case U_OTHER_LETTER:
      return true;
    default:
      return u_getIntPropertyValue(static_cast<UChar32>(c), UCHAR_NUMERIC_TYPE) != U_NT_NONE;
  }
}

// re.sub(r'\b(a|an|the)\b', ' ', text). A match needs a boundary before it (the article's letters are word
// characters, so the character before must not be one) and after it; the scan goes on after each match.
std::u32string remove_articles(const std::u32string& text) {
  static const std::u32string kArticles[] = {U"a", U"an", U"the"};  // the alternation's order
  std::u32string out;
  const size_t n = text.size();
  for (size_t i = 0; i < n;) {
    bool matched = false;
    if (i == 0 || !is_python_word(text[i - 1])) {
      for (const std::u32string& article : kArticles) {
        const size_t end = i + article.size();
        if (text.compare(i, article.size(), article) == 0 && (end == n || !is_python_word(text[end]))) {
          out.push_back(U' ');
          i = end;
          matched = true;
          break;
        }
      }
    }
    if (!matched) out.push_back(text[i++]);
  }
  return out;
}

std::vector<std::string> words(const std::string& normalized) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < normalized.size()) {  // normalize_answer leaves single spaces between words
    const size_t space = std::min(normalized.find(' ', at), normalized.size());
    out.push_back(normalized.substr(at, space - at));
    at = space + 1;
  }
  return out;
}

// Counter(a) & Counter(b), summed.
size_t common_tokens(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::unordered_map<std::string_view, int64_t> counts;
  for (const std::string& t : a) ++counts[t];
  size_t same = 0;
  for (const std::string& t : b) {
    auto it = counts.find(t);
    if (it != counts.end() && it->second > 0) {
      --it->second;
      ++same;
    }
  }
  return same;
}

// The F1 of both scripts once the tokens are known and shared ones exist: the same operations in the same order.
double token_f1(size_t num_same, size_t prediction_tokens, size_t ground_truth_tokens) {
  const double precision = 1.0 * static_cast<double>(num_same) / static_cast<double>(prediction_tokens);
  const double recall = 1.0 * static_cast<double>(num_same) / static_cast<double>(ground_truth_tokens);
  return (2 * precision * recall) / (precision + recall);
}

// A Python dict built from (key, value) pairs: first place, last value.
template <typename T>
std::unordered_map<std::string, T> to_dict(const std::vector<std::pair<std::string, T>>& pairs,
                                           std::vector<std::string>* order = nullptr) {
  std::unordered_map<std::string, T> dict;
  for (const auto& [key, value] : pairs) {
    const auto [it, added] = dict.insert_or_assign(key, value);
    if (added && order) order->push_back(key);
  }
  return dict;
}

using squad_json::Place;
using squad_json::array_member;
using squad_json::member;

}  // namespace

std::string normalize_squad_answer(std::string_view text) {
  // lower, remove_punc, remove_articles, white_space_fix: the script's order.
  std::u32string lowered = python_lower(text);
  std::erase_if(lowered, is_ascii_punctuation);
  const std::u32string no_articles = remove_articles(lowered);
  std::string out;
  bool in_word = false;
  for (char32_t c : no_articles) {
    if (is_python_space(c)) {
      in_word = false;
      continue;
    }
    if (!in_word && !out.empty()) out.push_back(' ');
    in_word = true;
    append_utf8(out, c);
  }
  return out;
}

std::vector<SquadGoldQuestion> parse_squad_gold(std::string_view text, const std::string& name) {
  const json root = parse_json(text, name);
  std::vector<SquadGoldQuestion> out;
  const json& data = array_member(root, "data", {name, "top level"});
  for (size_t d = 0; d < data.size(); ++d) {
    const Place entry{name, fmt::format("data[{}]", d)};
    const json& paragraphs = array_member(data[d], "paragraphs", entry);
    for (size_t p = 0; p < paragraphs.size(); ++p) {
      const Place paragraph{name, fmt::format("{}.paragraphs[{}]", entry.path, p)};
      const json& qas = array_member(paragraphs[p], "qas", paragraph);
      for (size_t q = 0; q < qas.size(); ++q) {
        const Place qa{name, fmt::format("{}.qas[{}]", paragraph.path, q)};
        SquadGoldQuestion& question = out.emplace_back();
        const json& id = member(qas[q], "id", qa);
        if (id.is_string()) question.id = id.get<std::string>();
        else if (id.is_number()) question.id = id.dump();  // as squad_examples.h reads it
        else fail("{}: {}.id: expected a string, found {}", name, qa.path, id.type_name());
        const json& answers = array_member(qas[q], "answers", qa);
        for (size_t a = 0; a < answers.size(); ++a) {
          const json& answer_text = member(answers[a], "text", {name, fmt::format("{}.answers[{}]", qa.path, a)});
          if (!answer_text.is_string())
            fail("{}: {}.answers[{}].text: expected a string, found {}", name, qa.path, a, answer_text.type_name());
          question.answers.push_back(answer_text.get<std::string>());
        }
      }
    }
  }
  return out;
}

std::vector<SquadGoldQuestion> read_squad_gold(const std::string& path) {
  return parse_squad_gold(read_file(path), path == "-" ? std::string("<stdin>") : path);
}

SquadScores score_squad_v1(const std::vector<SquadGoldQuestion>& dataset, const SquadAnswers& predictions) {
  const auto preds = to_dict(predictions);
  SquadScores out;
  // `exact_match` and `f1` start as Python ints; the values added are bools, ints and floats, and small integer
  // sums are exact in a double, so double additions in the same order give the same value.
  double exact_match = 0, f1 = 0;
  int64_t total = 0;
  for (const SquadGoldQuestion& qa : dataset) {
    ++total;
    const auto it = preds.find(qa.id);
    if (it == preds.end()) {
      out.missing.push_back(qa.id);
      continue;
    }
    if (qa.answers.empty())
      fail("question {} has no answer, which SQuAD v1.1's evaluation cannot score (a v2.0 file?)", qa.id);
    const std::string prediction = normalize_squad_answer(it->second);
    const std::vector<std::string> prediction_tokens = words(prediction);
    double best_exact = 0, best_f1 = 0;  // max() over the ground truths
    for (size_t i = 0; i < qa.answers.size(); ++i) {
      const std::string truth = normalize_squad_answer(qa.answers[i]);
      const std::vector<std::string> truth_tokens = words(truth);
      const double exact = prediction == truth ? 1 : 0;
      const size_t num_same = common_tokens(prediction_tokens, truth_tokens);
      const double score = num_same == 0 ? 0 : token_f1(num_same, prediction_tokens.size(), truth_tokens.size());
      best_exact = i == 0 ? exact : std::max(best_exact, exact);
      best_f1 = i == 0 ? score : std::max(best_f1, score);
    }
    exact_match += best_exact;
    f1 += best_f1;
  }
  if (total == 0) fail("the dataset has no questions to score");
  out.scores["exact_match"] = 100.0 * exact_match / static_cast<double>(total);
  out.scores["f1"] = 100.0 * f1 / static_cast<double>(total);
  return out;
}

SquadScores score_squad_v2(const std::vector<SquadGoldQuestion>& dataset, const SquadAnswers& predictions,
                           const SquadNullOdds* null_odds, double na_prob_thresh) {
  SquadScores out;
  const auto preds = to_dict(predictions);
  std::vector<std::string> na_order;  // the na_probs dict's keys, which the threshold search sorts
  std::unordered_map<std::string, double> na_probs;
  if (null_odds) {
    na_probs = to_dict(*null_odds, &na_order);
  } else {
    for (const auto& [id, text] : predictions)
      if (na_probs.emplace(id, 0.0).second) na_order.push_back(id);
  }

  // Per predicted question, in dataset order (a repeated id: first place, last values): has an answer, and the
  // raw exact and F1 scores (the best over the gold answers).
  struct Scored {
    bool has_ans = false;
    double exact = 0, f1 = 0;
    bool predicted_empty = false;
  };
  std::vector<std::string> order;
  std::unordered_map<std::string, Scored> scored;
  for (const SquadGoldQuestion& qa : dataset) {
    const auto it = preds.find(qa.id);
    if (it == preds.end()) {
      out.missing.push_back(qa.id);
      continue;
    }
    std::vector<std::string> gold;  // normalised; answers that normalise to nothing are dropped
    for (const std::string& answer : qa.answers) {
      std::string normalized = normalize_squad_answer(answer);
      if (!normalized.empty()) gold.push_back(std::move(normalized));
    }
    if (gold.empty()) gold.emplace_back();  // the only correct answer to an unanswerable question is ""
    const std::string prediction = normalize_squad_answer(it->second);
    const std::vector<std::string> prediction_tokens = words(prediction);
    Scored s;
    s.has_ans = !qa.answers.empty();
    s.predicted_empty = it->second.empty();
    for (size_t i = 0; i < gold.size(); ++i) {
      const std::vector<std::string> gold_tokens = words(gold[i]);
      const double exact = gold[i] == prediction ? 1 : 0;
      double f1 = 0;
      if (gold_tokens.empty() || prediction_tokens.empty()) {
        f1 = gold_tokens == prediction_tokens ? 1 : 0;  // no-answer on either side: 1 if both agree
      } else if (const size_t num_same = common_tokens(gold_tokens, prediction_tokens); num_same > 0) {
        f1 = token_f1(num_same, prediction_tokens.size(), gold_tokens.size());
      }
      s.exact = i == 0 ? exact : std::max(s.exact, exact);
      s.f1 = i == 0 ? f1 : std::max(s.f1, f1);
    }
    const auto [at, added] = scored.insert_or_assign(qa.id, s);
    if (added) order.push_back(qa.id);
  }
  if (order.empty()) fail("no question of the dataset has a prediction");

  // apply_no_ans_threshold: predicted unanswerable when the null odds exceed the threshold.
  std::unordered_map<std::string, std::pair<double, double>> thresholded;  // exact, f1
  for (const std::string& id : order) {
    const auto na = na_probs.find(id);
    if (na == na_probs.end()) fail("the null odds have no entry for question {}", id);
    const Scored& s = scored.at(id);
    if (na->second > na_prob_thresh) thresholded[id] = {s.has_ans ? 0.0 : 1.0, s.has_ans ? 0.0 : 1.0};
    else thresholded[id] = {s.exact, s.f1};
  }
  auto add_eval = [&](const std::string& prefix, const std::vector<std::string>& ids) {
    double exact = 0, f1 = 0;  // sum() in the dict's order
    for (const std::string& id : ids) {
      exact += thresholded[id].first;
      f1 += thresholded[id].second;
    }
    const auto total = static_cast<double>(ids.size());
    out.scores[prefix + "exact"] = 100.0 * exact / total;
    out.scores[prefix + "f1"] = 100.0 * f1 / total;
    out.scores[prefix + "total"] = ids.size();
  };
  add_eval("", order);
  std::vector<std::string> has_ans, no_ans;
  for (const std::string& id : order) (scored[id].has_ans ? has_ans : no_ans).push_back(id);
  if (!has_ans.empty()) add_eval("HasAns_", has_ans);
  if (!no_ans.empty()) add_eval("NoAns_", no_ans);

  if (null_odds) {
    // find_best_thresh: questions by rising null odds (a stable sort of the dict's keys).
    std::vector<std::string> by_odds = na_order;
    std::stable_sort(by_odds.begin(), by_odds.end(),
                     [&](const std::string& a, const std::string& b) { return na_probs[a] < na_probs[b]; });
    auto best_thresh = [&](bool use_f1) {
      double cur_score = static_cast<double>(no_ans.size()), best_score = cur_score, best = 0.0;
      for (const std::string& id : by_odds) {
        const auto it = scored.find(id);
        if (it == scored.end()) continue;
        const Scored& s = it->second;
        const double diff = s.has_ans ? (use_f1 ? s.f1 : s.exact) : (s.predicted_empty ? 0 : -1);
        cur_score += diff;
        if (cur_score > best_score) {
          best_score = cur_score;
          best = na_probs[id];
        }
      }
      return std::pair(100.0 * best_score / static_cast<double>(order.size()), best);
    };
    const auto [best_exact, exact_thresh] = best_thresh(false);
    const auto [best_f1, f1_thresh] = best_thresh(true);
    out.scores["best_exact"] = best_exact;
    out.scores["best_exact_thresh"] = exact_thresh;
    out.scores["best_f1"] = best_f1;
    out.scores["best_f1_thresh"] = f1_thresh;
  }
  return out;
}

}  // namespace bk
