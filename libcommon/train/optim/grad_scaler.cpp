#include "train/optim/grad_scaler.h"

#include "util/error.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <cmath>

namespace bk {

LossScaler::LossScaler(const LossScalerConfig& config, const at::Device& device) : config_(config) {
  if (config_.enabled) {
    if (!(config_.init_scale > 0) || !std::isfinite(config_.init_scale))
      fail("loss scaler: the initial scale must be positive and finite, got {}", config_.init_scale);
    if (config_.dynamic && !(config_.growth_factor > 1)) fail("loss scaler: the growth factor must exceed 1, got {}", config_.growth_factor);
    if (config_.dynamic && !(config_.backoff_factor > 0 && config_.backoff_factor < 1))
      fail("loss scaler: the backoff factor must lie in (0, 1), got {}", config_.backoff_factor);
    if (config_.growth_interval <= 0)
      fail("loss scaler: the growth interval must be positive, got {}", config_.growth_interval);
  }
  auto options = at::TensorOptions().device(device);
  scale_ = at::full({1}, config_.enabled ? config_.init_scale : 1.0, options.dtype(at::kFloat));
  growth_tracker_ = at::zeros({1}, options.dtype(at::kInt));
  found_inf_ = at::zeros({1}, options.dtype(at::kFloat));
}

at::Tensor LossScaler::scale_loss(const at::Tensor& loss) const {
  if (!config_.enabled) return loss;
  return loss * scale_.to(loss.device(), /*non_blocking=*/true).squeeze();
}

bool LossScaler::unscale(const std::vector<at::Tensor>& grads) {
  if (!config_.enabled) return true;
  if (unscaled_) fail("loss scaler: unscale called twice before update");
  at::NoGradGuard no_grad;
  found_inf_.zero_();
  at::Tensor inv_scale = scale_.to(at::kDouble).reciprocal().to(at::kFloat);
  // The kernel wants its tensors on one device and of one dtype per call.
  std::map<std::pair<std::string, at::ScalarType>, std::vector<at::Tensor>> groups;
  for (const auto& g : grads)
    if (g.defined()) groups[{g.device().str(), g.scalar_type()}].push_back(g);
  for (auto& [key, list] : groups) {
    const at::Device device = list.front().device();
    if (device == found_inf_.device()) {
      at::_amp_foreach_non_finite_check_and_unscale_(list, found_inf_, inv_scale);
    } else {
      at::Tensor found = at::zeros({1}, found_inf_.options().device(device));
      at::_amp_foreach_non_finite_check_and_unscale_(list, found, inv_scale.to(device));
      found_inf_.add_(found.to(found_inf_.device()));
    }
  }
  unscaled_ = true;
  last_finite_ = found_inf_.item<float>() == 0.0f;
  return last_finite_;
}

void LossScaler::update() {
  if (!config_.enabled) return;
  if (!unscaled_) fail("loss scaler: update called without unscale");
  unscaled_ = false;
  at::NoGradGuard no_grad;
  if (!config_.dynamic) {  // the scale stays; only the skipped steps are counted
    if (!last_finite_) ++skipped_;
    return;
  }
  at::_amp_update_scale_(scale_, growth_tracker_, found_inf_, config_.growth_factor, config_.backoff_factor,
                         config_.growth_interval);
  if (last_finite_) {
    consecutive_ = 0;
    return;
  }
  ++skipped_;
  ++consecutive_;
  const double now = scale();
  if (now < config_.min_scale)
    fail("loss scale collapsed to {} after {} consecutive overflowing steps (gradients kept overflowing in fp16; "
         "lower the learning rate or train in bf16)",
         now, consecutive_);
}

double LossScaler::scale() const { return config_.enabled ? scale_.item<double>() : 1.0; }

std::map<std::string, at::Tensor> LossScaler::state() const {
  return {{"loss_scale.scale", scale_.cpu().clone()},
          {"loss_scale.growth_tracker", growth_tracker_.cpu().clone()},
          {"loss_scale.skipped", at::scalar_tensor(skipped_, at::TensorOptions().dtype(at::kLong))}};
}

void LossScaler::load_state(const std::map<std::string, at::Tensor>& state) {
  auto find = [&](const char* name, int64_t numel) -> const at::Tensor& {
    auto it = state.find(name);
    if (it == state.end() || !it->second.defined()) fail("loss scaler state: '{}' is missing", name);
    if (it->second.numel() != numel)
      fail("loss scaler state: '{}' holds {} values, expected {}", name, it->second.numel(), numel);
    return it->second;
  };
  const at::Tensor& scale = find("loss_scale.scale", 1);
  const at::Tensor& tracker = find("loss_scale.growth_tracker", 1);
  const at::Tensor& skipped = find("loss_scale.skipped", 1);
  const double value = scale.item<double>();
  if (!(value > 0) || !std::isfinite(value)) fail("loss scaler state: the scale {} is not positive and finite", value);
  at::NoGradGuard no_grad;
  scale_.copy_(scale.reshape({1}));
  growth_tracker_.copy_(tracker.reshape({1}));
  skipped_ = skipped.item<int64_t>();
  consecutive_ = 0;
  unscaled_ = false;
}

void check_loss_finite(double loss, int64_t step) {
  if (std::isnan(loss)) fail("loss is NaN at step {}", step);
  if (std::isinf(loss)) fail("loss is infinite at step {}", step);
}

}  // namespace bk
