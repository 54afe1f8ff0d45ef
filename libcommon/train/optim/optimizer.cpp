// The parts both optimizers share: the flat state buffers and their named views, gradient gathering,
// checkpoint state and clipping (the factory is make_optimizer.cpp).
#include "train/optim/optimizer.h"

#include "train/feed/upload.h"
#include "util/error.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <cmath>
#include <set>

namespace bk {

bool decays_weight(std::string_view name) {
  if (name == "bias" || name.ends_with(".bias") || name.ends_with("norm.weight")) return false;
  return name.find("LayerNorm") == std::string_view::npos;
}

Optimizer::Optimizer(NamedTensors named_params, const OptimizerConfig& config, Buffers buffers)
    : config_(config), params_(std::move(named_params)) {
  if (params_.empty()) fail("optimizer: no parameters to optimize");
  std::set<std::string> seen;
  const at::Device device = params_.front().second.defined() ? params_.front().second.device() : at::Device("cpu");
  for (const auto& [name, param] : params_) {
    if (name.empty()) fail("optimizer: a parameter has an empty name");
    if (!seen.insert(name).second) fail("optimizer: parameter '{}' is listed twice", name);
    if (!param.defined()) fail("optimizer: parameter '{}' is an undefined tensor", name);
    if (param.scalar_type() != at::kFloat)
      fail("optimizer: parameter '{}' is {}, expected float32 (keep master weights in float32)", name,
           std::string(c10::toString(param.scalar_type())));
    if (param.device() != device)
      fail("optimizer: parameter '{}' is on {}, the first one on {}", name, param.device().str(), device.str());
    param_list_.push_back(param);
    decays_.push_back(decays_weight(name));
    if (decays_.back()) decayed_params_.push_back(param);
    numel_ += param.numel();
  }
  auto options = at::TensorOptions().dtype(at::kFloat).device(device);
  exp_avg_ = at::zeros({numel_}, options);
  exp_avg_sq_ = at::zeros({numel_}, options);
  if (buffers & kUpdateBuffer) update_ = at::empty({numel_}, options);
  if (buffers & kScratchBuffer) scratch_ = at::empty({numel_}, options);
  step_scalars_ = at::zeros({4}, options);
  lr_on_device_ = step_scalars_[0];
  correction1_on_device_ = step_scalars_[1];
  sqrt_correction2_on_device_ = step_scalars_[2];
  step_on_device_ = step_scalars_[3];
  int64_t offset = 0;
  for (size_t i = 0; i < params_.size(); ++i) {
    const at::Tensor& param = param_list_[i];
    const int64_t n = param.numel();
    exp_avg_views_.push_back(exp_avg_.narrow(0, offset, n).view(param.sizes()));
    exp_avg_sq_views_.push_back(exp_avg_sq_.narrow(0, offset, n).view(param.sizes()));
    if (update_.defined()) {
      update_views_.push_back(update_.narrow(0, offset, n).view(param.sizes()));
      if (decays_[i]) decayed_updates_.push_back(update_views_.back());
    }
    offset += n;
  }
}

void Optimizer::add_initial_point() {
  at::NoGradGuard no_grad;
  std::vector<at::Tensor> flat;
  for (const auto& param : param_list_) flat.push_back(param.detach().reshape({-1}));
  x0_ = at::cat(flat);
  int64_t offset = 0;
  for (const auto& param : param_list_) {
    x0_views_.push_back(x0_.narrow(0, offset, param.numel()).view(param.sizes()));
    offset += param.numel();
  }
}

double Optimizer::step(double lr) { return step_async(lr).item<double>(); }

at::Tensor Optimizer::step_async(double lr) {
  prepare_step(lr);
  return apply_step();
}

at::Tensor Optimizer::apply_step() {
  at::NoGradGuard no_grad;
  return apply_update();
}

void Optimizer::prepare_step(double lr) {
  ++steps_;
  lr_ = lr;
  const auto t = static_cast<double>(steps_);
  upload_async({static_cast<float>(lr), static_cast<float>(1 - std::pow(config_.beta1, t)),
                static_cast<float>(std::sqrt(1 - std::pow(config_.beta2, t))), static_cast<float>(t)},
               step_scalars_.device(), step_scalars_);
}

void Optimizer::zero_grad() {
  std::vector<at::Tensor> grads;
  for (auto& param : param_list_)
    if (param.grad().defined()) grads.push_back(param.mutable_grad());
  if (!grads.empty()) at::_foreach_zero_(grads);
}

void Optimizer::release_grads() {
  for (auto& param : param_list_) param.mutable_grad().reset();
}

std::vector<at::Tensor> Optimizer::grads() const {
  std::vector<at::Tensor> out;
  out.reserve(param_list_.size());
  for (const auto& param : param_list_) out.push_back(param.grad());
  return out;
}

// The gradient of parameter i, its shape checked; undefined where it has none.
at::Tensor Optimizer::checked_grad(size_t i) const {
  const at::Tensor& grad = param_list_[i].grad();
  if (grad.defined() && grad.sizes() != param_list_[i].sizes())
    fail("optimizer: the gradient of '{}' has shape {}, the parameter {}", params_[i].first, c10::str(grad.sizes()),
         c10::str(param_list_[i].sizes()));
  return grad;
}

at::Tensor Optimizer::gather_grads() {
  std::vector<at::Tensor> flat;
  flat.reserve(param_list_.size());
  for (size_t i = 0; i < param_list_.size(); ++i) {
    const at::Tensor grad = checked_grad(i);
    flat.push_back(grad.defined() ? grad.reshape({-1}) : at::zeros({param_list_[i].numel()}, exp_avg_.options()));
  }
  at::cat_out(update_, flat, 0);
  return at::linalg_vector_norm(update_, 2);
}

std::vector<at::Tensor> Optimizer::gradients_in_place() const {
  std::vector<at::Tensor> out;
  out.reserve(param_list_.size());
  for (size_t i = 0; i < param_list_.size(); ++i) {
    const at::Tensor grad = checked_grad(i);
    out.push_back(grad.defined() ? grad : at::zeros_like(param_list_[i]));
  }
  return out;
}

std::map<std::string, at::Tensor> Optimizer::state() const {
  std::map<std::string, at::Tensor> out;
  for (size_t i = 0; i < params_.size(); ++i) {
    out[params_[i].first + ".exp_avg"] = exp_avg_views_[i];
    out[params_[i].first + ".exp_avg_sq"] = exp_avg_sq_views_[i];
    if (x0_.defined()) out[params_[i].first + ".x0"] = x0_views_[i];
  }
  out["step"] = at::scalar_tensor(steps_, at::TensorOptions().dtype(at::kLong));
  return out;
}

void Optimizer::load_state(const std::map<std::string, at::Tensor>& state) {
  std::set<std::string> known;
  for (const auto& [name, param] : params_) {
    known.insert(name + ".exp_avg");
    known.insert(name + ".exp_avg_sq");
    if (x0_.defined()) known.insert(name + ".x0");
  }
  for (const auto& [name, tensor] : state) {
    std::string_view key = name;
    if ((key.ends_with(".exp_avg") || key.ends_with(".exp_avg_sq") || key.ends_with(".x0")) && !known.contains(name))
      fail("optimizer state: '{}' belongs to no parameter of this model", name);
  }
  auto find = [&](const std::string& name) -> const at::Tensor& {
    auto it = state.find(name);
    if (it == state.end() || !it->second.defined()) fail("optimizer state: '{}' is missing", name);
    return it->second;
  };
  const at::Tensor& step = find("step");
  if (step.numel() != 1 || at::isFloatingType(step.scalar_type()))
    fail("optimizer state: 'step' must be one integer, found {} {}", std::string(c10::toString(step.scalar_type())),
         c10::str(step.sizes()));
  const int64_t steps = step.item<int64_t>();
  if (steps < 0) fail("optimizer state: 'step' is negative ({})", steps);
  // Check everything before changing anything, so a bad file leaves the optimizer as it was.
  std::vector<std::pair<at::Tensor, at::Tensor>> copies;
  for (size_t i = 0; i < params_.size(); ++i) {
    std::vector<std::pair<const char*, at::Tensor>> buffers = {{".exp_avg", exp_avg_views_[i]},
                                                               {".exp_avg_sq", exp_avg_sq_views_[i]}};
    if (x0_.defined()) buffers.emplace_back(".x0", x0_views_[i]);
    for (auto [suffix, view] : buffers) {
      const std::string name = params_[i].first + suffix;
      const at::Tensor& saved = find(name);
      if (saved.sizes() != view.sizes())
        fail("optimizer state: '{}' has shape {}, the parameter {}", name, c10::str(saved.sizes()),
             c10::str(view.sizes()));
      if (!at::isFloatingType(saved.scalar_type()))
        fail("optimizer state: '{}' is {}, expected a floating type", name,
             std::string(c10::toString(saved.scalar_type())));
      copies.emplace_back(view, saved);
    }
  }
  at::NoGradGuard no_grad;
  for (auto& [view, saved] : copies) view.copy_(saved);
  steps_ = steps;
}

at::Tensor clip_grad_norm(const std::vector<at::Tensor>& tensors, double max_norm) {
  std::vector<at::Tensor> defined;
  for (const auto& t : tensors)
    if (t.defined()) defined.push_back(t);
  at::NoGradGuard no_grad;
  at::Tensor norm = global_norm(defined);
  if (defined.empty()) return norm;
  at::Tensor scale = at::clamp_max((norm + 1e-6).reciprocal() * max_norm, 1.0);
  at::_foreach_mul_(defined, scale);
  return norm;
}

at::Tensor global_norm(const std::vector<at::Tensor>& tensors) {
  std::vector<at::Tensor> defined;
  for (const auto& t : tensors)
    if (t.defined()) defined.push_back(t);
  if (defined.empty()) return at::zeros({}, at::kFloat);
  return at::linalg_vector_norm(at::stack(at::_foreach_norm(defined, 2)), 2);
}

}  // namespace bk
