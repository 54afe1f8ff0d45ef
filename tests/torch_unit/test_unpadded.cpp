// Unpadded attention and packed rows against the padded model: the same loss and the same gradients.
#include "torch_doctest.h"

#include "../error_of.h"
#include "model/bert.h"
#include "model/finetune_models.h"
#include "tasks/pretraining/batch.h"
#include "tasks/pretraining/pretrain_loss.h"

#include <ATen/ATen.h>

#include <cstdint>
#include <string>
#include <vector>

namespace {

bk::BertConfig small_config() {
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
std::vector<bk::PretrainSample> make_samples(size_t count, uint64_t seed) {
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
bk::PretrainSample join(const std::vector<bk::PretrainSample>& samples, std::vector<size_t> which) {
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

struct LossAndGrads {
  double loss = 0, mlm_loss = 0, nsp_loss = 0;
  int64_t mlm_correct = 0, nsp_correct = 0, nsp_total = 0;
  std::vector<at::Tensor> grads;
};

LossAndGrads run(bk::BertForPreTraining& model, const bk::PretrainBatch& batch) {
  for (const auto& p : model.named_parameter_list())
    if (p.tensor.grad().defined()) p.tensor.mutable_grad().zero_();
  const bk::PretrainLoss r = bk::pretraining_loss(model, batch);
  r.loss.backward();
  LossAndGrads out{r.loss.item<double>(), r.mlm_loss.item<double>(), r.nsp_loss.item<double>(),
                   r.mlm_correct.item<int64_t>(), r.nsp_correct.item<int64_t>(), r.nsp_total.item<int64_t>(), {}};
  for (const auto& p : model.named_parameter_list())
    out.grads.push_back(p.tensor.grad().defined() ? p.tensor.grad().clone() : at::zeros_like(p.tensor));
  return out;
}

void check_equal(const LossAndGrads& a, const LossAndGrads& b, const bk::BertForPreTraining& model) {
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
  CHECK(worst < 1e-5);
}

}  // namespace

TEST_CASE("unpadded attention: forward and backward equal the padded model's") {
  const auto samples = make_samples(12, 7);
  at::manual_seed(3);
  bk::BertForPreTraining model(small_config());
  model.eval();  // no dropout: the two paths must agree exactly
  const auto padded = bk::collate_pretrain_batch(samples, 8, false, /*unpadded=*/false);
  const auto unpadded = bk::collate_pretrain_batch(samples, 8, false, /*unpadded=*/true);
  REQUIRE(!padded.stream.defined());
  REQUIRE(unpadded.stream.defined());
  CHECK(unpadded.stream.tokens() == padded.attention_mask.sum().item<int64_t>());
  CHECK(unpadded.stream.tokens() < padded.attention_mask.numel());  // there is padding to leave out
  check_equal(run(model, unpadded), run(model, padded), model);
}

TEST_CASE("packed rows: the loss and gradients of their samples unpacked") {
  const auto samples = make_samples(9, 11);
  at::manual_seed(5);
  bk::BertForPreTraining model(small_config());
  model.eval();
  // Rows of three, one and two samples and a row of three again: every sample once.
  const std::vector<bk::PretrainSample> rows = {join(samples, {0, 1, 2}), join(samples, {3}), join(samples, {4, 5}),
                                                join(samples, {6, 7, 8})};
  const auto packed = bk::collate_pretrain_batch(rows, 24, false, /*unpadded=*/true);
  CHECK(packed.size() == 4);
  CHECK(packed.next_sentence_labels.size(0) == 9);
  CHECK(packed.stream.sequences() == 9);
  // Positions restart with each sample of a row.
  CHECK(packed.stream.positions[static_cast<int64_t>(samples[0].length())].item<int64_t>() == 0);
  // The reference: the same samples one per row, through the padded model.
  const auto reference = bk::collate_pretrain_batch(samples, 8, false, /*unpadded=*/false);
  check_equal(run(model, packed), run(model, reference), model);
}

TEST_CASE("packed rows: refused without unpadded attention") {
  const auto samples = make_samples(3, 13);
  const std::vector<bk::PretrainSample> rows = {join(samples, {0, 1}), join(samples, {2})};
  CHECK(bk_test::error_of([&] { bk::collate_pretrain_batch(rows, 24, false, false); })
            .find("packed rows need unpadded attention") != std::string::npos);
}

TEST_CASE("unpadded attention: bin4's row slices keep their token stream") {
  const auto samples = make_samples(6, 17);
  at::manual_seed(9);
  bk::BertForPreTraining model(small_config());
  model.eval();
  const auto whole = bk::collate_pretrain_batch(samples, 8, false, true);
  const auto part = bk::slice_rows(whole, 2, 3);
  const std::vector<bk::PretrainSample> middle(samples.begin() + 2, samples.begin() + 5);
  const auto reference = bk::collate_pretrain_batch(middle, 8, false, false);
  CHECK(part.seq_len() == reference.seq_len());
  check_equal(run(model, part), run(model, reference), model);
}

TEST_CASE("fine-tuning models: unpadded span and class logits equal the padded ones at every real token") {
  const auto samples = make_samples(9, 11);
  const auto batch = bk::collate_pretrain_batch(samples, 8, false, /*unpadded=*/true);
  at::manual_seed(5);
  bk::BertForQuestionAnswering qa(small_config());
  bk::BertForSequenceClassification classifier(small_config(), 3);
  qa.eval();
  classifier.eval();
  at::NoGradGuard no_grad;
  const bk::SpanLogits padded = qa.forward(batch.input_ids, batch.segment_ids, batch.attention_mask);
  const bk::SpanLogits unpadded = qa.forward_stream(batch.input_ids, batch.segment_ids, batch.stream);
  REQUIRE(unpadded.start.size(0) == batch.stream.tokens());
  const at::Tensor index = batch.stream.token_index;
  CHECK((padded.start.reshape({-1}).index_select(0, index) - unpadded.start).abs().max().item<double>() < 1e-5);
  CHECK((padded.end.reshape({-1}).index_select(0, index) - unpadded.end).abs().max().item<double>() < 1e-5);
  const at::Tensor classes = classifier.forward(batch.input_ids, batch.segment_ids, batch.attention_mask);
  const at::Tensor streamed = classifier.forward_stream(batch.input_ids, batch.segment_ids, batch.stream);
  REQUIRE(streamed.sizes() == classes.sizes());
  CHECK((classes - streamed).abs().max().item<double>() < 1e-5);
}
