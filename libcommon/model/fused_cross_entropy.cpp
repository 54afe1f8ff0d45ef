#include "model/fused_cross_entropy.h"

#ifdef BERTKIT_CUDA_KERNELS
#include "kernels/cross_entropy.h"
#include "model/cuda_kernels.h"
#include "model/kernel_switches.h"

#include <ATen/ATen.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/csrc/autograd/custom_function.h>
#endif

namespace bk {

#ifdef BERTKIT_CUDA_KERNELS

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Outputs: each row's loss (differentiable) and its arg-max (not).
class MaskedLmCrossEntropy : public torch::autograd::Function<MaskedLmCrossEntropy> {
 public:
  static variable_list forward(AutogradContext* ctx, const at::Tensor& logits, const at::Tensor& labels,
                               int64_t vocab) {
    const c10::cuda::CUDAGuard on_device(logits.device());
    const int64_t rows = logits.size(0);
    const auto on = logits.options();
    at::Tensor loss = at::empty({rows}, on.dtype(at::kFloat)), lse = at::empty({rows}, on.dtype(at::kFloat));
    at::Tensor predicted = at::empty({rows}, on.dtype(at::kLong));
    kernels::CrossEntropyForward a;
    a.logits = logits.data_ptr();
    a.labels = labels.data_ptr<int64_t>();
    a.loss = loss.data_ptr<float>();
    a.logsumexp = lse.data_ptr<float>();
    a.predicted = predicted.data_ptr<int64_t>();
    a.rows = rows;
    a.cols = vocab;
    a.padded_cols = logits.size(1);
    check_launch(kernels::cross_entropy_forward(half_type(logits), a, current_stream()), "cross entropy forward");
    ctx->save_for_backward({logits, labels, lse});
    ctx->saved_data["vocab"] = vocab;
    ctx->mark_non_differentiable({predicted});
    ctx->set_materialize_grads(false);  // no zeros made for the arg-max's gradient, which backward ignores
    return {loss, predicted};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &logits = saved[0], &labels = saved[1], &lse = saved[2];
    if (!grads[0].defined()) return {at::Tensor(), at::Tensor(), at::Tensor()};
    const at::Tensor grad_loss = grads[0].contiguous().to(at::kFloat);
    at::Tensor grad_logits = at::empty_like(logits);
    kernels::CrossEntropyBackward a;
    a.grad_loss = grad_loss.data_ptr<float>();
    a.logits = logits.data_ptr();
    a.labels = labels.data_ptr<int64_t>();
    a.logsumexp = lse.data_ptr<float>();
    a.grad_logits = grad_logits.data_ptr();
    a.rows = logits.size(0);
    a.cols = ctx->saved_data["vocab"].toInt();
    a.padded_cols = logits.size(1);
    check_launch(kernels::cross_entropy_backward(half_type(logits), a, current_stream()), "cross entropy backward");
    return {grad_logits, at::Tensor(), at::Tensor()};
  }
};

bool kernel_applies(const at::Tensor& logits, int64_t vocab, const at::Tensor& labels) {
  const at::ScalarType type = logits.scalar_type();
  return experimental_kernels_enabled() && logits.is_cuda() && logits.requires_grad() &&
         (type == at::kBFloat16 || type == at::kHalf) && logits.dim() == 2 && logits.is_contiguous() &&
         kernel_can_read(logits) && kernels::cross_entropy_supports(vocab, logits.size(1)) &&
         labels.scalar_type() == at::kLong && labels.device() == logits.device() && labels.dim() == 1 &&
         labels.size(0) == logits.size(0);
}

}  // namespace

std::optional<MaskedLmScores> fused_masked_lm_scores(const at::Tensor& padded_logits, int64_t vocab,
                                                     const at::Tensor& labels) {
  if (!padded_logits.defined() || !kernel_applies(padded_logits, vocab, labels)) return std::nullopt;
  const c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);
  const variable_list out = MaskedLmCrossEntropy::apply(padded_logits, labels.contiguous(), vocab);
  return MaskedLmScores{out[0], out[1]};
}

#else

std::optional<MaskedLmScores> fused_masked_lm_scores(const at::Tensor&, int64_t, const at::Tensor&) {
  return std::nullopt;
}

#endif  // BERTKIT_CUDA_KERNELS

}  // namespace bk
