// LAMB, AdamW and StableAdamW on cases small enough to work by hand (eps = 0 makes the first Adam direction exactly
// sign(g)), the weight-decay exclusion rule, clipping, and bit-exact state export and import.
#include "train/optim/make_optimizer.h"

#include "util/error.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

namespace {

at::Tensor vec(std::initializer_list<float> values) { return at::tensor(std::vector<float>(values)); }

// A leaf parameter with the given values and gradient.
at::Tensor param(std::initializer_list<float> values, std::initializer_list<float> grad) {
  at::Tensor p = vec(values).set_requires_grad(true);
  p.mutable_grad() = vec(grad);
  return p;
}

double at_index(const at::Tensor& t, int64_t i) { return t.flatten()[i].item<double>(); }

bk::OptimizerConfig config(const std::string& kind, double eps = 0.0) {
  bk::OptimizerConfig c;
  c.kind = *bk::find_choice(bk::kOptimizerKinds, kind);
  c.eps = eps;
  return c;
}

}  // namespace

TEST_CASE("decays_weight: biases and LayerNorm parameters take no weight decay") {
  CHECK(bk::decays_weight("bert.embeddings.word_embeddings.weight"));
  CHECK(bk::decays_weight("cls.predictions.transform.dense.weight"));
  CHECK(bk::decays_weight("unbiased.weight"));
  CHECK(bk::decays_weight("layer.my_bias"));
  CHECK_FALSE(bk::decays_weight("cls.predictions.bias"));
  CHECK_FALSE(bk::decays_weight("bert.encoder.layer.0.attention.self.query.bias"));
  CHECK_FALSE(bk::decays_weight("bias"));
  CHECK_FALSE(bk::decays_weight("bert.encoder.layer.3.output.LayerNorm.weight"));
  CHECK_FALSE(bk::decays_weight("bert.embeddings.LayerNorm.bias"));
  // ModernBERT's norms.
  CHECK_FALSE(bk::decays_weight("model.layers.1.attn_norm.weight"));
  CHECK_FALSE(bk::decays_weight("model.final_norm.weight"));
  CHECK_FALSE(bk::decays_weight("head.norm.weight"));
  CHECK(bk::decays_weight("model.layers.1.attn.Wqkv.weight"));
  CHECK(bk::decays_weight("model.embeddings.tok_embeddings.weight"));
}

TEST_CASE("LAMB: one step on a 2-element weight, gradient below the clipping norm") {
  // w = (3, 4), g = (0.3, 0.4): ||g|| = 0.5 < 1, no pre-normalisation. With eps = 0 the bias-corrected Adam
  // direction is g / |g| = (1, 1); u = (1, 1) + 0.01 w = (1.03, 1.04); r = ||w|| / ||u|| = 5 / sqrt(2.1425).
  at::Tensor w = param({3, 4}, {0.3f, 0.4f});
  auto opt = bk::make_optimizer({{"dense.weight", w}}, config("lamb"));
  const double norm = opt->step(0.1);
  CHECK(norm == doctest::Approx(0.5).epsilon(1e-6));
  const double ratio = 5.0 / std::sqrt(1.03 * 1.03 + 1.04 * 1.04);
  CHECK(at_index(w, 0) == doctest::Approx(3 - 0.1 * ratio * 1.03).epsilon(1e-6));
  CHECK(at_index(w, 1) == doctest::Approx(4 - 0.1 * ratio * 1.04).epsilon(1e-6));
  auto state = opt->state();
  CHECK(at_index(state.at("dense.weight.exp_avg"), 0) == doctest::Approx(0.03).epsilon(1e-6));
  CHECK(at_index(state.at("dense.weight.exp_avg_sq"), 1) == doctest::Approx(0.001 * 0.16).epsilon(1e-6));
  CHECK(state.at("step").item<int64_t>() == 1);
  CHECK(opt->steps() == 1);
}

TEST_CASE("LAMB: a gradient above max_grad_norm is pre-normalised to it") {
  // g = (3, 4): ||g|| = 5, so g' = g / 5 = (0.6, 0.8); the moments see g'.
  at::Tensor w = param({1, 1}, {3, 4});
  auto opt = bk::make_optimizer({{"w", w}}, config("lamb"));
  CHECK(opt->step(0.01) == doctest::Approx(5.0).epsilon(1e-6));
  auto state = opt->state();
  CHECK(at_index(state.at("w.exp_avg"), 0) == doctest::Approx(0.06).epsilon(1e-6));
  CHECK(at_index(state.at("w.exp_avg"), 1) == doctest::Approx(0.08).epsilon(1e-6));
  CHECK(at_index(state.at("w.exp_avg_sq"), 1) == doctest::Approx(0.001 * 0.64).epsilon(1e-6));

  // The global norm spans all parameters: (3, 0) and (0, 4) together have norm 5 as well.
  at::Tensor a = param({1, 1}, {3, 0}), b = param({1, 1}, {0, 4});
  auto split = bk::make_optimizer({{"a", a}, {"b", b}}, config("lamb"));
  CHECK(split->step(0.01) == doctest::Approx(5.0).epsilon(1e-6));
  CHECK(at_index(split->state().at("b.exp_avg"), 1) == doctest::Approx(0.08).epsilon(1e-6));
}

TEST_CASE("LAMB: bias and LayerNorm parameters take a plain Adam step without decay or trust ratio") {
  // eps = 0: u = sign(g), no decay term, r = 1, so w -= lr * sign(g) exactly.
  at::Tensor bias = param({1, 2}, {0.5f, -0.5f});
  at::Tensor gamma = param({2, 2}, {-0.1f, 0.2f});
  at::Tensor weight = param({1, 2}, {0.5f, -0.5f});
  auto opt = bk::make_optimizer({{"dense.bias", bias}, {"LayerNorm.weight", gamma}, {"dense.weight", weight}},
                                config("lamb"));
  opt->step(0.1);
  CHECK(at_index(bias, 0) == doctest::Approx(0.9).epsilon(1e-7));
  CHECK(at_index(bias, 1) == doctest::Approx(2.1).epsilon(1e-7));
  CHECK(at_index(gamma, 0) == doctest::Approx(2.1).epsilon(1e-7));
  CHECK(at_index(gamma, 1) == doctest::Approx(1.9).epsilon(1e-7));
  // The weight with the same values and gradient does get decay and the trust ratio.
  const double ratio = std::sqrt(5.0) / std::hypot(1.01, 1 - 0.02);
  CHECK(at_index(weight, 0) == doctest::Approx(1 - 0.1 * ratio * 1.01).epsilon(1e-6));
  CHECK(at_index(weight, 1) == doctest::Approx(2 + 0.1 * ratio * (1 - 0.02)).epsilon(1e-6));
}

TEST_CASE("LAMB: trust_ratio_all applies the ratio to undecayed parameters too") {
  bk::OptimizerConfig c = config("lamb");
  c.trust_ratio_all = true;
  at::Tensor bias = param({1, 2}, {0.5f, -0.5f});
  auto opt = bk::make_optimizer({{"dense.bias", bias}}, c);
  opt->step(0.1);
  const double ratio = std::sqrt(5.0) / std::sqrt(2.0);  // ||b|| / ||sign(g)||, no decay term
  CHECK(at_index(bias, 0) == doctest::Approx(1 - 0.1 * ratio).epsilon(1e-6));
  CHECK(at_index(bias, 1) == doctest::Approx(2 + 0.1 * ratio).epsilon(1e-6));
}

TEST_CASE("LAMB: the trust ratio is 1 where the weight norm or the update norm is 0") {
  bk::OptimizerConfig c = config("lamb");
  c.trust_ratio_all = true;
  at::Tensor zero = param({0, 0}, {1, 2});      // ||w|| = 0: u = sign(g) (decay adds 0), w = -lr u
  at::Tensor still = param({1, 2}, {0, 0});     // g = 0: u = 0 / (0 + eps) = 0, ||u|| = 0
  c.eps = 1e-6;
  auto opt = bk::make_optimizer({{"zero.weight", zero}, {"still.bias", still}}, c);
  opt->step(0.5);
  CHECK(at_index(zero, 0) == doctest::Approx(-0.5).epsilon(1e-5));
  CHECK(at_index(zero, 1) == doctest::Approx(-0.5).epsilon(1e-5));
  CHECK(at_index(still, 0) == 1.0);
  CHECK(at_index(still, 1) == 2.0);
}

TEST_CASE("AdamW: one step by hand, with torch.optim.AdamW's decoupled decay") {
  // w *= 1 - lr wd first; with eps = 0 the bias-corrected direction is sign(g); w -= lr sign(g).
  bk::OptimizerConfig c = config("adamw");
  c.max_grad_norm = 0;
  at::Tensor w = param({1, 2}, {0.5f, -0.25f});
  at::Tensor b = param({1, 2}, {0.5f, -0.25f});
  auto opt = bk::make_optimizer({{"dense.weight", w}, {"dense.bias", b}}, c);
  opt->step(0.1);
  CHECK(at_index(w, 0) == doctest::Approx(1 * (1 - 0.001) - 0.1).epsilon(1e-6));
  CHECK(at_index(w, 1) == doctest::Approx(2 * (1 - 0.001) + 0.1).epsilon(1e-6));
  CHECK(at_index(b, 0) == doctest::Approx(0.9).epsilon(1e-6));
  CHECK(at_index(b, 1) == doctest::Approx(2.1).epsilon(1e-6));
}

TEST_CASE("AdamW: gradients are clipped to max_grad_norm before the moments") {
  at::Tensor w = param({1, 1}, {3, 4});
  auto opt = bk::make_optimizer({{"w", w}}, config("adamw"));
  CHECK(opt->step(0.01) == doctest::Approx(5.0).epsilon(1e-6));
  CHECK(at_index(opt->state().at("w.exp_avg"), 0) == doctest::Approx(0.1 * 3 / (5 + 1e-6)).epsilon(1e-6));
}

TEST_CASE("clip_grad_norm scales to the norm as torch.nn.utils.clip_grad_norm_ and returns the old norm") {
  at::Tensor a = vec({3, 0}), b = vec({0, 4});
  at::Tensor norm = bk::clip_grad_norm({a, b, at::Tensor()}, 1.0);
  CHECK(norm.item<double>() == doctest::Approx(5.0).epsilon(1e-6));
  CHECK(at_index(a, 0) == doctest::Approx(3 / (5 + 1e-6)).epsilon(1e-6));
  CHECK(at_index(b, 1) == doctest::Approx(4 / (5 + 1e-6)).epsilon(1e-6));
  at::Tensor small = vec({0.3f, 0.4f});
  bk::clip_grad_norm({small}, 1.0);
  CHECK(at_index(small, 0) == doctest::Approx(0.3).epsilon(1e-6));
}

TEST_CASE("a parameter without a gradient steps as if its gradient were zero") {
  at::Tensor w = vec({1, 2}).set_requires_grad(true);
  auto opt = bk::make_optimizer({{"dense.bias", w}}, config("lamb", 1e-6));
  CHECK(opt->step(0.1) == 0.0);
  CHECK(at_index(w, 0) == 1.0);
}

TEST_CASE("optimizer state exports and imports bit-exactly") {
  for (const std::string kind : {"lamb", "adamw", "stableadamw"}) {
    CAPTURE(kind);
    at::manual_seed(7);
    const std::vector<std::pair<std::string, std::vector<int64_t>>> shapes = {
        {"enc.dense.weight", {4, 3}}, {"enc.dense.bias", {4}}, {"enc.LayerNorm.weight", {4}}, {"head.weight", {2, 4}}};
    std::vector<at::Tensor> initial;
    for (const auto& [name, shape] : shapes) initial.push_back(at::randn(shape));
    std::vector<std::vector<at::Tensor>> grads(6);
    for (auto& step : grads)
      for (const auto& [name, shape] : shapes) step.push_back(at::randn(shape) * 0.3);

    auto make = [&](std::vector<at::Tensor>& params) {
      bk::NamedTensors named;
      for (size_t i = 0; i < shapes.size(); ++i) {
        params.push_back(initial[i].clone().set_requires_grad(true));
        named.emplace_back(shapes[i].first, params.back());
      }
      bk::OptimizerConfig c;
      c.kind = *bk::find_choice(bk::kOptimizerKinds, kind);
      return bk::make_optimizer(named, c);
    };
    auto run = [&](bk::Optimizer& opt, std::vector<at::Tensor>& params, size_t from, size_t to) {
      for (size_t s = from; s < to; ++s) {
        for (size_t i = 0; i < params.size(); ++i) params[i].mutable_grad() = grads[s][i].clone();
        opt.step(0.01 * static_cast<double>(s + 1));
      }
    };

    std::vector<at::Tensor> straight_params, first_params, resumed_params;
    auto straight = make(straight_params);
    run(*straight, straight_params, 0, 6);

    auto first = make(first_params);
    run(*first, first_params, 0, 3);
    std::map<std::string, at::Tensor> saved;
    for (const auto& [name, t] : first->state()) saved[name] = t.clone();
    CHECK(saved.size() == 2 * shapes.size() + 1);
    auto resumed = make(resumed_params);
    for (size_t i = 0; i < resumed_params.size(); ++i) {
      at::NoGradGuard no_grad;
      resumed_params[i].copy_(first_params[i]);
    }
    saved["loss_scale.scale"] = at::ones({1});  // someone else's entry: ignored
    resumed->load_state(saved);
    CHECK(resumed->steps() == 3);
    run(*resumed, resumed_params, 3, 6);
    for (size_t i = 0; i < shapes.size(); ++i) CHECK(at::equal(straight_params[i], resumed_params[i]));
    for (const auto& [name, t] : straight->state()) CHECK(at::equal(t, resumed->state().at(name)));
  }
}

TEST_CASE("load_state rejects incomplete or foreign state and leaves the optimizer unchanged") {
  at::Tensor w = param({1, 2}, {0.1f, 0.1f});
  auto opt = bk::make_optimizer({{"w", w}}, config("lamb"));
  auto state = opt->state();
  std::map<std::string, at::Tensor> missing = {{"w.exp_avg", state.at("w.exp_avg")}, {"step", state.at("step")}};
  CHECK_THROWS_WITH_AS(opt->load_state(missing), "optimizer state: 'w.exp_avg_sq' is missing", bk::Error);
  auto wrong_shape = state;
  wrong_shape["w.exp_avg"] = at::ones({3});
  CHECK_THROWS_AS(opt->load_state(wrong_shape), bk::Error);
  auto foreign = state;
  foreign["other.weight.exp_avg"] = at::ones({2});
  CHECK_THROWS_WITH_AS(opt->load_state(foreign), "optimizer state: 'other.weight.exp_avg' belongs to no parameter of this model",
                       bk::Error);
  CHECK(opt->steps() == 0);
}

TEST_CASE("make_optimizer rejects bad parameter lists and kinds") {
  at::Tensor w = param({1, 2}, {0, 0});
  CHECK_THROWS_AS(bk::make_optimizer({}, config("lamb")), bk::Error);
  CHECK_THROWS_AS(bk::make_optimizer({{"w", w}, {"w", w}}, config("lamb")), bk::Error);
  CHECK_THROWS_AS(bk::make_optimizer({{"h", at::ones({2}, at::kHalf)}}, config("lamb")), bk::Error);
  CHECK(!bk::find_choice(bk::kOptimizerKinds, "sgd"));  // no such kind to make: --optimizer refuses the name
}

TEST_CASE("zero_grad zeroes every gradient") {
  at::Tensor w = param({1, 2}, {3, 4});
  auto opt = bk::make_optimizer({{"w", w}}, config("adamw"));
  opt->zero_grad();
  CHECK(at::equal(w.grad(), at::zeros({2})));
  auto grads = opt->grads();
  REQUIRE(grads.size() == 1);
  CHECK(grads[0].is_same(w.grad()));
}

TEST_CASE("release_grads drops every gradient: the next backward stores its own, not a sum") {
  at::Tensor w = param({1, 2}, {3, 4});
  at::Tensor b = param({1}, {5});
  auto opt = bk::make_optimizer({{"w", w}, {"b", b}}, config("adamw"));
  opt->release_grads();
  CHECK_FALSE(w.grad().defined());
  CHECK_FALSE(b.grad().defined());
  (w * vec({2, 3})).sum().backward();  // b takes no part: it stays without a gradient
  CHECK(at::equal(w.grad(), vec({2, 3})));
  CHECK_FALSE(b.grad().defined());
  opt->step(1e-3);  // a parameter without a gradient steps as with a zero one
  opt->release_grads();
  (w * 7).sum().backward();
  CHECK(at::equal(w.grad(), at::full({2}, 7.0f)));
}

TEST_CASE("AdamW and LAMB: torch's fused kernels take the same steps as the multi-tensor passes") {
  // Two copies of a small model's parameters (decayed and undecayed), stepped 5 times with the same gradients, one
  // copy fused: at step 3 the gradients are large enough to be clipped (pre-normalised), at step 4 one parameter
  // has none (a zero gradient for both).
  const std::vector<std::pair<std::string, std::vector<int64_t>>> shapes = {
      {"dense.weight", {8, 6}}, {"dense.bias", {8}}, {"LayerNorm.weight", {6}}, {"out.weight", {3, 8}}};
  for (const std::string kind : {"adamw", "lamb"}) {
    CAPTURE(kind);
    at::manual_seed(11);
    std::vector<at::Tensor> start;
    for (const auto& [name, shape] : shapes) start.push_back(at::randn(shape));
    auto make = [&](bool fused) {
      bk::NamedTensors params;
      for (size_t i = 0; i < shapes.size(); ++i)
        params.emplace_back(shapes[i].first, start[i].clone().set_requires_grad(true));
      bk::OptimizerConfig c = config(kind, 1e-6);
      c.weight_decay = 0.01;
      c.max_grad_norm = 1.0;
      c.fused = fused;
      return std::make_pair(params, bk::make_optimizer(params, c));
    };
    auto [plain_params, plain] = make(false);
    auto [fused_params, fused] = make(true);
    for (int step = 0; step < 5; ++step) {
      for (size_t i = 0; i < shapes.size(); ++i) {
        const at::Tensor g = at::randn(start[i].sizes()) * (step == 2 ? 10.0 : 0.1);
        plain_params[i].second.mutable_grad() = step == 3 && i == 3 ? at::Tensor() : g.clone();
        fused_params[i].second.mutable_grad() = step == 3 && i == 3 ? at::Tensor() : g.clone();
      }
      std::vector<at::Tensor> given;
      for (const auto& [name, p] : plain_params) given.push_back(p.grad().defined() ? p.grad().clone() : at::Tensor());
      const double norm_plain = plain->step(1e-2), norm_fused = fused->step(1e-2);
      CHECK(norm_plain == doctest::Approx(norm_fused));
      // The multi-tensor passes leave the gradients alone; the fused kernels leave them clipped (pre-normalised).
      for (size_t i = 0; i < shapes.size(); ++i) {
        if (!given[i].defined()) continue;
        CHECK(at::equal(plain_params[i].second.grad(), given[i]));
        const at::Tensor clipped = given[i] * std::min(1.0, 1.0 / norm_plain);
        CHECK((fused_params[i].second.grad() - clipped).abs().max().item<double>() < 1e-6);
      }
    }
    for (size_t i = 0; i < shapes.size(); ++i) {
      CAPTURE(shapes[i].first);
      const double moved = (plain_params[i].second - start[i]).abs().max().item<double>();
      CHECK(moved > 1e-3);  // the parameters did move
      CHECK((plain_params[i].second - fused_params[i].second).abs().max().item<double>() < 1e-6);
    }
    const auto a = plain->state(), b = fused->state();
    for (const auto& [name, t] : a)
      if (t.is_floating_point()) CHECK((t - b.at(name)).abs().max().item<double>() < 1e-6);
  }
}

TEST_CASE("StableAdamW: debiased moments, the per-tensor rate cut by the RMS of g^2 / max(v, eps^2), decay by it") {
  // The formulas of optimizer.h written out tensor by tensor, against the optimizer's flat passes, over steps whose
  // gradients jump (step 3 and 6 are 30x the others: the update clipping acts there and only there), with and
  // without fully decoupled decay.
  const std::vector<std::pair<std::string, std::vector<int64_t>>> shapes = {
      {"dense.weight", {8, 6}}, {"dense.bias", {8}}, {"out.weight", {3, 8}}};
  for (const bool fully_decoupled : {false, true}) {
    CAPTURE(fully_decoupled);
    at::manual_seed(5);
    bk::NamedTensors params;
    std::vector<at::Tensor> w, m, v;
    for (const auto& [name, shape] : shapes) {
      params.emplace_back(name, at::randn(shape).set_requires_grad(true));
      w.push_back(params.back().second.detach().clone());
      m.push_back(at::zeros(shape));
      v.push_back(at::zeros(shape));
    }
    bk::OptimizerConfig c = config("stableadamw", 1e-6);
    c.beta2 = 0.98;
    c.weight_decay = 0.1;
    c.max_grad_norm = 0;
    c.fully_decoupled_decay = fully_decoupled;
    c.max_lr = 0.02;
    auto opt = bk::make_optimizer(params, c);
    int cut = 0;
    for (int t = 1; t <= 8; ++t) {
      const double lr = 0.01 + 0.001 * t;
      // optimi's debiased betas: m and v here are the bias-corrected moments.
      const double b1 = (std::pow(0.9, t) - 0.9) / (std::pow(0.9, t) - 1);
      const double b2 = (std::pow(0.98, t) - 0.98) / (std::pow(0.98, t) - 1);
      for (size_t i = 0; i < shapes.size(); ++i) {
        const at::Tensor g = at::randn(w[i].sizes()) * (t % 3 == 0 ? 3.0 : 0.1);
        params[i].second.mutable_grad() = g.clone();
        m[i] = b1 * m[i] + (1 - b1) * g;
        v[i] = b2 * v[i] + (1 - b2) * g * g;
        const double rms = std::sqrt((g * g / v[i].clamp_min(1e-12)).mean().item<double>());
        cut += rms > 1;
        const double rate = lr / std::max(1.0, rms);
        if (i != 1) w[i] = w[i] * (1 - rate * (fully_decoupled ? 0.1 / 0.02 : 0.1));
        w[i] = w[i] - rate * m[i] / (v[i].sqrt() + 1e-6);
      }
      opt->step(lr);
    }
    CHECK(cut > 0);
    CHECK(cut < 8 * 3);
    for (size_t i = 0; i < shapes.size(); ++i) {
      CAPTURE(shapes[i].first);
      CHECK((params[i].second - w[i]).abs().max().item<double>() < 1e-6);
      // The state is torch's AdamW's: the moments before bias correction.
      const at::Tensor v_state = opt->state().at(shapes[i].first + ".exp_avg_sq") / (1 - std::pow(0.98, 8));
      CHECK(((v_state - v[i]).abs() / v[i]).max().item<double>() < 1e-5);
    }
  }
}
