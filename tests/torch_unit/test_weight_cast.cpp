// Grouped weight casts (model/weight_cast.h) against autocast's own per-weight casts, on the CPU under bf16
// autocast: the same values, the same gradients, bit for bit.
#include "pretrain_samples.h"

#include "model/weight_cast.h"
#include "device/precision.h"

#include <ATen/ATen.h>

#include <doctest/doctest.h>

namespace {

// Restores the default (grouped) when a test ends.
struct GroupedCasts {
  explicit GroupedCasts(bool on) { bk::set_grouped_weight_casts(on); }
  ~GroupedCasts() { bk::set_grouped_weight_casts(true); }
};

}  // namespace

TEST_CASE("autocast_weights: one node casts a group as autocast would, and its gradients back") {
  at::manual_seed(5);
  const at::Tensor w = at::randn({4, 3}).requires_grad_(true), b = at::randn({4}).requires_grad_(true);
  const at::Tensor unused = at::randn({2}).requires_grad_(true);
  const at::Tensor ids = at::arange(3);                  // not floating point: left alone
  const at::Tensor half = at::randn({3}, at::kBFloat16);  // already autocast's dtype: left alone
  const at::Tensor wide = at::randn({3}, at::kDouble);    // float64, which autocast does not cast: left alone
  const at::Tensor other = at::randn({3}, at::kHalf);     // castable, but not the group's dtype: left to autocast
  const at::Tensor x = at::randn({5, 3});
  const at::Tensor dy = at::randn({5, 4});

  const bk::AutocastScope autocast(bk::Precision::bf16, at::Device(at::kCPU));
  const auto cast = bk::autocast_weights({half, ids, wide, w, b, unused, other});
  REQUIRE(cast.size() == 7);
  CHECK(cast[0].is_same(half));
  CHECK(cast[1].is_same(ids));
  CHECK(cast[2].is_same(wide));
  CHECK((cast[3].scalar_type() == at::kBFloat16));
  CHECK(at::equal(cast[3], w.detach().to(at::kBFloat16)));
  CHECK(at::equal(cast[4], b.detach().to(at::kBFloat16)));
  const bool one_node = cast[3].grad_fn() == cast[4].grad_fn() && cast[4].grad_fn() == cast[5].grad_fn();
  CHECK(one_node);  // one autograd node for the group
  CHECK(cast[6].is_same(other));
  at::linear(x, cast[3], cast[4]).backward(dy);
  const at::Tensor dw = w.grad().clone(), db = b.grad().clone();
  CHECK_FALSE(unused.grad().defined());  // no gradient reached it: none is made up

  // The same ops on autocast's own casts give the same gradients, bit for bit.
  w.mutable_grad().reset();
  b.mutable_grad().reset();
  at::linear(x, w, b).backward(dy);  // autocast casts w and b itself
  CHECK(at::equal(w.grad(), dw));
  CHECK(at::equal(b.grad(), db));
}

TEST_CASE("autocast_weights: without autocast the weights come back as they are") {
  const at::Tensor w = at::randn({4, 3}).requires_grad_(true);
  const auto out = bk::autocast_weights({w});
  CHECK(out[0].is_same(w));
}

TEST_CASE("autocast_concatenated: the casts write the concatenations, and gradients split back, as cat would") {
  at::manual_seed(6);
  auto leaf = [](std::vector<int64_t> sizes) { return at::randn(sizes).requires_grad_(true); };
  const at::Tensor q = leaf({4, 3}), k = leaf({4, 3}), v = leaf({2, 3}), qb = leaf({4}), kb = leaf({4}), vb = leaf({2});
  const at::Tensor x = at::randn({5, 3}), dy = at::randn({5, 10});
  auto grads = [&] {
    std::vector<at::Tensor> g;
    for (const at::Tensor* t : {&q, &k, &v, &qb, &kb, &vb}) {
      g.push_back(t->grad().clone());
      t->mutable_grad().reset();
    }
    return g;
  };
  const bk::AutocastScope autocast(bk::Precision::bf16, at::Device(at::kCPU));
  const auto fused = bk::autocast_concatenated({q, k, v, qb, kb, vb}, {3, 3});
  REQUIRE(fused.size() == 2);
  CHECK((fused[0].sizes() == at::IntArrayRef{10, 3}));
  CHECK((fused[0].scalar_type() == at::kBFloat16));
  CHECK(at::equal(fused[0], at::cat({q, k, v}).detach().to(at::kBFloat16)));
  CHECK(at::equal(fused[1], at::cat({qb, kb, vb}).detach().to(at::kBFloat16)));
  CHECK(fused[0].grad_fn() == fused[1].grad_fn());  // one node: one launch each way
  const at::Tensor out = at::linear(x, fused[0], fused[1]);
  CHECK(bk_test::graph_nodes(out, "Cat") == 0);
  out.backward(dy);
  const auto split = grads();

  // The reference: autocast's own casts, concatenated by cat, with its backward splitting the gradient.
  {
    const GroupedCasts separate(false);
    const auto reference = bk::autocast_concatenated({q, k, v, qb, kb, vb}, {3, 3});
    CHECK(bk_test::graph_nodes(reference[0], "Cat") == 1);
    at::linear(x, reference[0], reference[1]).backward(dy);
  }
  const auto expected = grads();
  for (size_t i = 0; i < split.size(); ++i) {
    CAPTURE(i);
    CHECK(at::equal(split[i], expected[i]));
  }

  // A gradient that arrives transposed (not in the weight's layout), and a run that gets none.
  {
    const auto again = bk::autocast_concatenated({q, k, v, qb, kb, vb}, {3, 3});
    const at::Tensor dw = at::randn({3, 10});
    (again[0].t() * dw).sum().backward();  // the gradient reaches the cast as dw^T, a transposed view
    CHECK(at::equal(q.grad(), dw.t().narrow(0, 0, 4).to(at::kBFloat16).to(at::kFloat)));
    CHECK(at::equal(v.grad(), dw.t().narrow(0, 8, 2).to(at::kBFloat16).to(at::kFloat)));
    CHECK_FALSE(qb.grad().defined());  // the biases' run was not used: no gradient made up
    for (const at::Tensor* t : {&q, &k, &v}) t->mutable_grad().reset();
  }

  // A frozen weight leaves the group, and the run is concatenated after the casts, with the same values.
  const at::Tensor frozen = at::randn({2, 3});
  const auto mixed = bk::autocast_concatenated({q, k, frozen}, {3});
  CHECK(bk_test::graph_nodes(mixed[0], "Cat") == 1);
  CHECK(at::equal(mixed[0], at::cat({q, k, frozen}).detach().to(at::kBFloat16)));
  // Runs that do not cover the weights are a programming error.
  CHECK_THROWS(bk::autocast_concatenated({q, k}, {3}));
  CHECK_THROWS(bk::autocast_concatenated({q, k}, {1}));
  CHECK(bk::autocast_concatenated({}, {}).empty());
  // A 0-dim weight cannot join a run: the fallback's cat refuses it.
  CHECK_THROWS(bk::autocast_concatenated({qb, at::scalar_tensor(1.0)}, {2}));
}

TEST_CASE("autocast_concatenated: without autocast, the weights concatenated as they are") {
  const at::Tensor a = at::randn({2, 3}), b = at::randn({1, 3});
  const auto out = bk::autocast_concatenated({a, b, a}, {2, 1});
  CHECK(at::equal(out[0], at::cat({a, b})));
  CHECK(out[1].is_same(a));
}

TEST_CASE("a bf16 autocast training step: grouped weight casts give autocast's loss and gradients exactly") {
  const auto samples = bk_test::make_samples(12, 9);
  at::manual_seed(4);
  bk::BertForPreTraining model(bk_test::small_config());
  model.eval();  // no dropout: the two steps draw nothing
  const auto batch = bk::collate_pretrain_batch(samples, 8, false, /*unpadded=*/true);
  const int64_t layers = bk_test::small_config().num_hidden_layers;
  auto step = [&](bool grouped) {
    const GroupedCasts casts(grouped);
    for (const auto& p : model.named_parameter_list()) p.tensor.mutable_grad() = at::Tensor();
    const bk::AutocastScope autocast(bk::Precision::bf16, at::Device(at::kCPU));
    // Three cast nodes per layer where grouped, none where autocast casts each weight itself.
    const at::Tensor loss = bk::pretraining_loss(model, batch).loss;
    CHECK(bk_test::graph_nodes(loss, "CastWeights") == (grouped ? 3 * layers : 0));
    return bk_test::run(model, batch);
  };
  const bk_test::LossAndGrads grouped = step(true), separate = step(false);
  CHECK(grouped.loss == separate.loss);
  REQUIRE(grouped.grads.size() == separate.grads.size());
  for (size_t i = 0; i < grouped.grads.size(); ++i) {
    CAPTURE(i);
    CHECK(at::equal(grouped.grads[i], separate.grads[i]));
  }
}
