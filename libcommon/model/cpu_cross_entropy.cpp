#include "model/cpu_cross_entropy.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

namespace bk {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Outputs: each row's loss (differentiable; 0 for a row without a label) and its arg-max (not).
class PaddedCrossEntropy : public torch::autograd::Function<PaddedCrossEntropy> {
 public:
  static variable_list forward(AutogradContext* ctx, const at::Tensor& logits, const at::Tensor& labels,
                               int64_t vocab) {
    const at::Tensor classes = logits.narrow(1, 0, vocab).contiguous();
    const at::Tensor log_probs = at::log_softmax(classes, 1);
    const at::Tensor valid = labels.ge(0);
    const at::Tensor picked = log_probs.gather(1, labels.clamp_min(0).unsqueeze(1)).squeeze(1);
    const at::Tensor loss = at::where(valid, picked.neg(), at::zeros_like(picked));
    const at::Tensor predicted = classes.argmax(1);
    ctx->save_for_backward({log_probs, labels});
    ctx->saved_data["padded"] = logits.size(1);
    ctx->mark_non_differentiable({predicted});
    ctx->set_materialize_grads(false);
    return {loss, predicted};
  }

  // d loss_r / d logit_rc = grad_r (softmax_rc - [c == label_r]); rows without a label and padded columns get 0.
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    if (!grads[0].defined()) return {at::Tensor(), at::Tensor(), at::Tensor()};
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &log_probs = saved[0], &labels = saved[1];
    const int64_t rows = log_probs.size(0), vocab = log_probs.size(1), padded = ctx->saved_data["padded"].toInt();
    const at::Tensor scale = at::where(labels.ge(0), grads[0].to(at::kFloat), at::zeros_like(grads[0]));
    at::Tensor grad = at::empty({rows, padded}, log_probs.options());
    at::Tensor classes = grad.narrow(1, 0, vocab);
    at::exp_out(classes, log_probs);
    classes.mul_(scale.unsqueeze(1));
    classes.scatter_add_(1, labels.clamp_min(0).unsqueeze(1), scale.neg().unsqueeze(1));
    grad.narrow(1, vocab, padded - vocab).zero_();
    return {grad, at::Tensor(), at::Tensor()};
  }
};

}  // namespace

std::optional<MaskedLmScores> cpu_masked_lm_scores(const at::Tensor& padded_logits, int64_t vocab,
                                                   const at::Tensor& labels) {
  if (!padded_logits.defined() || !padded_logits.device().is_cpu() || !padded_logits.requires_grad() ||
      padded_logits.scalar_type() != at::kFloat || padded_logits.dim() != 2 || padded_logits.size(1) <= vocab ||
      labels.dim() != 1 || labels.size(0) != padded_logits.size(0))
    return std::nullopt;
  const variable_list out = PaddedCrossEntropy::apply(padded_logits, labels.to(at::kLong), vocab);
  return MaskedLmScores{out[0], out[1]};
}

}  // namespace bk
