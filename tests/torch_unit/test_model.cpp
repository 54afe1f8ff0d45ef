#include "torch_doctest.h"

#include "../error_of.h"
#include "util/error.h"
#include "model/bert.h"
#include "tasks/pretraining/pretrain_loss.h"

#include <ATen/autocast_mode.h>

#include <ATen/ATen.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

namespace {

bk::BertConfig tiny_config(int64_t vocab = 99) {
  bk::BertConfig c;
  c.vocab_size = vocab;
  c.hidden_size = 16;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 2;
  c.intermediate_size = 32;
  c.max_position_embeddings = 24;
  c.type_vocab_size = 2;
  return c;
}

std::shared_ptr<bk::BertForPreTraining> make_model(const bk::BertConfig& c, uint64_t seed) {
  at::manual_seed(seed);
  auto m = std::make_shared<bk::BertForPreTraining>(c);
  m->eval();
  return m;
}

// Two samples of 10 tokens; the second has 3 padding tokens at the end.
bk::PretrainBatch tiny_batch() {
  bk::PretrainBatch b;
  b.input_ids = at::tensor({1, 5, 6, 7, 2, 8, 9, 10, 11, 2, 1, 12, 13, 2, 14, 15, 2, 0, 0, 0}, at::kLong).view({2, 10});
  b.segment_ids = at::tensor({0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0}, at::kLong).view({2, 10});
  b.attention_mask = at::tensor({1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0}, at::kLong).view({2, 10});
  b.masked_lm_positions = at::tensor({2, 6, 8, 3, 0, 0}, at::kLong).view({2, 3});
  b.masked_lm_ids = at::tensor({40, 41, 98, 42, -1, -1}, at::kLong).view({2, 3});
  b.next_sentence_labels = at::tensor({0, 1}, at::kLong);
  return b;
}

using bk_test::error_of;

}  // namespace

TEST_CASE("model: parameter names and shapes are HF's") {
  const auto c = tiny_config();
  auto m = make_model(c, 1);
  std::vector<std::string> want{"bert.embeddings.word_embeddings.weight", "bert.embeddings.position_embeddings.weight",
                                "bert.embeddings.token_type_embeddings.weight", "bert.embeddings.LayerNorm.weight",
                                "bert.embeddings.LayerNorm.bias"};
  for (int i = 0; i < 2; ++i)
    for (const char* s : {"attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense",
                          "attention.output.LayerNorm", "intermediate.dense", "output.dense", "output.LayerNorm"})
      for (const char* wb : {".weight", ".bias"}) want.push_back("bert.encoder.layer." + std::to_string(i) + "." + s + wb);
  for (const char* s : {"bert.pooler.dense.weight", "bert.pooler.dense.bias", "cls.predictions.transform.dense.weight",
                        "cls.predictions.transform.dense.bias", "cls.predictions.transform.LayerNorm.weight",
                        "cls.predictions.transform.LayerNorm.bias", "cls.predictions.bias",
                        "cls.seq_relationship.weight", "cls.seq_relationship.bias"})
    want.push_back(s);
  std::vector<std::string> got;
  for (const auto& p : m->named_parameter_list()) got.push_back(p.name);
  CHECK((got == want));
  // LibTorch's own module tree spells the same names (what a generic optimizer or serializer sees).
  std::vector<std::string> torch_names;
  for (const auto& item : m->named_parameters()) torch_names.push_back(item.key());
  CHECK((std::set<std::string>(torch_names.begin(), torch_names.end()) == std::set<std::string>(want.begin(), want.end())));
  CHECK(torch_names.size() == want.size());

  const auto sd = m->state_dict();
  CHECK(sd.size() == want.size());
  CHECK((sd.at("bert.embeddings.word_embeddings.weight").sizes() == at::IntArrayRef{99, 16}));
  CHECK((sd.at("cls.predictions.bias").sizes() == at::IntArrayRef{99}));
  CHECK((sd.at("bert.embeddings.position_embeddings.weight").sizes() == at::IntArrayRef{24, 16}));
  CHECK((sd.at("bert.encoder.layer.1.intermediate.dense.weight").sizes() == at::IntArrayRef{32, 16}));
  CHECK((sd.at("bert.encoder.layer.1.output.dense.weight").sizes() == at::IntArrayRef{16, 32}));
  CHECK((sd.at("cls.seq_relationship.weight").sizes() == at::IntArrayRef{2, 16}));
  CHECK(sd.count("cls.predictions.decoder.weight") == 0);
}

TEST_CASE("model: initialisation follows BERT") {
  bk::BertConfig c = tiny_config();
  c.hidden_size = 64;
  c.intermediate_size = 256;
  c.initializer_range = 0.05;
  auto m = make_model(c, 3);
  const auto sd = m->state_dict();
  const double std = sd.at("bert.encoder.layer.0.intermediate.dense.weight").std().item<double>();
  CHECK(std == doctest::Approx(0.05).epsilon(0.05));
  CHECK(sd.at("bert.encoder.layer.0.intermediate.dense.bias").abs().sum().item<double>() == 0.0);
  CHECK(sd.at("bert.embeddings.LayerNorm.weight").eq(1).all().item<bool>());
  CHECK(sd.at("cls.predictions.bias").abs().sum().item<double>() == 0.0);
}

TEST_CASE("model: the padded vocabulary never shows") {
  const auto c = tiny_config(99);  // padded to 104 inside
  auto m = make_model(c, 2);
  CHECK(m->padded_vocab_size() == 104);
  const auto b = tiny_batch();
  const auto full = m->forward(b.input_ids, b.segment_ids, b.attention_mask);
  CHECK((full.mlm_logits.sizes() == at::IntArrayRef{2, 10, 99}));
  const auto gathered = m->forward(b.input_ids, b.segment_ids, b.attention_mask, b.masked_lm_positions);
  CHECK((gathered.mlm_logits.sizes() == at::IntArrayRef{6, 99}));
  CHECK((gathered.nsp_logits.sizes() == at::IntArrayRef{2, 2}));
  // The padded product stays available (the fused cross entropy reads it in place); the logits are its first columns.
  CHECK((gathered.mlm_logits_padded.sizes() == at::IntArrayRef{6, 104}));
  CHECK(gathered.mlm_logits.data_ptr() == gathered.mlm_logits_padded.data_ptr());
  CHECK(at::equal(gathered.mlm_logits, gathered.mlm_logits_padded.narrow(1, 0, 99)));

  at::Tensor word = m->named_parameter_list()[0].tensor;
  CHECK((word.sizes() == at::IntArrayRef{104, 16}));
  CHECK(word.narrow(0, 99, 5).abs().sum().item<double>() == 0.0);
  // Whatever the padded rows hold, no output changes.
  {
    at::NoGradGuard g;
    word.narrow(0, 99, 5).fill_(7.0);
  }
  const auto again = m->forward(b.input_ids, b.segment_ids, b.attention_mask, b.masked_lm_positions);
  CHECK(at::equal(again.mlm_logits, gathered.mlm_logits));
  // And training never moves them: their gradients are zero.
  m->train();
  m->zero_grad();
  bk::pretraining_loss(*m, b).loss.backward();
  CHECK(word.grad().narrow(0, 99, 5).abs().sum().item<double>() == 0.0);
  CHECK(word.grad().narrow(0, 0, 99).abs().sum().item<double>() > 0.0);
  at::Tensor bias = m->named_parameter_list()[m->named_parameter_list().size() - 3].tensor;
  CHECK((bias.sizes() == at::IntArrayRef{104}));
  CHECK(bias.grad().narrow(0, 99, 5).abs().sum().item<double>() == 0.0);
}

TEST_CASE("model: gathered MLM logits are the full logits at the masked positions; padding is masked") {
  auto m = make_model(tiny_config(), 4);
  const auto b = tiny_batch();
  const auto full = m->forward(b.input_ids, b.segment_ids, b.attention_mask);
  const auto gathered = m->forward(b.input_ids, b.segment_ids, b.attention_mask, b.masked_lm_positions);
  for (int64_t s = 0; s < 2; ++s)
    for (int64_t j = 0; j < 3; ++j) {
      const int64_t pos = b.masked_lm_positions[s][j].item<int64_t>();
      CHECK(at::allclose(gathered.mlm_logits[s * 3 + j], full.mlm_logits[s][pos], 1e-5, 1e-6));
    }
  // Tokens behind the attention mask do not reach the real ones.
  at::Tensor other_ids = b.input_ids.clone();
  other_ids[1][8] = 50;
  other_ids[1][9] = 60;
  const auto changed = m->forward(other_ids, b.segment_ids, b.attention_mask, b.masked_lm_positions);
  CHECK(at::allclose(changed.mlm_logits, gathered.mlm_logits, 1e-5, 1e-6));
  CHECK(at::allclose(changed.nsp_logits, gathered.nsp_logits, 1e-5, 1e-6));
  // Without the mask they do.
  const auto unmasked = m->forward(other_ids, b.segment_ids, at::ones_like(b.attention_mask), b.masked_lm_positions);
  CHECK_FALSE(at::allclose(unmasked.nsp_logits, gathered.nsp_logits, 1e-5, 1e-6));
  // An undefined mask means "no padding".
  const auto none = m->forward(other_ids, b.segment_ids, {}, b.masked_lm_positions);
  CHECK(at::allclose(none.nsp_logits, unmasked.nsp_logits, 1e-5, 1e-6));
}

TEST_CASE("model: dropout only in training mode") {
  bk::BertConfig c = tiny_config();
  c.hidden_dropout_prob = 0.3;
  auto m = make_model(c, 5);
  const auto b = tiny_batch();
  const auto e1 = m->forward(b.input_ids, b.segment_ids, b.attention_mask, b.masked_lm_positions);
  const auto e2 = m->forward(b.input_ids, b.segment_ids, b.attention_mask, b.masked_lm_positions);
  CHECK(at::equal(e1.mlm_logits, e2.mlm_logits));
  m->train();
  const auto t1 = m->forward(b.input_ids, b.segment_ids, b.attention_mask, b.masked_lm_positions);
  CHECK_FALSE(at::allclose(t1.mlm_logits, e1.mlm_logits));
}

TEST_CASE("model: state dict round trip") {
  const auto c = tiny_config();
  auto a = make_model(c, 6);
  auto b = make_model(c, 7);
  const auto batch = tiny_batch();
  const auto out_a = a->forward(batch.input_ids, batch.segment_ids, batch.attention_mask, batch.masked_lm_positions);
  const auto out_b = b->forward(batch.input_ids, batch.segment_ids, batch.attention_mask, batch.masked_lm_positions);
  CHECK_FALSE(at::allclose(out_a.mlm_logits, out_b.mlm_logits));
  b->load_state_dict(a->state_dict());
  const auto out_b2 = b->forward(batch.input_ids, batch.segment_ids, batch.attention_mask, batch.masked_lm_positions);
  CHECK(at::equal(out_a.mlm_logits, out_b2.mlm_logits));
  CHECK(at::equal(out_a.nsp_logits, out_b2.nsp_logits));
  // Half-precision inputs are converted.
  std::map<std::string, at::Tensor> half;
  for (auto& [k, v] : a->state_dict()) half[k] = v.to(at::kBFloat16);
  b->load_state_dict(half);
  CHECK(at::allclose(b->state_dict().at("bert.pooler.dense.weight"), a->state_dict().at("bert.pooler.dense.weight"), 1e-2, 1e-3));
}

TEST_CASE("model: strict loading lists missing and unexpected keys; shapes are checked") {
  const auto c = tiny_config();
  auto m = make_model(c, 8);
  auto sd = m->state_dict();
  sd.erase("bert.encoder.layer.1.output.dense.bias");
  sd.erase("cls.seq_relationship.weight");
  sd["bert.encoder.layer.2.output.dense.bias"] = at::zeros({16});
  const std::string err = error_of([&] { m->load_state_dict(sd, true, "ckpt.safetensors"); });
  CAPTURE(err);
  CHECK(err.find("ckpt.safetensors") == 0);
  CHECK(err.find("missing keys (2): bert.encoder.layer.1.output.dense.bias, cls.seq_relationship.weight") != std::string::npos);
  CHECK(err.find("unexpected keys (1): bert.encoder.layer.2.output.dense.bias") != std::string::npos);
  // Non-strict: the rest loads, the missing keep their values.
  const at::Tensor before = m->state_dict().at("cls.seq_relationship.weight").clone();
  sd["bert.pooler.dense.bias"] = at::full({16}, 0.25);
  m->load_state_dict(sd, false);
  CHECK(m->state_dict().at("bert.pooler.dense.bias")[3].item<float>() == 0.25f);
  CHECK(at::equal(m->state_dict().at("cls.seq_relationship.weight"), before));

  auto bad = m->state_dict();
  bad["bert.embeddings.word_embeddings.weight"] = at::zeros({104, 16});  // the padded size is not the vocabulary
  const std::string shape_err = error_of([&] { m->load_state_dict(bad); });
  CHECK(shape_err.find("bert.embeddings.word_embeddings.weight has shape [104, 16], but the config needs [99, 16]") !=
        std::string::npos);
  // Tied copies HF may carry are accepted.
  auto tied = m->state_dict();
  tied["cls.predictions.decoder.weight"] = tied.at("bert.embeddings.word_embeddings.weight");
  tied["cls.predictions.decoder.bias"] = tied.at("cls.predictions.bias");
  tied["bert.embeddings.position_ids"] = at::arange(24).unsqueeze(0);
  CHECK_NOTHROW(m->load_state_dict(tied));
}

TEST_CASE("loss: cross entropy and counts on a hand-computable case") {
  // Two samples, two prediction slots each; one slot unused (-1). Vocabulary of 3.
  bk::PretrainBatch b;
  b.masked_lm_ids = at::tensor({0, 2, 1, -1}, at::kLong).view({2, 2});
  b.next_sentence_labels = at::tensor({1, 0}, at::kLong);
  bk::BertOutput out;
  out.mlm_logits = at::tensor({2.0f, 0.0f, 0.0f,     // label 0, argmax 0: correct
                               0.0f, 1.0f, 0.0f,     // label 2, argmax 1: wrong
                               0.0f, 0.0f, 3.0f,     // label 1, argmax 2: wrong
                               9.0f, 0.0f, 0.0f})    // unused
                       .view({4, 3});
  out.nsp_logits = at::tensor({0.0f, 1.0f, 0.5f, 0.0f}).view({2, 2});  // both correct
  const auto r = bk::pretraining_loss(out, b);
  auto ce = [](std::vector<double> z, int label) {
    double s = 0;
    for (double v : z) s += std::exp(v);
    return std::log(s) - z[static_cast<size_t>(label)];
  };
  const double mlm = (ce({2, 0, 0}, 0) + ce({0, 1, 0}, 2) + ce({0, 0, 3}, 1)) / 3;
  const double nsp = (ce({0, 1}, 1) + ce({0.5, 0}, 0)) / 2;
  CHECK(r.mlm_loss.item<double>() == doctest::Approx(mlm).epsilon(1e-6));
  CHECK(r.nsp_loss.item<double>() == doctest::Approx(nsp).epsilon(1e-6));
  CHECK(r.loss.item<double>() == doctest::Approx(mlm + nsp).epsilon(1e-6));
  CHECK(r.mlm_correct.item<int64_t>() == 1);
  CHECK(r.mlm_total.item<int64_t>() == 3);
  CHECK(r.nsp_correct.item<int64_t>() == 2);
  CHECK(r.nsp_total.item<int64_t>() == 2);
}

TEST_CASE("loss: the model's loss is finite, differentiable, and counts the real predictions") {
  auto m = make_model(tiny_config(), 9);
  m->train();
  const auto r = bk::pretraining_loss(*m, tiny_batch());
  CHECK(std::isfinite(r.loss.item<double>()));
  CHECK(r.mlm_total.item<int64_t>() == 4);
  CHECK(r.nsp_total.item<int64_t>() == 2);
  // Random init: cross entropy close to log(vocab) and log(2).
  CHECK(r.mlm_loss.item<double>() == doctest::Approx(std::log(99.0)).epsilon(0.1));
  r.loss.backward();
  for (const auto& p : m->named_parameter_list()) {
    CAPTURE(p.name);
    CHECK(p.tensor.grad().defined());
  }
}

TEST_CASE("model: Module::to keeps the parameters the model computes with; autocast runs in bf16") {
  const auto c = tiny_config();
  auto m = make_model(c, 10);
  const auto b = tiny_batch();
  const auto fp32 = m->forward(b.input_ids, b.segment_ids, b.attention_mask, b.masked_lm_positions);
  m->to(at::kDouble);
  CHECK((m->named_parameter_list()[0].tensor.scalar_type() == at::kDouble));
  CHECK((m->state_dict().at("cls.predictions.bias").scalar_type() == at::kDouble));
  const auto fp64 = m->forward(b.input_ids, b.segment_ids, b.attention_mask, b.masked_lm_positions);
  CHECK((fp64.mlm_logits.scalar_type() == at::kDouble));
  CHECK(at::allclose(fp64.mlm_logits.to(at::kFloat), fp32.mlm_logits, 1e-4, 1e-5));
  m->to(at::kFloat);

  // CPU autocast (bf16): the fused QKV weight goes through autocast's cast cache; results close to fp32.
  at::autocast::set_autocast_enabled(at::kCPU, true);
  at::autocast::set_autocast_dtype(at::kCPU, at::kBFloat16);
  bk::BertOutput low;
  {
    at::autocast::increment_nesting();  // as torch.autocast does, so the cast cache is cleared at the end
    low = m->forward(b.input_ids, b.segment_ids, b.attention_mask, b.masked_lm_positions);
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  }
  at::autocast::set_autocast_enabled(at::kCPU, false);
  CHECK((low.mlm_logits.scalar_type() == at::kBFloat16));
  CHECK(at::allclose(low.mlm_logits.to(at::kFloat), fp32.mlm_logits, 0.05, 0.05));
}
