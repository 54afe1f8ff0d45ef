// AdamW with torch.optim.AdamW's arithmetic (decoupled decay applied first, bias corrections folded into the
// step size and the denominator), after clip_grad_norm's clipping; the formulas are in optimizer.h. Either in
// multi-tensor passes over the flat buffers, or (config.fused) by torch's fused kernel, one pass per parameter
// group (with weight decay, without) over the gradients where backward left them: the same formulas, evaluated in
// another order. Fused, the step needs no work buffer: nothing the size of the model besides the moments.
#include "train/optim/optimizer_kinds.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <cmath>
#include <optional>

namespace bk {
namespace {

class AdamW final : public Optimizer {
 public:
  AdamW(NamedTensors named_params, const OptimizerConfig& config)
      : Optimizer(std::move(named_params), config, config.fused ? kNoBuffers : kBothBuffers) {
    if (!config_.fused) return;
    for (size_t i = 0; i < param_list_.size(); ++i) {
      Group& g = decays_[i] ? decayed_ : plain_;
      g.indices.push_back(i);
      g.params.push_back(param_list_[i]);
      g.exp_avgs.push_back(exp_avg_views()[i]);
      g.exp_avg_sqs.push_back(exp_avg_sq_views()[i]);
    }
  }

  // The fused kernel reads the learning rate and the step count from the device (prepare_step puts them there),
  // so a CUDA graph can hold it; the multi-tensor passes take them from the host.
  bool capturable() const override { return config_.fused; }

  at::Tensor apply_update() override {
    const OptimizerConfig& c = config_;
    if (c.fused) {
      const std::vector<at::Tensor> grads = gradients_in_place();
      at::Tensor norm = global_norm(grads);
      // Clipping as the kernel's gradient divisor (norm / max_norm, at least 1): no pass of its own.
      std::optional<at::Tensor> divisor;
      if (c.max_grad_norm > 0) divisor = at::clamp_min((norm + 1e-6) / c.max_grad_norm, 1.0).to(at::kFloat);
      for (Group* g : {&decayed_, &plain_}) {
        if (g->params.empty()) continue;
        std::vector<at::Tensor> group_grads;
        for (size_t i : g->indices) group_grads.push_back(grads[i]);
        const std::vector<at::Tensor> steps(g->params.size(), step_on_device_);
        at::_fused_adamw_(g->params, group_grads, g->exp_avgs, g->exp_avg_sqs, {}, steps, lr_on_device_, c.beta1,
                          c.beta2, g == &decayed_ ? c.weight_decay : 0.0, c.eps, /*amsgrad=*/false, /*maximize=*/false,
                          divisor);
      }
      return norm;
    }
    at::Tensor norm = gather_grads();  // update_ holds the gradients
    const double lr = lr_;
    const double correction1 = 1 - std::pow(c.beta1, static_cast<double>(steps_));
    const double correction2 = 1 - std::pow(c.beta2, static_cast<double>(steps_));
    if (c.max_grad_norm > 0) update_.mul_(at::clamp_max((norm + 1e-6).reciprocal() * c.max_grad_norm, 1.0));
    if (c.weight_decay != 0 && !decayed_params_.empty()) at::_foreach_mul_(decayed_params_, 1 - lr * c.weight_decay);
    exp_avg_.lerp_(update_, 1 - c.beta1);
    exp_avg_sq_.mul_(c.beta2).addcmul_(update_, update_, 1 - c.beta2);
    at::sqrt_out(scratch_, exp_avg_sq_).div_(std::sqrt(correction2)).add_(c.eps);
    at::div_out(update_, exp_avg_, scratch_);
    at::_foreach_add_(param_list_, update_views(), -lr / correction1);
    return norm;
  }

 private:
  struct Group {
    std::vector<size_t> indices;  // into param_list_
    std::vector<at::Tensor> params, exp_avgs, exp_avg_sqs;
  };
  Group decayed_, plain_;
};

}  // namespace

std::unique_ptr<Optimizer> make_adamw(NamedTensors named_params, const OptimizerConfig& config) {
  return std::make_unique<AdamW>(std::move(named_params), config);
}

}  // namespace bk
