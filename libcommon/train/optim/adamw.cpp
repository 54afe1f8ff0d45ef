// AdamW with torch.optim.AdamW's arithmetic (decoupled decay applied first, bias corrections folded into the
// step size and the denominator), after clip_grad_norm's clipping; the formulas are in optim.h.
#include "train/optim/optimizer_kinds.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <cmath>

namespace bk {
namespace {

class AdamW final : public Optimizer {
 public:
  AdamW(NamedTensors named_params, const OptimizerConfig& config) : Optimizer(std::move(named_params), config) {}

  at::Tensor step_async(double lr) override {
    at::NoGradGuard no_grad;
    ++steps_;
    const OptimizerConfig& c = config_;
    const double correction1 = 1 - std::pow(c.beta1, static_cast<double>(steps_));
    const double correction2 = 1 - std::pow(c.beta2, static_cast<double>(steps_));

    at::Tensor norm = gather_grads();  // update_ holds the gradients
    if (c.max_grad_norm > 0) update_.mul_(at::clamp_max((norm + 1e-6).reciprocal() * c.max_grad_norm, 1.0));
    if (c.weight_decay != 0 && !decayed_params_.empty()) at::_foreach_mul_(decayed_params_, 1 - lr * c.weight_decay);
    exp_avg_.lerp_(update_, 1 - c.beta1);
    exp_avg_sq_.mul_(c.beta2).addcmul_(update_, update_, 1 - c.beta2);
    at::sqrt_out(scratch_, exp_avg_sq_).div_(std::sqrt(correction2)).add_(c.eps);
    at::div_out(update_, exp_avg_, scratch_);
    at::_foreach_add_(param_list_, update_views(), -lr / correction1);
    return norm;
  }
};

}  // namespace

std::unique_ptr<Optimizer> make_adamw(NamedTensors named_params, const OptimizerConfig& config) {
  return std::make_unique<AdamW>(std::move(named_params), config);
}

}  // namespace bk
