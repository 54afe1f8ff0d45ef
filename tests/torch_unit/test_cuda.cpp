// The training path on a CUDA device, against the same computation on the CPU: unpadded attention (the exact path
// in fp32, ATen's flash varlen kernel under bf16 autocast), packed rows, AdamW and LAMB (fused and not), the loss
// scaler, grouped weight casts, and the share of attention probabilities the kernels drop. Each case passes as
// skipped (with a message) where no CUDA device is present, as in CI; run `torch_unit_tests -tc='cuda*'` on a GPU.
#include "cuda_cases.h"
#include "pretrain_samples.h"

#include "model/weight_cast.h"
#include "device/device.h"
#include "device/precision.h"
#include "train/optim/grad_scaler.h"
#include "train/optim/make_optimizer.h"

#include <ATen/ATen.h>
#include <ATen/Context.h>

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace {

using bk_test::check_equal;
using bk_test::LossAndGrads;
using bk_test::make_samples;
using bk_test::run;
using bk_test::small_config;
using bk_test::worst_relative_gradient_error;

bool cuda_present() { return bk_test::cuda_case_runs(); }

const at::Device kCuda("cuda");

// Module::to moves the parameters but not their gradients: drop the CPU run's before moving.
void move_to_cuda(bk::BertForPreTraining& model) {
  for (const auto& p : model.named_parameter_list()) p.tensor.mutable_grad() = at::Tensor();
  model.to(kCuda);
}

// One forward and backward under bf16 autocast (the trainer's --precision bf16).
LossAndGrads run_bf16(bk::BertForPreTraining& model, const bk::PretrainBatch& batch) {
  const bk::AutocastScope autocast(bk::Precision::bf16, kCuda);
  return run(model, batch);
}

// bf16 against an fp32 reference: the loss to 2%, each gradient tensor to 5% of its norm, or of 1% of the largest
// gradient norm where its own is smaller (bf16 keeps 8 bits of mantissa; the attention kernels accumulate in fp32).
void check_close_bf16(const LossAndGrads& got, const LossAndGrads& reference, const std::string& what) {
  const double loss_error = std::abs(got.loss - reference.loss) / std::abs(reference.loss);
  const double grad_error = worst_relative_gradient_error(got, reference, 1e-2);
  MESSAGE(what, ": loss relative error ", loss_error, ", worst gradient relative error ", grad_error);
  CHECK(loss_error < 2e-2);
  CHECK(grad_error < 5e-2);
  CHECK(got.nsp_total == reference.nsp_total);
}

// The share of zeros in attention outputs built so that each output element is one attention probability:
// q = k = 0 gives every key the weight 1/L, and v is the identity, so out[i][j] = keep(i, j) / (L (1 - p)).
struct DropoutReading {
  double dropped = 0;     // share of the probabilities dropped
  double kept_value = 0;  // the value of a kept element times L (1 - p): 1 when the survivors are rescaled exactly
};

DropoutReading read_dropout(const at::Tensor& out, int64_t length, double p) {
  const at::Tensor flat = out.to(at::kFloat).flatten();
  const at::Tensor kept = flat.ne(0);
  DropoutReading r;
  r.dropped = 1.0 - kept.to(at::kDouble).mean().item<double>();
  r.kept_value = flat.masked_select(kept).mean().item<double>() * static_cast<double>(length) * (1 - p);
  return r;
}

}  // namespace

TEST_CASE("cuda: unpadded attention equals the padded model's (fp32 exact path, bf16 flash varlen kernel)") {
  if (!cuda_present()) return;
  const auto samples = make_samples(12, 7);
  at::manual_seed(3);
  bk::BertForPreTraining model(small_config());
  model.eval();  // no dropout: the paths must agree
  const auto padded = bk::collate_pretrain_batch(samples, 8, false, /*unpadded=*/false);
  const auto unpadded = bk::collate_pretrain_batch(samples, 8, false, /*unpadded=*/true);
  const LossAndGrads cpu_reference = run(model, padded);
  move_to_cuda(model);
  const LossAndGrads cuda_padded = run(model, padded.to(kCuda));
  const LossAndGrads cuda_unpadded = run(model, unpadded.to(kCuda));
  check_equal(cuda_unpadded, cuda_padded, model);
  CHECK(cuda_padded.loss == doctest::Approx(cpu_reference.loss).epsilon(1e-5));
  const double fp32_error = worst_relative_gradient_error(cuda_padded, cpu_reference, 1e-3);
  MESSAGE("fp32 padded on CUDA against the CPU: worst gradient relative error ", fp32_error);
  CHECK(fp32_error < 1e-4);
  check_close_bf16(run_bf16(model, unpadded.to(kCuda)), cpu_reference, "bf16 unpadded (flash varlen)");
  check_close_bf16(run_bf16(model, padded.to(kCuda)), cpu_reference, "bf16 padded (SDPA)");
}

TEST_CASE("cuda: packed rows give the loss and gradients of their samples unpacked") {
  if (!cuda_present()) return;
  const auto samples = make_samples(9, 11);
  at::manual_seed(5);
  bk::BertForPreTraining model(small_config());
  model.eval();
  const auto packed = bk::collate_pretrain_batch(bk_test::packed_rows(samples), 24, false, /*unpadded=*/true);
  const auto reference = bk::collate_pretrain_batch(samples, 8, false, /*unpadded=*/false);
  const LossAndGrads cpu_reference = run(model, reference);
  move_to_cuda(model);
  check_equal(run(model, packed.to(kCuda)), run(model, reference.to(kCuda)), model);
  check_close_bf16(run_bf16(model, packed.to(kCuda)), cpu_reference, "bf16 packed (flash varlen)");
}

TEST_CASE("cuda: AdamW and LAMB, by torch's fused kernels and in multi-tensor passes, take the CPU's steps") {
  if (!cuda_present()) return;
  at::manual_seed(11);
  const std::vector<std::pair<std::string, std::vector<int64_t>>> shapes = {
      {"dense.weight", {64, 48}}, {"dense.bias", {64}}, {"LayerNorm.weight", {48}}, {"out.weight", {30, 64}}};
  std::vector<at::Tensor> start;
  for (const auto& [name, shape] : shapes) start.push_back(at::randn(shape));
  for (const std::string kind : {"adamw", "lamb"})
    for (const bool fused : {true, false}) {
      CAPTURE(kind);
      CAPTURE(fused);
      auto make = [&](const at::Device& device, bool fused_kernels) {
        bk::NamedTensors params;
        for (size_t i = 0; i < shapes.size(); ++i)
          params.emplace_back(shapes[i].first, start[i].to(device).clone().set_requires_grad(true));
        bk::OptimizerConfig c;
        c.kind = *bk::find_choice(bk::kOptimizerKinds, kind);
        c.fused = fused_kernels;
        return std::make_pair(params, bk::make_optimizer(params, c));
      };
      auto [cpu_params, cpu] = make(at::kCPU, false);
      auto [cuda_params, cuda] = make(kCuda, fused);
      for (int step = 0; step < 5; ++step) {
        for (size_t i = 0; i < shapes.size(); ++i) {
          const at::Tensor g = at::randn(start[i].sizes()) * (step == 2 ? 10.0 : 0.1);  // step 2 is clipped
          cpu_params[i].second.mutable_grad() = g.clone();
          cuda_params[i].second.mutable_grad() = g.to(kCuda);
        }
        CHECK(cuda->step(1e-2) == doctest::Approx(cpu->step(1e-2)).epsilon(1e-5));
      }
      for (size_t i = 0; i < shapes.size(); ++i) {
        CAPTURE(shapes[i].first);
        CHECK((cpu_params[i].second - start[i]).abs().max().item<double>() > 1e-3);  // they did move
        CHECK((cuda_params[i].second.cpu() - cpu_params[i].second).abs().max().item<double>() < 1e-5);
      }
    }
}

TEST_CASE("cuda: the loss scaler unscales finite gradients and skips an overflowing step") {
  if (!cuda_present()) return;
  bk::LossScalerConfig c;
  c.init_scale = 8;
  c.growth_interval = 3;
  bk::LossScaler scaler(c, kCuda);
  at::Tensor g = at::tensor(std::vector<float>{16, -32}).to(kCuda);
  CHECK(scaler.unscale({g}));
  CHECK(at::equal(g.cpu(), at::tensor(std::vector<float>{2, -4})));
  scaler.update();
  at::Tensor bad = at::tensor(std::vector<float>{16, std::numeric_limits<float>::infinity()}).to(kCuda);
  CHECK_FALSE(scaler.unscale({bad}));
  scaler.update();
  CHECK(scaler.scale() == 4.0);
  CHECK(scaler.skipped_steps() == 1);
}

TEST_CASE("cuda: attention dropout drops the configured share and rescales the rest") {
  if (!cuda_present()) return;
  bk::set_up_cuda_runtime(bk::choose_device("cuda", bk::DistEnv{}));  // the trainer's kernel choices (cuDNN's SDPA off)
  // Eight sequences of 128 tokens, 8 heads of 128: 1,048,576 probabilities, so the share's standard error at
  // p = 0.1 is 0.0003.
  const int64_t sequences = 8, length = 128, heads = 8, d = 128, n = sequences * length;
  const double p = 0.1;
  const auto opts = at::TensorOptions().dtype(at::kBFloat16).device(kCuda);
  const at::Tensor zeros = at::zeros({n, heads, d}, opts);
  const at::Tensor eye = at::eye(length, opts).repeat({sequences, 1}).view({n, 1, d}).expand({n, heads, d});
  const at::Tensor cu_seqlens = at::arange(0, n + 1, length, at::TensorOptions().dtype(at::kInt).device(kCuda));
  at::manual_seed(1);
  // The kernel the encoder's unpadded path calls (encoder.cpp stream_attention).
  const auto flash = at::_flash_attention_forward(zeros, zeros, eye.contiguous(), cu_seqlens, cu_seqlens, length,
                                                  length, p, false, false);
  const DropoutReading varlen = read_dropout(std::get<0>(flash), length, p);
  // The flash kernel keeps an element when a random byte is at most floor(255 (1 - p)): 230 of 256 bytes at 0.1.
  const double flash_drop = 1.0 - (std::floor(255.0 * (1 - p)) + 1) / 256.0;
  MESSAGE("flash varlen, p = 0.1: dropped ", varlen.dropped, " (its byte threshold: ", flash_drop,
          "), kept value x L(1-p) = ", varlen.kept_value);
  CHECK(std::abs(varlen.dropped - flash_drop) < 0.0015);  // 5 standard errors
  CHECK(varlen.kept_value == doctest::Approx(1.0).epsilon(1e-2));
  // The padded path: SDPA with a boolean key mask ([B, 1, 1, T], all true here), as the encoder's forward calls it.
  const at::Tensor q = zeros.view({sequences, length, heads, d}).transpose(1, 2);
  const at::Tensor v = eye.contiguous().view({sequences, length, heads, d}).transpose(1, 2);
  const at::Tensor mask = at::ones({sequences, 1, 1, length}, at::TensorOptions().dtype(at::kBool).device(kCuda));
  const DropoutReading sdpa = read_dropout(at::scaled_dot_product_attention(q, q, v, mask, p), length, p);
  MESSAGE("SDPA with a key mask, p = 0.1: dropped ", sdpa.dropped, ", kept value x L(1-p) = ", sdpa.kept_value);
  CHECK(std::abs(sdpa.dropped - p) < 0.0015);
  CHECK(sdpa.kept_value == doctest::Approx(1.0).epsilon(1e-2));
  // What cuDNN's SDPA would have done (the trainer turns it off): reported, not required.
  at::globalContext().setSDPUseCuDNN(true);
  const DropoutReading cudnn = read_dropout(at::scaled_dot_product_attention(q, q, v, mask, p), length, p);
  at::globalContext().setSDPUseCuDNN(false);
  MESSAGE("SDPA with cuDNN allowed, p = 0.1: dropped ", cudnn.dropped, ", kept value x L(1-p) = ", cudnn.kept_value);
}


// Sets grouped weight casts for a scope; the default (on) again after it, whatever happens in it.
struct GroupedCasts {
  explicit GroupedCasts(bool on) { bk::set_grouped_weight_casts(on); }
  ~GroupedCasts() { bk::set_grouped_weight_casts(true); }
};

TEST_CASE("cuda: grouped weight casts give BERT-large-sized weights and gradients exactly as autocast's casts") {
  if (!cuda_present()) return;
  at::manual_seed(6);
  const auto opts = at::TensorOptions().device(kCuda);
  // Tensors of several multi-tensor chunks; one gradient arrives transposed (not dense in the weight's layout:
  // _foreach_copy_ takes its per-tensor path), one weight gets none.
  const at::Tensor w1 = at::randn({1024, 1024}, opts).requires_grad_(true);
  const at::Tensor w2 = at::randn({4096, 1024}, opts).requires_grad_(true);
  const at::Tensor b = at::randn({4096}, opts).requires_grad_(true);
  const at::Tensor unused = at::randn({1024}, opts).requires_grad_(true);
  const at::Tensor g1 = at::randn({1024, 1024}, opts.dtype(at::kBFloat16));
  const at::Tensor g2 = at::randn({1024, 4096}, opts.dtype(at::kBFloat16));
  const at::Tensor gb = at::randn({4096}, opts.dtype(at::kBFloat16));
  auto loss = [&](const at::Tensor& c1, const at::Tensor& c2, const at::Tensor& cb) {
    return (c1 * g1).sum() + (c2.t() * g2).sum() + (cb * gb).sum();
  };
  std::vector<at::Tensor> grouped_grads;
  {
    const bk::AutocastScope autocast(bk::Precision::bf16, kCuda);
    const auto cast = bk::autocast_weights({w1, w2, b, unused});
    CHECK(at::equal(cast[0], w1.detach().to(at::kBFloat16)));
    CHECK(at::equal(cast[1], w2.detach().to(at::kBFloat16)));
    CHECK(at::equal(cast[2], b.detach().to(at::kBFloat16)));
    loss(cast[0], cast[1], cast[2]).backward();
  }
  for (const at::Tensor& w : {w1, w2, b}) {
    grouped_grads.push_back(w.grad().clone());
    w.mutable_grad().reset();
  }
  CHECK_FALSE(unused.grad().defined());
  // The reference: each weight cast on its own, as autocast casts it.
  loss(w1.to(at::kBFloat16), w2.to(at::kBFloat16), b.to(at::kBFloat16)).backward();
  CHECK(at::equal(grouped_grads[0], w1.grad()));
  CHECK(at::equal(grouped_grads[1], w2.grad()));
  CHECK(at::equal(grouped_grads[2], b.grad()));
}

TEST_CASE("cuda: BERT-large's QKV weights cast into their concatenation give cat's values and gradients exactly") {
  if (!cuda_present()) return;
  at::manual_seed(7);
  const auto opts = at::TensorOptions().device(kCuda);
  std::vector<at::Tensor> weights;
  for (const int64_t rows : {1024, 1024, 1024}) weights.push_back(at::randn({rows, 1024}, opts).requires_grad_(true));
  for (int k = 0; k < 3; ++k) weights.push_back(at::randn({1024}, opts).requires_grad_(true));
  const at::Tensor x = at::randn({512, 1024}, opts.dtype(at::kBFloat16));
  const at::Tensor dy = at::randn({512, 3072}, opts.dtype(at::kBFloat16));
  auto step = [&](bool grouped) {
    const GroupedCasts casts(grouped);
    const bk::AutocastScope autocast(bk::Precision::bf16, kCuda);
    const auto fused = bk::autocast_concatenated(weights, {3, 3});
    CHECK(bk_test::graph_nodes(fused[0], "CastWeights") == (grouped ? 1 : 0));
    at::linear(x, fused[0], fused[1]).backward(dy);
    std::vector<at::Tensor> grads;
    for (const at::Tensor& w : weights) {
      grads.push_back(w.grad().clone());
      w.mutable_grad().reset();
    }
    return std::make_pair(at::cat({fused[0].detach(), fused[1].detach().unsqueeze(1)}, 1), grads);
  };
  const auto [fused, fused_grads] = step(true);
  const auto [reference, reference_grads] = step(false);
  CHECK(at::equal(fused, reference));
  for (size_t i = 0; i < weights.size(); ++i) {
    CAPTURE(i);
    CHECK(at::equal(fused_grads[i], reference_grads[i]));
  }
}

TEST_CASE("cuda: grouped weight casts (three launches per layer) give autocast's per-weight casts' step") {
  if (!cuda_present()) return;
  const auto samples = make_samples(12, 9);
  at::manual_seed(4);
  bk::BertForPreTraining model(small_config());
  model.eval();  // no dropout
  move_to_cuda(model);
  const auto batch = bk::collate_pretrain_batch(samples, 8, false, /*unpadded=*/true).to(kCuda);
  auto step = [&](bool grouped) {
    const GroupedCasts casts(grouped);
    for (const auto& p : model.named_parameter_list()) p.tensor.mutable_grad() = at::Tensor();
    const bk::AutocastScope autocast(bk::Precision::bf16, kCuda);
    CHECK(bk_test::graph_nodes(bk::pretraining_loss(model, batch).loss, "CastWeights") ==
          (grouped ? 3 * small_config().num_hidden_layers : 0));
    return run(model, batch);
  };
  const LossAndGrads grouped = step(true), separate = step(false);
  // The same casts and the same ops: what may differ is the order of atomic additions in some backward kernels.
  const double loss_error = std::abs(grouped.loss - separate.loss) / std::abs(separate.loss);
  const double grad_error = worst_relative_gradient_error(grouped, separate, 1e-2);
  MESSAGE("grouped against per-weight casts: loss relative error ", loss_error, ", worst gradient relative error ",
          grad_error);
  CHECK(loss_error < 1e-6);
  CHECK(grad_error < 1e-3);
}
