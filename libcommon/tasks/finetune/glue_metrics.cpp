#include "tasks/finetune/glue_metrics.h"

#include "util/error.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

namespace bk {

namespace {

template <typename A, typename B>
void check_sizes(const A& a, const B& b) {
  if (a.size() != b.size() || a.empty())
    fail("metrics: {} predictions for {} gold values (need the same, non-zero number)", a.size(), b.size());
}

// Ranks from 1, ties sharing their average rank (scipy.stats.rankdata's default).
std::vector<double> average_ranks(const std::vector<double>& x) {
  std::vector<size_t> order(x.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return x[a] < x[b]; });
  std::vector<double> ranks(x.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && x[order[j + 1]] == x[order[i]]) ++j;
    const double rank = (static_cast<double>(i) + static_cast<double>(j)) / 2 + 1;
    for (size_t k = i; k <= j; ++k) ranks[order[k]] = rank;
    i = j + 1;
  }
  return ranks;
}

}  // namespace

double accuracy(const std::vector<int64_t>& predicted, const std::vector<int64_t>& gold) {
  check_sizes(predicted, gold);
  size_t right = 0;
  for (size_t i = 0; i < gold.size(); ++i) right += predicted[i] == gold[i];
  return static_cast<double>(right) / static_cast<double>(gold.size());
}

double f1_score(const std::vector<int64_t>& predicted, const std::vector<int64_t>& gold, int64_t positive) {
  check_sizes(predicted, gold);
  double tp = 0, fp = 0, fn = 0;
  for (size_t i = 0; i < gold.size(); ++i) {
    const bool p = predicted[i] == positive, g = gold[i] == positive;
    tp += p && g;
    fp += p && !g;
    fn += !p && g;
  }
  return tp + fp + fn == 0 ? 0.0 : 2 * tp / (2 * tp + fp + fn);
}

double matthews_corrcoef(const std::vector<int64_t>& predicted, const std::vector<int64_t>& gold) {
  check_sizes(predicted, gold);
  // sklearn: from the confusion matrix C, t_k = row sums (true), p_k = column sums (predicted), c = trace, s = n:
  // (c s - t.p) / sqrt((s^2 - p.p)(s^2 - t.t)).
  std::map<int64_t, double> t, p;
  double c = 0;
  for (size_t i = 0; i < gold.size(); ++i) {
    t[gold[i]] += 1;
    p[predicted[i]] += 1;
    c += predicted[i] == gold[i];
  }
  const double s = static_cast<double>(gold.size());
  double tp = 0, pp = 0, tt = 0;
  for (const auto& [k, v] : t) {
    tt += v * v;
    if (auto it = p.find(k); it != p.end()) tp += v * it->second;
  }
  for (const auto& [k, v] : p) pp += v * v;
  const double denominator = std::sqrt((s * s - pp) * (s * s - tt));
  return denominator == 0 ? 0.0 : (c * s - tp) / denominator;
}

double pearson(const std::vector<double>& x, const std::vector<double>& y) {
  check_sizes(x, y);
  const double n = static_cast<double>(x.size());
  const double mx = std::accumulate(x.begin(), x.end(), 0.0) / n, my = std::accumulate(y.begin(), y.end(), 0.0) / n;
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  return sxx == 0 || syy == 0 ? std::nan("") : sxy / std::sqrt(sxx * syy);
}

double spearman(const std::vector<double>& x, const std::vector<double>& y) {
  check_sizes(x, y);
  return pearson(average_ranks(x), average_ranks(y));
}

}  // namespace bk
