#include "model/fused_layer_norm.h"

#include "model/cuda_kernels.h"
#include "model/kernel_switches.h"
#include "util/error.h"

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/csrc/autograd/custom_function.h>

#ifdef BERTKIT_CUDA_KERNELS
#include "kernels/dropout_add_layer_norm.h"

#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAGeneratorImpl.h>
#include <c10/cuda/CUDAGuard.h>

#include <mutex>
#endif

#include <cstdint>
#include <optional>

namespace bk {

namespace {

#ifdef BERTKIT_CUDA_KERNELS

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Fills the forward launch's Philox seed and offset: each thread draws 8 numbers, so the generator moves on by 8,
// as ATen's own kernels reserve theirs.
void reserve_dropout_draws(kernels::DropoutAddLayerNormForward& a, c10::DeviceIndex device) {
  auto* gen = at::get_generator_or_default<at::CUDAGeneratorImpl>(std::nullopt,
                                                                  at::cuda::detail::getDefaultCUDAGenerator(device));
  at::PhiloxCudaState state;
  {
    const std::lock_guard<std::mutex> lock(gen->mutex_);
    state = gen->philox_cuda_state(8);
  }
  if (state.captured_) {  // in a CUDA graph: the seed and offset of each replay, read on the device
    a.seed_at = state.seed_.ptr;
    a.offset_at = state.offset_.ptr;
    a.offset_in_graph = state.offset_intragraph_;
  } else {
    a.seed = state.seed_.val;
    a.offset = state.offset_.val;
  }
}

// LayerNorm(dropout(input + bias) + residual), the bias optional: std::nullopt, not an undefined tensor, which
// Function::apply would take for a variable and fail on. With `twice`, a second output that aliases the first
// (NormOutput): backward then receives the gradients of the two uses apart and adds them itself.
class DropoutAddLayerNorm : public torch::autograd::Function<DropoutAddLayerNorm> {
 public:
  static variable_list forward(AutogradContext* ctx, const at::Tensor& input, const at::Tensor& residual,
                               const at::Tensor& gamma, const at::Tensor& beta, const std::optional<at::Tensor>& bias,
                               double p, double eps, bool twice) {
    const c10::cuda::CUDAGuard on_device(input.device());  // the input's stream and generator, not the current's
    const int64_t cols = input.size(-1), rows = input.numel() / std::max<int64_t>(cols, 1);
    const at::Tensor in = input.contiguous(), res = residual.contiguous();
    const at::Tensor g = gamma.contiguous(), b = beta.contiguous();
    const at::Tensor added = bias.has_value() ? bias->contiguous() : at::Tensor();
    at::Tensor out = at::empty_like(in), sum = at::empty_like(in);
    at::Tensor keep = p > 0 ? at::empty(in.sizes(), in.options().dtype(at::kByte)) : at::Tensor();
    at::Tensor mean = at::empty({rows}, in.options().dtype(at::kFloat)), rstd = at::empty_like(mean);
    kernels::DropoutAddLayerNormForward a;
    a.input = in.data_ptr();
    a.bias = added.defined() ? added.data_ptr() : nullptr;
    a.residual = res.data_ptr();
    a.gamma = g.data_ptr();
    a.beta = b.data_ptr();
    a.out = out.data_ptr();
    a.sum = sum.data_ptr();
    a.keep = p > 0 ? keep.data_ptr<uint8_t>() : nullptr;
    a.mean = mean.data_ptr<float>();
    a.rstd = rstd.data_ptr<float>();
    a.rows = rows;
    a.cols = cols;
    a.p = static_cast<float>(p);
    a.eps = static_cast<float>(eps);
    if (p > 0) reserve_dropout_draws(a, in.device().index());
    check_launch(kernels::dropout_add_layer_norm_forward(half_type(in), a, current_stream()),
                 "dropout+LayerNorm forward");
    ctx->save_for_backward({sum, g, mean, rstd, keep});
    ctx->saved_data["p"] = p;
    ctx->saved_data["bias"] = added.defined();
    ctx->set_materialize_grads(false);  // an unused output's gradient stays undefined, not a tensor of zeros
    if (!twice) return {out};
    return {out, out.view_as(out)};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &sum = saved[0], &gamma = saved[1], &mean = saved[2], &rstd = saved[3], &keep = saved[4];
    const double p = ctx->saved_data["p"].toDouble();
    const bool with_bias = ctx->saved_data["bias"].toBool();
    // The output's gradient and, for an output used twice, the second use's; either may be undefined (unused).
    at::Tensor dy = grads[0], dy2 = grads.size() > 1 ? grads[1] : at::Tensor();
    if (!dy.defined()) std::swap(dy, dy2);
    if (!dy.defined()) return variable_list(8);  // no gradient reached either output
    dy = kernel_input(dy, sum.scalar_type());
    if (dy2.defined()) dy2 = kernel_input(dy2, sum.scalar_type());
    const int64_t cols = sum.size(-1), rows = sum.numel() / std::max<int64_t>(cols, 1);
    const int64_t blocks = kernels::dropout_add_layer_norm_backward_blocks(rows);
    at::Tensor grad_input = at::empty_like(sum), grad_residual = at::empty_like(sum);
    at::Tensor partial =
        at::empty({with_bias ? 3 : 2, std::max<int64_t>(blocks, 1), cols}, sum.options().dtype(at::kFloat));
    if (blocks == 0) partial.zero_();
    kernels::DropoutAddLayerNormBackward a;
    a.grad_out = dy.data_ptr();
    a.grad_out2 = dy2.defined() ? dy2.data_ptr() : nullptr;
    a.sum = sum.data_ptr();
    a.gamma = gamma.data_ptr();
    a.mean = mean.data_ptr<float>();
    a.rstd = rstd.data_ptr<float>();
    a.keep = p > 0 ? keep.data_ptr<uint8_t>() : nullptr;
    a.grad_input = grad_input.data_ptr();
    a.grad_residual = grad_residual.data_ptr();
    a.gamma_partial = partial[0].data_ptr<float>();
    a.beta_partial = partial[1].data_ptr<float>();
    a.bias_partial = with_bias ? partial[2].data_ptr<float>() : nullptr;
    a.rows = rows;
    a.cols = cols;
    a.p = static_cast<float>(p);
    check_launch(kernels::dropout_add_layer_norm_backward(half_type(sum), a, current_stream()),
                 "dropout+LayerNorm backward");
    // [2 or 3, cols]: dgamma, dbeta (and dbias), in the weights' dtype (the bias shares it).
    const at::Tensor totals = partial.sum(1).to(gamma.scalar_type());
    return {grad_input,  grad_residual, totals[0],   totals[1], with_bias ? totals[2] : at::Tensor(),
            at::Tensor(), at::Tensor(),  at::Tensor()};
  }
};

// Whether the kernels take these: same 16-bit dtype, shape and device, a supported width.
bool fused_applies(const at::Tensor& input, const at::Tensor& residual) {
  const auto type = input.scalar_type();
  return input.is_cuda() && (type == at::kBFloat16 || type == at::kHalf) && input.sizes() == residual.sizes() &&
         kernels::dropout_add_layer_norm_supports(input.size(-1)) && kernel_can_read(input) &&
         kernel_can_take(residual, input);
}

#endif  // BERTKIT_CUDA_KERNELS

// The kernel's outputs (one, or with `twice` two: see DropoutAddLayerNorm), or none where it does not apply: off,
// not built, not CUDA bf16/fp16, another width, a bias without the experimental kernels.
torch::autograd::variable_list fused_outputs(const at::Tensor& input, const at::Tensor& residual,
                                             const at::Tensor& gamma, const at::Tensor& beta, const at::Tensor& bias,
                                             double p, double eps, bool training, bool twice) {
#ifdef BERTKIT_CUDA_KERNELS
  if (fused_kernels_enabled() && fused_applies(input, residual) && (!bias.defined() || experimental_kernels_enabled())) {
    const at::Tensor g = autocast_weight(gamma, input), b = autocast_weight(beta, input);
    const at::Tensor added = bias.defined() ? autocast_weight(bias, input) : at::Tensor();
    // The kernels read gamma, beta and bias as [cols] vectors of the input's type, on its device.
    auto fits = [&](const at::Tensor& t) {
      return t.dim() == 1 && t.size(0) == input.size(-1) && kernel_can_take(t, input);
    };
    if (fits(g) && fits(b) && (!added.defined() || fits(added))) {
      const c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);
      const std::optional<at::Tensor> maybe_bias = added.defined() ? std::optional<at::Tensor>(added) : std::nullopt;
      return DropoutAddLayerNorm::apply(input, residual, g, b, maybe_bias, training ? p : 0.0, eps, twice);
    }
  }
#endif
  return {};
}

}  // namespace

at::Tensor autocast_layer_norm(const at::Tensor& x, const at::Tensor& gamma, const at::Tensor& beta, double eps) {
  // Autocast runs layer_norm in fp32 and returns fp32, so the residual stream between layers (and every dropout,
  // residual add and cast on it) would move twice the bytes. Here the input and weights are cast to the autocast
  // dtype and the kernel, which accumulates its statistics in fp32 whatever the input, returns bf16/fp16, as
  // NVIDIA's and Megatron's mixed-precision BERT keep their activations.
  const at::DeviceType device = x.device().type();
  if (!at::autocast::is_autocast_enabled(device)) return at::layer_norm(x, {x.size(-1)}, gamma, beta, eps);
  const at::ScalarType dtype = at::autocast::get_autocast_dtype(device);
  const at::Tensor w = autocast_weight(gamma, x), b = autocast_weight(beta, x);
  const c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);
  return at::layer_norm(x.to(dtype), {x.size(-1)}, w, b, eps);
}

at::Tensor dropout_add_layer_norm_reference(const at::Tensor& input, const at::Tensor& residual,
                                            const at::Tensor& gamma, const at::Tensor& beta, double p, double eps,
                                            bool training, const at::Tensor& bias) {
  const at::Tensor biased = bias.defined() ? input + autocast_weight(bias, input) : input;
  const at::Tensor dropped = training && p > 0 ? at::dropout(biased, p, true) : biased;
  return autocast_layer_norm(dropped + residual, gamma, beta, eps);
}

at::Tensor dropout_add_layer_norm(const at::Tensor& input, const at::Tensor& residual, const at::Tensor& gamma,
                                  const at::Tensor& beta, double p, double eps, bool training, const at::Tensor& bias) {
  const auto fused = fused_outputs(input, residual, gamma, beta, bias, p, eps, training, /*twice=*/false);
  if (!fused.empty()) return fused[0];
  return dropout_add_layer_norm_reference(input, residual, gamma, beta, p, eps, training, bias);
}

NormOutput dense_dropout_add_layer_norm(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b,
                                        const at::Tensor& residual, const at::Tensor& gamma, const at::Tensor& beta,
                                        double p, double eps, bool training) {
#ifdef BERTKIT_CUDA_KERNELS
  if (experimental_kernels_enabled()) {
    const at::ScalarType type = kernel_dtype(x, {w, b, gamma, beta});
    if (type != at::ScalarType::Undefined && residual.scalar_type() == type && residual.dim() == x.dim() &&
        residual.size(-1) == w.size(0) && kernels::dropout_add_layer_norm_supports(w.size(0))) {
      const at::Tensor product = at::linear(x, w);  // the bias goes into the kernel
      const auto fused = fused_outputs(product, residual, gamma, beta, b, p, eps, training, /*twice=*/true);
      if (!fused.empty()) return {fused[0], fused[1]};
      const at::Tensor out = dropout_add_layer_norm_reference(product, residual, gamma, beta, p, eps, training, b);
      return {out, out};
    }
  }
#endif
  const at::Tensor out = dropout_add_layer_norm(at::linear(x, w, b), residual, gamma, beta, p, eps, training);
  return {out, out};
}

}  // namespace bk
