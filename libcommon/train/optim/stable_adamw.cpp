// StableAdamW (the formulas are in optimizer.h) as torch's fused AdamW kernel, one call per parameter with that
// tensor's rate, after the rates are found in multi-tensor passes over the gradients where backward left them:
//   s = max(v + (1 - beta2) / beta2 g^2, eps^2 (1 - beta2^t) / beta2)^(-1/2) g   (scratch_; the new v / beta2)
//   sum of g^2 / max(v_hat, eps^2) = (1 - beta2^t) / beta2 ||s||^2              (one _foreach_norm)
// About 19 passes over model-sized float32 buffers (the kernel's 7 among them); nothing allocated the size of the
// model. The moments are stored as torch's AdamW stores them (not bias-corrected): the same steps as optimi's
// debiased ones, within float rounding. The rates stay on the device, so a step waits for nothing.
#include "train/optim/optimizer_kinds.h"

#include "util/error.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <cmath>

namespace bk {
namespace {

class StableAdamW final : public Optimizer {
 public:
  StableAdamW(NamedTensors named_params, const OptimizerConfig& config)
      : Optimizer(std::move(named_params), config, kScratchBuffer) {
    if (!config_.counted_rows.empty() && config_.counted_rows.size() != param_list_.size())
      fail("optimizer: {} counted row counts for {} parameters", config_.counted_rows.size(), param_list_.size());
    std::vector<float> sizes;
    for (size_t i = 0; i < param_list_.size(); ++i) {
      const at::Tensor& p = param_list_[i];
      // Rows beyond the counted ones (padding) have zero gradients: they add nothing to the sum.
      const int64_t rows = p.dim() == 0 ? 1 : p.size(0);
      const int64_t counted = config_.counted_rows.empty() ? rows : config_.counted_rows[i];
      if (counted < 1 || counted > rows)
        fail("optimizer: '{}' has {} rows, {} counted", params_[i].first, rows, counted);
      sizes.push_back(static_cast<float>(p.numel() / rows * counted));
    }
    counted_ = at::tensor(sizes).to(exp_avg_.device());
    int64_t offset = 0;
    for (const at::Tensor& p : param_list_) {
      scratch_views_.push_back(scratch_.narrow(0, offset, p.numel()).view(p.sizes()));
      offset += p.numel();
    }
  }

  at::Tensor apply_update() override {
    const OptimizerConfig& c = config_;
    const std::vector<at::Tensor> grads = gradients_in_place();
    at::Tensor norm = global_norm(grads);
    if (c.max_grad_norm > 0) at::_foreach_mul_(grads, at::clamp_max((norm + 1e-6).reciprocal() * c.max_grad_norm, 1.0));

    // Each tensor's rate: lr / max(1, sqrt(mean(g^2 / max(v_hat, eps^2)))), v_hat the new second moment corrected.
    // scratch_ holds the new v divided by beta2 (v + (1 - beta2) / beta2 g^2: one pass per tensor), so
    //   ||g max(v_new / beta2, eps^2 c2 / beta2)^(-1/2)||^2 = beta2 / c2 sum g^2 / max(v_hat, eps^2).
    const double correction2 = 1 - std::pow(c.beta2, static_cast<double>(steps_));
    const double beta2 = c.beta2 > 0 ? c.beta2 : 1.0;  // beta2 = 0: v_new = g^2
    for (size_t i = 0; i < grads.size(); ++i) {
      if (c.beta2 > 0)
        at::addcmul_out(scratch_views_[i], exp_avg_sq_views()[i], grads[i], grads[i], (1 - beta2) / beta2);
      else
        at::mul_out(scratch_views_[i], grads[i], grads[i]);
    }
    scratch_.clamp_min_(c.eps * c.eps * correction2 / beta2).rsqrt_();
    at::_foreach_mul_(scratch_views_, grads);
    const at::Tensor norms = at::stack(at::_foreach_norm(scratch_views_, 2));
    const at::Tensor rms = norms * (correction2 / beta2 / counted_).sqrt();
    const at::Tensor rates = lr_ / at::clamp_min(rms, 1.0);

    // The step, decay first: w *= 1 - rate wd (fully decoupled: rate / max_lr wd), as AdamW's with the tensor's rate.
    const double decay = c.fully_decoupled_decay ? c.weight_decay / c.max_lr : c.weight_decay;
    for (size_t i = 0; i < param_list_.size(); ++i)
      at::_fused_adamw_({param_list_[i]}, {grads[i]}, {exp_avg_views()[i]}, {exp_avg_sq_views()[i]}, {},
                        {step_on_device_}, rates[static_cast<int64_t>(i)], c.beta1, c.beta2, decays_[i] ? decay : 0.0,
                        c.eps, /*amsgrad=*/false, /*maximize=*/false);
    return norm;
  }

 private:
  at::Tensor counted_;  // float32 [params]: the elements each parameter's mean counts
  std::vector<at::Tensor> scratch_views_;
};

}  // namespace

std::unique_ptr<Optimizer> make_stable_adamw(NamedTensors named_params, const OptimizerConfig& config) {
  return std::make_unique<StableAdamW>(std::move(named_params), config);
}

}  // namespace bk
