// The two optimizers Samsung's MLPerf BERT code ships for trial, on the flat buffers of optimizer.h, after
// clip_grad_norm's clipping (max_grad_norm > 0) and with coupled L2 weight decay (g += wd w) on the parameters that
// take decay, as both papers' reference implementations add it:
//
// ACClip (Zhang et al., "Why are Adaptive Methods Good for Attention Models?", NeurIPS 2020), alpha = 2:
//   m = b1 m + (1 - b1) g;  tau = b2 tau + (1 - b2) g^2;  w -= lr * min(1, sqrt(tau) / (|m| + eps)) * m
//   (exp_avg holds m, exp_avg_sq holds tau; the published defaults are b2 = 0.99, eps = 1e-5)
//
// MADGRAD (Defazio & Jelassi, "Adaptivity without Compromise", 2021), momentum = beta1, as facebookresearch's
// madgrad 1.3: with k the steps before this one and lambda = (lr + eps) sqrt(k + 1),
//   s += lambda g;  v += lambda g^2;  z = x0 - s / (v^(1/3) + eps);  w = (1 - c) w + c z,  c = 1 - momentum
//   (exp_avg holds s, exp_avg_sq holds v, x0 the point the run started from)
#include "train/optim/optimizer_kinds.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <cmath>

namespace bk {
namespace {

// The clipped gradients in update_ (plus the coupled weight decay); returns their norm before clipping.
class CoupledDecayOptimizer : public Optimizer {
 protected:
  CoupledDecayOptimizer(NamedTensors named_params, const OptimizerConfig& config)
      : Optimizer(std::move(named_params), config, kBothBuffers) {}
  at::Tensor clipped_gradients() {
    at::Tensor norm = gather_grads();
    if (config_.max_grad_norm > 0)
      update_.mul_(at::clamp_max((norm + 1e-6).reciprocal() * config_.max_grad_norm, 1.0));
    if (config_.weight_decay != 0 && !decayed_params_.empty())
      at::_foreach_add_(decayed_updates_, decayed_params_, config_.weight_decay);
    return norm;
  }
};

class AcClip final : public CoupledDecayOptimizer {
 public:
  AcClip(NamedTensors named_params, const OptimizerConfig& config)
      : CoupledDecayOptimizer(std::move(named_params), config) {}

  at::Tensor apply_update() override {
    const OptimizerConfig& c = config_;
    at::Tensor norm = clipped_gradients();
    exp_avg_.mul_(c.beta1).add_(update_, 1 - c.beta1);
    exp_avg_sq_.mul_(c.beta2).addcmul_(update_, update_, 1 - c.beta2);
    // The clipping factor min(1, sqrt(tau) / (|m| + eps)) in scratch_, then the step factor * m in update_.
    at::abs_out(update_, exp_avg_).add_(c.eps);
    at::sqrt_out(scratch_, exp_avg_sq_).div_(update_).clamp_(0.0, 1.0);
    at::mul_out(update_, scratch_, exp_avg_);
    at::_foreach_add_(param_list_, update_views(), -lr_);
    return norm;
  }
};

class Madgrad final : public CoupledDecayOptimizer {
 public:
  Madgrad(NamedTensors named_params, const OptimizerConfig& config)
      : CoupledDecayOptimizer(std::move(named_params), config) {
    add_initial_point();
  }

  at::Tensor apply_update() override {
    const OptimizerConfig& c = config_;  // steps_ is k + 1
    const double lambda = (lr_ != 0 ? lr_ + c.eps : 0.0) * std::sqrt(static_cast<double>(steps_));
    at::Tensor norm = clipped_gradients();
    exp_avg_sq_.addcmul_(update_, update_, lambda);
    exp_avg_.add_(update_, lambda);
    at::pow_out(scratch_, exp_avg_sq_, 1.0 / 3.0).add_(c.eps);
    at::div_out(update_, exp_avg_, scratch_);
    at::_foreach_mul_(update_views(), -1.0);
    at::_foreach_add_(update_views(), x0_views());  // z = x0 - s / rms
    if (c.beta1 == 0) at::_foreach_copy_(param_list_, update_views());
    else at::_foreach_lerp_(param_list_, update_views(), 1 - c.beta1);
    return norm;
  }
};

}  // namespace

std::unique_ptr<Optimizer> make_acclip(NamedTensors named_params, const OptimizerConfig& config) {
  return std::make_unique<AcClip>(std::move(named_params), config);
}

std::unique_ptr<Optimizer> make_madgrad(NamedTensors named_params, const OptimizerConfig& config) {
  return std::make_unique<Madgrad>(std::move(named_params), config);
}

}  // namespace bk
