#include "model/weight_cast.h"

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <atomic>

namespace bk {

namespace {

std::atomic<bool> grouped_on{true};

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Copies each of `from` into a new tensor of `dtype` (same sizes and strides) in one _foreach_copy_, which casts on
// its multi-tensor path when all sources share a dtype and every pair its sizes and strides.
std::vector<at::Tensor> cast_all(at::TensorList from, at::ScalarType dtype) {
  std::vector<at::Tensor> to;
  to.reserve(from.size());
  for (const at::Tensor& t : from) to.push_back(at::empty_like(t, t.options().dtype(dtype)));
  if (!to.empty()) at::_foreach_copy_(to, from);
  return to;
}

class CastWeights : public torch::autograd::Function<CastWeights> {
 public:
  static variable_list forward(AutogradContext* ctx, at::TensorList weights, at::ScalarType dtype) {
    ctx->saved_data["dtype"] = static_cast<int64_t>(weights[0].scalar_type());
    ctx->set_materialize_grads(false);  // a weight without a gradient stays without, not zeros
    return cast_all(weights, dtype);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto dtype = static_cast<at::ScalarType>(ctx->saved_data["dtype"].toInt());
    std::vector<at::Tensor> present;
    for (const at::Tensor& g : grads)
      if (g.defined()) present.push_back(g);
    const std::vector<at::Tensor> cast = cast_all(present, dtype);
    variable_list out(grads.size() + 1);  // one per weight, and none for `dtype`
    size_t next = 0;
    for (size_t i = 0; i < grads.size(); ++i)
      if (grads[i].defined()) out[i] = cast[next++];
    return out;
  }
};

}  // namespace

void set_grouped_weight_casts(bool on) { grouped_on = on; }

std::vector<at::Tensor> autocast_weights(const std::vector<at::Tensor>& weights) {
  if (!grouped_on || weights.empty() || !weights[0].defined()) return weights;
  const at::DeviceType device = weights[0].device().type();
  if (!at::autocast::is_autocast_enabled(device)) return weights;
  const at::ScalarType dtype = at::autocast::get_autocast_dtype(device);
  // What autocast casts (floating point other than float64, on its device, not yet in its dtype) that shares the
  // first such weight's device, dtype and need of a gradient (a frozen weight in a group that trains would get its
  // gradient computed for nothing); the others come back as they are, for autocast to cast as it goes.
  auto castable = [&](const at::Tensor& w) {
    return w.defined() && w.is_floating_point() && w.scalar_type() != at::kDouble && w.scalar_type() != dtype &&
           w.device().type() == device;
  };
  const auto first = std::find_if(weights.begin(), weights.end(), castable);
  if (first == weights.end()) return weights;
  std::vector<size_t> group;
  for (size_t i = 0; i < weights.size(); ++i) {
    const at::Tensor& w = weights[i];
    if (castable(w) && w.scalar_type() == first->scalar_type() && w.device() == first->device() &&
        w.requires_grad() == first->requires_grad())
      group.push_back(i);
  }
  std::vector<at::Tensor> members;
  for (size_t i : group) members.push_back(weights[i]);
  const variable_list cast = CastWeights::apply(at::TensorList(members), dtype);
  std::vector<at::Tensor> out = weights;
  for (size_t k = 0; k < group.size(); ++k) out[group[k]] = cast[k];
  return out;
}

}  // namespace bk
