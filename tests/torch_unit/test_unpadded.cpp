// Unpadded attention and packed rows against the padded model: the same loss and the same gradients.
#include "pretrain_samples.h"

#include "../error_of.h"
#include "model/finetune_models.h"

#include <ATen/ATen.h>

#include <vector>

using bk_test::check_equal;
using bk_test::join;
using bk_test::make_samples;
using bk_test::run;
using bk_test::small_config;

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
  const auto packed = bk::collate_pretrain_batch(bk_test::packed_rows(samples), 24, false, /*unpadded=*/true);
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
