// The GLUE scores, computed as scikit-learn and scipy define them (tests/compat checks them against both):
// accuracy; F1 of class 1 (MRPC, QQP); Matthews correlation (CoLA); Pearson and Spearman correlation (STS-B;
// Spearman on average ranks for ties). Torch-free.
#pragma once

#include <cstdint>
#include <vector>

namespace bk {

double accuracy(const std::vector<int64_t>& predicted, const std::vector<int64_t>& gold);
// F1 of `positive`: 2 tp / (2 tp + fp + fn); 0 when there is no positive prediction and no positive gold.
double f1_score(const std::vector<int64_t>& predicted, const std::vector<int64_t>& gold, int64_t positive = 1);
// Matthews correlation of any number of classes (sklearn's multiclass form); 0 when it is undefined.
double matthews_corrcoef(const std::vector<int64_t>& predicted, const std::vector<int64_t>& gold);
double pearson(const std::vector<double>& x, const std::vector<double>& y);
double spearman(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace bk
