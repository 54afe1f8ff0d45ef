// Shared by the unpadded-attention tests (CPU) and the CUDA tests: small BERT configs, samples from a fixed LCG,
// samples packed into rows, one forward/backward with its loss and gradients, and a count of autograd nodes.
#pragma once

#include "torch_doctest.h"

#include "model/bert.h"
#include "tasks/pretraining/batch.h"
#include "tasks/pretraining/pretrain_loss.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/function.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

namespace bk_test {

inline bk::BertConfig small_config() {
  bk::BertConfig c;
  c.vocab_size = 99;
  c.hidden_size = 32;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 4;
  c.intermediate_size = 64;
  c.max_position_embeddings = 64;
  c.type_vocab_size = 2;
  return c;
}

// Samples of 5 to 30 tokens: [CLS] a [SEP] b [SEP], about 15% of the positions masked, from a fixed LCG.
inline std::vector<bk::PretrainSample> make_samples(size_t count, uint64_t seed) {
  uint64_t state = seed;
  auto next = [&](uint64_t bound) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (state >> 33) % bound;
  };
  std::vector<bk::PretrainSample> samples(count);
  for (auto& s : samples) {
    const auto length = static_cast<int32_t>(5 + next(26));
    const int32_t split = 2 + static_cast<int32_t>(next(static_cast<uint64_t>(length - 4)));
    for (int32_t j = 0; j < length; ++j) {
      const bool special = j == 0 || j == split || j == length - 1;
      s.input_ids.push_back(j == 0 ? 1 : special ? 2 : static_cast<int32_t>(5 + next(90)));
      s.segment_ids.push_back(j > split ? 1 : 0);
      if (!special && next(100) < 15) {
        s.masked_lm_positions.push_back(j);
        s.masked_lm_ids.push_back(static_cast<int32_t>(5 + next(90)));
      }
    }
    s.next_sentence_label = static_cast<int32_t>(next(2));
  }
  return samples;
}

// Samples back to back in one row, as pack(1) writes them.
inline bk::PretrainSample join(const std::vector<bk::PretrainSample>& samples, std::vector<size_t> which) {
  bk::PretrainSample row;
  for (size_t i : which) {
    const auto& s = samples[i];
    const auto offset = static_cast<int32_t>(row.input_ids.size());
    row.input_ids.insert(row.input_ids.end(), s.input_ids.begin(), s.input_ids.end());
    row.segment_ids.insert(row.segment_ids.end(), s.segment_ids.begin(), s.segment_ids.end());
    for (int32_t p : s.masked_lm_positions) row.masked_lm_positions.push_back(p + offset);
    row.masked_lm_ids.insert(row.masked_lm_ids.end(), s.masked_lm_ids.begin(), s.masked_lm_ids.end());
    row.pack_lengths.push_back(static_cast<int32_t>(s.length()));
    row.pack_labels.push_back(s.next_sentence_label);
  }
  return row;
}

// Nine samples in rows of three, one, two and three: every sample once, rows of each fill (the packed tests').
inline std::vector<bk::PretrainSample> packed_rows(const std::vector<bk::PretrainSample>& samples) {
  return {join(samples, {0, 1, 2}), join(samples, {3}), join(samples, {4, 5}), join(samples, {6, 7, 8})};
}

struct LossAndGrads {
  double loss = 0, mlm_loss = 0, nsp_loss = 0;
  int64_t mlm_correct = 0, nsp_correct = 0, nsp_total = 0;
  std::vector<at::Tensor> grads;
};

inline LossAndGrads run(bk::BertForPreTraining& model, const bk::PretrainBatch& batch) {
  for (const auto& p : model.named_parameter_list())
    if (p.tensor.grad().defined()) p.tensor.mutable_grad().zero_();
  const bk::PretrainLoss r = bk::pretraining_loss(model, batch);
  r.loss.backward();
  LossAndGrads out{r.loss.item<double>(), r.mlm_loss.item<double>(), r.nsp_loss.item<double>(),
                   r.mlm_correct.item<int64_t>(), r.nsp_correct.item<int64_t>(), r.nsp_total.item<int64_t>(), {}};
  for (const auto& p : model.named_parameter_list())
    out.grads.push_back(p.tensor.grad().defined() ? p.tensor.grad().to(at::kCPU, at::kFloat).clone()
                                                  : at::zeros({p.tensor.sizes()}, at::kFloat));
  return out;
}

// The largest ||a - b|| / max(||b||, floor) over the gradient tensors, floor = floor_fraction times the largest
// reference norm. The floor keeps gradients that are zero in exact arithmetic (a key bias: softmax ignores a shift
// shared by every key) from comparing one rounding noise with another.
inline double worst_relative_gradient_error(const LossAndGrads& a, const LossAndGrads& b, double floor_fraction) {
  double largest = 0;
  for (const auto& g : b.grads) largest = std::max(largest, g.norm().item<double>());
  double worst = 0;
  for (size_t i = 0; i < a.grads.size() && i < b.grads.size(); ++i) {
    const double reference = std::max(b.grads[i].norm().item<double>(), floor_fraction * largest);
    worst = std::max(worst, (a.grads[i] - b.grads[i]).norm().item<double>() / reference);
  }
  return worst;
}

// Loss terms to a relative 1e-6, counts exactly, every gradient element to an absolute grad_tolerance.
inline void check_equal(const LossAndGrads& a, const LossAndGrads& b, const bk::BertForPreTraining& model,
                        double grad_tolerance = 1e-5) {
  std::vector<std::string> names;
  for (const auto& p : model.named_parameter_list()) names.push_back(p.name);
  CHECK(a.loss == doctest::Approx(b.loss).epsilon(1e-6));
  CHECK(a.mlm_loss == doctest::Approx(b.mlm_loss).epsilon(1e-6));
  CHECK(a.nsp_loss == doctest::Approx(b.nsp_loss).epsilon(1e-6));
  CHECK(a.mlm_correct == b.mlm_correct);
  CHECK(a.nsp_correct == b.nsp_correct);
  CHECK(a.nsp_total == b.nsp_total);
  REQUIRE(a.grads.size() == b.grads.size());
  double worst = 0;
  std::string where;
  for (size_t i = 0; i < a.grads.size(); ++i) {
    const double diff = (a.grads[i] - b.grads[i]).abs().max().item<double>();
    if (diff > worst) worst = diff, where = names[i];
  }
  INFO("largest gradient difference ", worst, " in ", where);
  CHECK(worst < grad_tolerance);
}

// How many nodes of the autograd graph behind `t` have `name` in their name (a Function of ours, say a kernel's: it
// ran, not the ATen ops it falls back to) and pass `also`.
inline int64_t graph_nodes(const at::Tensor& t, const std::string& name,
                           const std::function<bool(const torch::autograd::Node&)>& also = nullptr) {
  std::vector<torch::autograd::Node*> todo = {t.grad_fn().get()};
  std::set<torch::autograd::Node*> seen;
  int64_t found = 0;
  while (!todo.empty()) {
    torch::autograd::Node* node = todo.back();
    todo.pop_back();
    if (node == nullptr || !seen.insert(node).second) continue;
    if (node->name().find(name) != std::string::npos && (!also || also(*node))) ++found;
    for (const auto& edge : node->next_edges()) todo.push_back(edge.function.get());
  }
  return found;
}

}  // namespace bk_test
