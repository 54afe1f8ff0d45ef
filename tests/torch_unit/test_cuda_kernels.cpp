// bertkit's own CUDA kernels (kernels/, --fused-kernels) against a float64 reference of the ATen ops they replace,
// and inside a training step against the unfused model. Each case passes as skipped (with a message) without a
// CUDA device or without the kernels in the build; run `torch_unit_tests -tc='cuda kernels*'` on a GPU.
#include "cuda_cases.h"
#include "pretrain_samples.h"

#include "model/fused_cross_entropy.h"
#include "model/fused_gelu.h"
#include "model/fused_layer_norm.h"
#include "model/kernel_switches.h"
#include "train/loop/graphed_step.h"
#include "device/precision.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

namespace {

bool kernels_present() { return bk_test::cuda_case_runs(bk::fused_kernels_built(), "built without CUDA kernels"); }

// Switches the kernels on for a scope (with `experimental`, those not yet measured too).
struct FusedKernels {
  explicit FusedKernels(bool experimental = false) {
    bk::set_fused_kernels(true);
    bk::set_experimental_kernels(experimental);
  }
  ~FusedKernels() {
    bk::set_fused_kernels(false);
    bk::set_experimental_kernels(false);
  }
};

// The largest |a - b| over (tolerance scale + |b|), as float64 on the CPU.
double worst_error(const at::Tensor& a, const at::Tensor& b) {
  const at::Tensor x = a.to(at::kCPU, at::kDouble), y = b.to(at::kCPU, at::kDouble);
  return ((x - y).abs() / (y.abs() + 1)).max().item<double>();
}

// The largest |a - b| over the largest |b|: for sums over many rows (parameter gradients), whose small elements
// carry the rounding of the large ones.
double error_of_largest(const at::Tensor& a, const at::Tensor& b) {
  const at::Tensor x = a.to(at::kCPU, at::kDouble), y = b.to(at::kCPU, at::kDouble);
  return (x - y).abs().max().item<double>() / y.abs().max().item<double>();
}

}  // namespace

// The switches (torch-free, in another library than the kernels) know what the build holds; they once answered
// "not built" in a build with the kernels, so no layer used them.
TEST_CASE("kernel switches: fused_kernels_built() is this build's answer") {
#ifdef BERTKIT_CUDA_KERNELS
  CHECK(bk::fused_kernels_built());
#else
  CHECK_FALSE(bk::fused_kernels_built());
#endif
}

// What the build holds, before any case runs on a GPU (bench/gpu_check.sh runs this first): bertkit's kernels need
// nvcc at build time, CUDA graphs LibTorch's CUDA build. Elsewhere it only says.
TEST_CASE("cuda build: this build has bertkit's CUDA kernels and CUDA graphs") {
  const std::string kernels = bk::fused_kernels_built() ? "built" : "not built (no nvcc at build time)";
  const std::string graphs = bk::cuda_graphs_built() ? "built" : "not built";
  MESSAGE("bertkit's CUDA kernels: " << kernels << "; CUDA graphs: " << graphs);
  if (!bk_test::cuda_required()) return;
  CHECK(bk::fused_kernels_built());
  CHECK(bk::cuda_graphs_built());
}

TEST_CASE("cuda kernels: dropout + residual add + LayerNorm, forward and backward, against float64") {
  if (!kernels_present()) return;
  const at::Device cuda("cuda");
  // Rows that no block count divides; hidden sizes of BERT-base and -large, one whose last warp is partial and the
  // widest supported (1,024 threads a block: the register budget); without a bias, and with one and the output
  // read twice (the experimental kernels: the dense layer's bias added before dropout, two gradients summed).
  for (const bool with_bias : {false, true}) {
    const FusedKernels on(/*experimental=*/with_bias);
    for (const at::ScalarType type : {at::kBFloat16, at::kHalf}) {
      for (const int64_t cols : {768, 1024, 136, 8192}) {
        for (const double p : {0.0, 0.1}) {
          CAPTURE(with_bias);
          CAPTURE(type);
          CAPTURE(cols);
          CAPTURE(p);
          const int64_t rows = 1003;
          at::manual_seed(static_cast<uint64_t>(cols));
          const auto opts = at::TensorOptions().dtype(type).device(cuda);
          const at::Tensor input = at::randn({rows, cols}, opts).requires_grad_(true);
          const at::Tensor residual = (at::randn({rows, cols}, opts) * 2).requires_grad_(true);
          const at::Tensor gamma = (at::rand({cols}, opts) + 0.5).requires_grad_(true);
          const at::Tensor beta = (at::randn({cols}, opts) * 0.1).requires_grad_(true);
          const at::Tensor bias = with_bias ? (at::randn({cols}, opts) * 0.5).requires_grad_(true) : at::Tensor();
          at::Tensor out;
          const at::Tensor dy = at::randn({rows, cols}, opts);
          at::Tensor dy2 = at::zeros({rows, cols}, opts);  // a second use's gradient (with the bias: see below)
          if (!with_bias) {
            out = bk::dropout_add_layer_norm(input, residual, gamma, beta, p, 1e-12, /*training=*/true);
            REQUIRE(bk_test::graph_nodes(out, "DropoutAddLayerNorm") == 1);  // the kernel, not the ATen ops
            out.backward(dy);
          } else {
            // The experimental path as the encoder takes it: a dense layer (here the identity, whose bf16 product
            // is exact) with its bias in the kernel, and the output read twice, each use with its own gradient.
            const at::Tensor identity = at::eye(cols, opts);
            const bk::NormOutput twice = bk::dense_dropout_add_layer_norm(input, identity, bias, residual, gamma,
                                                                          beta, p, 1e-12, /*training=*/true);
            REQUIRE(bk_test::graph_nodes(twice.hidden, "DropoutAddLayerNorm") == 1);
            CHECK(twice.residual.data_ptr() == twice.hidden.data_ptr());
            CHECK_FALSE(twice.residual.is_same(twice.hidden));  // two autograd outputs
            out = twice.hidden;
            dy2 = at::randn({rows, cols}, opts);
            torch::autograd::backward({twice.hidden, twice.residual}, {dy, dy2});
          }
          // The kept elements, read from the gradients: where the input was dropped its gradient is exactly zero
          // (and where the residual's is zero too, a gradient rounded to zero, it counts as kept).
          const at::Tensor kept = input.grad().ne(0).logical_or(residual.grad().eq(0)).to(at::kCPU, at::kDouble);
          const double dropped = 1 - kept.mean().item<double>();
          MESSAGE("dropped share ", dropped);
          if (p == 0) CHECK(dropped < 1e-3);
          else CHECK(std::abs(dropped - p) < 0.005);  // 1003 x 768 elements: a standard error of 0.0003

          // The reference: the same arithmetic in float64 on the CPU, the sum rounded to the storage type as the
          // kernel stores it (gradients pass that rounding straight through).
          auto leaf = [](const at::Tensor& t) { return t.detach().to(at::kCPU, at::kDouble).requires_grad_(true); };
          const at::Tensor in64 = leaf(input), res64 = leaf(residual), g64 = leaf(gamma), b64 = leaf(beta);
          const at::Tensor bias64 = with_bias ? leaf(bias) : at::zeros({cols}, at::kDouble);
          const at::Tensor sum = res64 + (in64 + bias64) * kept / (1 - p);
          const at::Tensor rounded = sum + (sum.to(type).to(at::kDouble) - sum).detach();
          const at::Tensor ref = at::layer_norm(rounded, {cols}, g64, b64, 1e-12);
          ref.backward(dy.to(at::kCPU, at::kDouble) + dy2.to(at::kCPU, at::kDouble));
          // Half-precision outputs: 2^-8 (bf16) or 2^-11 (fp16) relative, a few roundings deep.
          const double tolerance = type == at::kBFloat16 ? 2e-2 : 4e-3;
          const double out_error = worst_error(out, ref);
          const double input_error = worst_error(input.grad(), in64.grad());
          const double residual_error = worst_error(residual.grad(), res64.grad());
          // gamma and beta gradients sum 1003 rows: compared relative to their largest element.
          const double gamma_error = error_of_largest(gamma.grad(), g64.grad());
          const double beta_error = error_of_largest(beta.grad(), b64.grad());
          MESSAGE("worst errors: out ", out_error, ", d input ", input_error, ", d residual ", residual_error,
                  ", d gamma ", gamma_error, ", d beta ", beta_error);
          CHECK(out_error < tolerance);
          CHECK(input_error < tolerance);
          CHECK(residual_error < tolerance);
          CHECK(gamma_error < tolerance);
          CHECK(beta_error < tolerance);
          if (with_bias) {
            const double bias_error = error_of_largest(bias.grad(), bias64.grad());
            MESSAGE("worst error: d bias ", bias_error);
            CHECK(bias_error < tolerance);
          }
        }
      }
    }
  }
}

TEST_CASE("cuda kernels: bias + GELU, forward and backward, against float64") {
  if (!kernels_present()) return;
  const FusedKernels on(/*experimental=*/true);
  const at::Device cuda("cuda");
  // The intermediate widths of BERT-base and -large, one whose last warp is partial and the widest supported; rows
  // no block count divides.
  for (const at::ScalarType type : {at::kBFloat16, at::kHalf}) {
    for (const int64_t cols : {3072, 4096, 136, 8192}) {
      CAPTURE(type);
      CAPTURE(cols);
      const int64_t rows = 1003;
      at::manual_seed(static_cast<uint64_t>(cols));
      const auto opts = at::TensorOptions().dtype(type).device(cuda);
      const at::Tensor input = (at::randn({rows, cols}, opts) * 2).requires_grad_(true);
      const at::Tensor bias = (at::randn({cols}, opts) * 0.5).requires_grad_(true);
      const at::Tensor out = bk::bias_gelu(input, bias);
      REQUIRE(bk_test::graph_nodes(out, "BiasGelu") == 1);  // the kernel, not the ATen ops
      const at::Tensor dy = at::randn({rows, cols}, opts);
      out.backward(dy);

      auto leaf = [](const at::Tensor& t) { return t.detach().to(at::kCPU, at::kDouble).requires_grad_(true); };
      const at::Tensor in64 = leaf(input), bias64 = leaf(bias);
      const at::Tensor ref = at::gelu(in64 + bias64);  // the erf form, in float64
      ref.backward(dy.to(at::kCPU, at::kDouble));
      const double tolerance = type == at::kBFloat16 ? 2e-2 : 4e-3;
      const double out_error = worst_error(out, ref);
      const double input_error = worst_error(input.grad(), in64.grad());
      const double bias_error = error_of_largest(bias.grad(), bias64.grad());
      MESSAGE("worst errors: out ", out_error, ", d input ", input_error, ", d bias ", bias_error);
      CHECK(out_error < tolerance);
      CHECK(input_error < tolerance);
      CHECK(bias_error < tolerance);
    }
  }
}

TEST_CASE("cuda kernels: masked-LM cross entropy on padded logits, forward and backward, against float64") {
  if (!kernels_present()) return;
  const FusedKernels on(/*experimental=*/true);
  const at::Device cuda("cuda");
  // BERT's vocabulary padded to 30,528; a small one whose last vector is partly padding; one without padding.
  for (const at::ScalarType type : {at::kBFloat16, at::kHalf}) {
    for (const auto& [vocab, padded] : {std::pair<int64_t, int64_t>{30522, 30528}, {99, 104}, {64, 64}}) {
      CAPTURE(type);
      CAPTURE(vocab);
      const int64_t rows = 1003;
      at::manual_seed(static_cast<uint64_t>(vocab));
      const auto opts = at::TensorOptions().dtype(type).device(cuda);
      // Logits of a trained model's spread, large values in the padding (which must count for nothing), a row of
      // ties (the first one is the arg-max), rows without a label, and -inf logits (which count for nothing:
      // exp(-inf) = 0), at the start of a row and in every other column of another.
      at::Tensor init = at::randn({rows, padded}, opts.dtype(at::kFloat)) * 3;
      init.narrow(1, vocab, padded - vocab).fill_(50);
      init[5].fill_(1);
      init[6][0] = -INFINITY;
      init[7].slice(0, 0, vocab, 2).fill_(-INFINITY);
      const at::Tensor logits = init.to(type).requires_grad_(true);
      at::Tensor labels = at::randint(vocab, {rows}, opts.dtype(at::kLong));
      labels.masked_fill_(at::rand({rows}, opts.dtype(at::kFloat)).lt(0.2), -1);
      labels[5] = 3;
      labels[6] = 1;  // labels at finite logits (a label at -inf has an infinite loss)
      labels[7] = 1;
      const auto scores = bk::fused_masked_lm_scores(logits, vocab, labels);
      REQUIRE(scores.has_value());
      const at::Tensor count = labels.ge(0).sum();
      const at::Tensor loss = scores->row_losses.sum() / count;
      REQUIRE(bk_test::graph_nodes(loss, "MaskedLmCrossEntropy") == 1);
      loss.backward();

      const at::Tensor labels_cpu = labels.cpu();
      const at::Tensor ref_logits =
          logits.detach().narrow(1, 0, vocab).to(at::kCPU, at::kDouble).requires_grad_(true);
      const at::Tensor ref = at::cross_entropy_loss(ref_logits, labels_cpu, {}, at::Reduction::Mean, -1);
      ref.backward();
      const double loss_error = std::abs(loss.item<double>() - ref.item<double>()) / ref.item<double>();
      // The gradient is (softmax - one-hot) / count, rounded once to the 16-bit type: relative to its largest.
      const at::Tensor grad = logits.grad().to(at::kCPU, at::kDouble);
      const double grad_error = error_of_largest(grad.narrow(1, 0, vocab), ref_logits.grad());
      MESSAGE("loss relative error ", loss_error, ", worst gradient error (of the largest) ", grad_error);
      CHECK(loss_error < 1e-5);
      CHECK(grad_error < (type == at::kBFloat16 ? 1e-2 : 2e-3));
      CHECK(grad.narrow(1, vocab, padded - vocab).abs().sum().item<double>() == 0);  // padding: exactly zero
      CHECK(grad.index({labels_cpu.lt(0)}).abs().sum().item<double>() == 0);         // rows without a label
      // The arg-max: the first largest of the rounded logits, as at::argmax gives it on the CPU.
      const at::Tensor expected = ref_logits.detach().argmax(-1);
      CHECK(at::equal(scores->predicted.cpu(), expected));
      CHECK(scores->predicted[5].item<int64_t>() == 0);
      // A NaN logit makes its row's loss NaN, as ATen's would be (and the step's loss with it).
      at::Tensor poisoned = logits.detach().clone();
      poisoned[9][vocab - 1] = NAN;
      const auto nan_scores =
          bk::fused_masked_lm_scores(poisoned.requires_grad_(true), vocab, at::full_like(labels, 2));
      REQUIRE(nan_scores.has_value());
      CHECK(std::isnan(nan_scores->row_losses[9].item<double>()));
      CHECK(std::isfinite(nan_scores->row_losses[8].item<double>()));
    }
  }
}

TEST_CASE("cuda kernels: dropout draws differ from step to step and repeat for a seed") {
  if (!kernels_present()) return;
  const FusedKernels on;
  const auto opts = at::TensorOptions().dtype(at::kBFloat16).device(at::Device("cuda"));
  const at::Tensor x = at::ones({64, 256}, opts).requires_grad_(true), zero = at::zeros({64, 256}, opts);
  const at::Tensor gamma = at::ones({256}, opts), beta = at::zeros({256}, opts);
  auto draw = [&] {
    const at::Tensor out = bk::dropout_add_layer_norm(x, zero, gamma, beta, 0.5, 1e-12, true);
    REQUIRE(bk_test::graph_nodes(out, "DropoutAddLayerNorm") == 1);  // the kernel's draws, not at::dropout's
    return out.detach().cpu();
  };
  at::manual_seed(7);
  const at::Tensor first = draw(), second = draw();
  // Half of each row dropped (the rest 2): LayerNorm of a row of 0s and 2s is -1 where dropped.
  const double dropped = first.to(at::kFloat).lt(0).to(at::kDouble).mean().item<double>();
  MESSAGE("dropped share at p = 0.5: ", dropped);
  CHECK(std::abs(dropped - 0.5) < 0.02);
  at::manual_seed(7);
  CHECK(at::equal(draw(), first));
  CHECK_FALSE(at::equal(second, first));
}

TEST_CASE("cuda kernels: a bf16 training step with the kernels, experimental ones too, matches the unfused one") {
  if (!kernels_present()) return;
  const at::Device cuda("cuda");
  const auto samples = bk_test::make_samples(12, 7);
  at::manual_seed(3);
  bk::BertForPreTraining model(bk_test::small_config());
  model.eval();  // no dropout: the two must agree to bf16 rounding
  {
    // BERT's initialisation zeroes the biases and sets LayerNorm to 1 and 0: a bias dropped or added twice would
    // not show. Random ones do.
    const at::NoGradGuard no_grad;
    for (const auto& p : model.named_parameter_list()) {
      if (p.name.find("bias") != std::string::npos) p.tensor.normal_(0, 0.1);
      if (p.name.find("LayerNorm.weight") != std::string::npos) p.tensor.add_(at::randn_like(p.tensor) * 0.1);
    }
  }
  model.to(cuda);
  const auto batch = bk::collate_pretrain_batch(samples, 8, false, /*unpadded=*/true).to(cuda);
  auto step = [&] {
    for (const auto& p : model.named_parameter_list()) p.tensor.mutable_grad() = at::Tensor();
    const bk::AutocastScope autocast(bk::Precision::bf16, cuda);
    return bk_test::run(model, batch);
  };
  const bk_test::LossAndGrads unfused = step();
  for (const bool experimental : {false, true}) {
    CAPTURE(experimental);
    bk_test::LossAndGrads fused;
    {
      const FusedKernels on(experimental);
      fused = step();
      // The kernels in the step's graph: two LayerNorms per layer, with the experimental ones each taking its
      // dense layer's bias (5 inputs) and giving two outputs, bias + GELU once per layer, and the MLM loss.
      const bk::AutocastScope autocast(bk::Precision::bf16, cuda);
      const at::Tensor loss = bk::pretraining_loss(model, batch).loss;
      const int64_t layers = bk_test::small_config().num_hidden_layers;
      CHECK(bk_test::graph_nodes(loss, "DropoutAddLayerNorm") == 2 * layers);
      const size_t edges = experimental ? 5 : 4, outputs = experimental ? 2 : 1;
      CHECK(bk_test::graph_nodes(loss, "DropoutAddLayerNorm", [&](const torch::autograd::Node& node) {
              return node.next_edges().size() == edges && node.num_inputs() == outputs;
            }) == 2 * layers);
      CHECK(bk_test::graph_nodes(loss, "BiasGelu") == (experimental ? layers : 0));
      CHECK(bk_test::graph_nodes(loss, "MaskedLmCrossEntropy") == (experimental ? 1 : 0));
    }
    const double loss_error = std::abs(fused.loss - unfused.loss) / std::abs(unfused.loss);
    const double grad_error = bk_test::worst_relative_gradient_error(fused, unfused, 1e-2);
    MESSAGE("fused", experimental ? " (experimental too)" : "", " against unfused (bf16): loss relative error ",
            loss_error, ", worst gradient relative error ", grad_error);
    CHECK(loss_error < 1e-2);
    CHECK(grad_error < 5e-2);
  }
}
