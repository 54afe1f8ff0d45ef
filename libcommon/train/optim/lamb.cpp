// NVLAMB as apex's FusedLAMB computes it (adam_w_mode, bias correction, global-norm pre-normalisation); the
// formulas are in optimizer.h. The step has two halves:
//   the Adam half (the moments and the direction m_hat / (sqrt(v_hat) + eps)): with config.fused, torch's fused
//   Adam kernel stepping the zeroed update buffer with learning rate -1 (its "parameter" then becomes the
//   direction), reading the gradients where backward left them and pre-normalising them as its gradient divisor:
//   one pass over each parameter's state. Otherwise (or without grad_averaging, which Adam's kernel cannot
//   express) multi-tensor passes over the flat buffers, the gradients first gathered into the update buffer.
//   the trust-ratio half: wd w added, per-tensor norms of the weights and of the update, the ratios computed on
//   the device and applied to each parameter's view of the update buffer (a multi-tensor multiply by 0-dim views
//   of the ratio vector), so a step never waits for the device and allocates nothing the size of the model (an
//   index of one int64 per parameter element, as a repeat_interleave needs, would be 2.7 GB at BERT-large).
// Passes over model-sized float32 buffers per step (reads plus writes, bench/optimizer.sh counts their time):
// about 20 fused, 36 with the multi-tensor Adam half.
#include "train/optim/optimizer_kinds.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <optional>

namespace bk {
namespace {

bool adam_half_fused(const OptimizerConfig& config) { return config.fused && config.grad_averaging; }

class Lamb final : public Optimizer {
 public:
  Lamb(NamedTensors named_params, const OptimizerConfig& config)
      : Optimizer(std::move(named_params), config, adam_half_fused(config) ? kUpdateBuffer : kBothBuffers) {
    std::vector<uint8_t> eligible;
    for (size_t i = 0; i < param_list_.size(); ++i)
      eligible.push_back(config_.trust_ratio_all || (decays_[i] && config_.weight_decay != 0));
    eligible_ = at::tensor(eligible, at::kByte).to(at::kBool).to(update_.device());
  }

  bool capturable() const override { return true; }

  // The step's scalars (lr, bias corrections) come from the device (prepare_step), so a CUDA graph can hold it.
  at::Tensor apply_update() override {
    const OptimizerConfig& c = config_;
    at::Tensor norm = adam_half_fused(c) ? fused_adam_direction() : adam_direction();
    if (c.weight_decay != 0 && !decayed_params_.empty())
      at::_foreach_add_(decayed_updates_, decayed_params_, c.weight_decay);

    at::Tensor param_norms = at::stack(at::_foreach_norm(param_list_, 2));
    at::Tensor update_norms = at::stack(at::_foreach_norm(update_views(), 2));
    at::Tensor ratio = at::where(eligible_ & (param_norms > 0) & (update_norms > 0), param_norms / update_norms,
                                 at::ones_like(param_norms));
    at::_foreach_mul_(update_views(), (ratio * lr_on_device_).unbind(0));  // lr r u
    at::_foreach_add_(param_list_, update_views(), -1);
    return norm;
  }

 private:
  // update_ = m_hat / (sqrt(v_hat) + eps) by torch's fused Adam kernel: with learning rate -1 it adds
  // m / (1 - beta1^t) / (sqrt(v) / sqrt(1 - beta2^t) + eps) to its parameter, here the zeroed update buffer, and
  // divides the gradients by the pre-normalisation divisor on the way (writing them back divided). The bias
  // corrections come from the step count on the device. Returns the gradients' norm before pre-normalisation.
  at::Tensor fused_adam_direction() {
    const OptimizerConfig& c = config_;
    const std::vector<at::Tensor> grads = gradients_in_place();
    at::Tensor norm = global_norm(grads);
    std::optional<at::Tensor> divisor;
    if (c.max_grad_norm > 0) divisor = at::clamp_min(norm / c.max_grad_norm, 1.0).to(at::kFloat);
    update_.zero_();
    const std::vector<at::Tensor> steps(param_list_.size(), step_on_device_);
    at::_fused_adam_(update_views(), grads, exp_avg_views(), exp_avg_sq_views(), {}, steps, /*lr=*/-1.0, c.beta1,
                     c.beta2, /*weight_decay=*/0.0, c.eps, /*amsgrad=*/false, /*maximize=*/false, divisor);
    return norm;
  }

  // The same in multi-tensor passes over the flat buffers, with or without grad_averaging.
  at::Tensor adam_direction() {
    const OptimizerConfig& c = config_;
    at::Tensor norm = gather_grads();  // update_ holds the gradients
    if (c.max_grad_norm > 0) update_.div_(at::clamp_min(norm / c.max_grad_norm, 1.0));
    exp_avg_.mul_(c.beta1).add_(update_, c.grad_averaging ? 1 - c.beta1 : 1.0);
    exp_avg_sq_.mul_(c.beta2).addcmul_(update_, update_, 1 - c.beta2);
    // Only tensor-by-tensor ops write into the buffers: the Scalar overloads of div_out build a model-sized
    // temporary and copy it (420 MB a step at BERT-base).
    at::sqrt_out(scratch_, exp_avg_sq_).div_(sqrt_correction2_on_device_).add_(c.eps);
    at::div_out(update_, exp_avg_, scratch_).div_(correction1_on_device_);
    return norm;
  }

  at::Tensor eligible_;  // bool [params]: whether the trust ratio applies
};

}  // namespace

std::unique_ptr<Optimizer> make_lamb(NamedTensors named_params, const OptimizerConfig& config) {
  return std::make_unique<Lamb>(std::move(named_params), config);
}

}  // namespace bk
