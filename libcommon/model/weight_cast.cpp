#include "model/weight_cast.h"

#include "util/error.h"

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <torch/csrc/autograd/custom_function.h>

#include <fmt/ranges.h>

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

// Casts `weights` to `dtype` in one launch, into one output per run of `runs` consecutive weights: a run of one is
// its weight cast, a longer run the concatenation of its weights along dim 0, written in place by the cast (rows
// of the output as narrow views, contiguous like the weights, so the multi-tensor path still applies).
class CastWeights : public torch::autograd::Function<CastWeights> {
 public:
  static variable_list forward(AutogradContext* ctx, at::TensorList weights, at::ScalarType dtype,
                               const std::vector<int64_t>& runs) {
    std::vector<int64_t> rows;
    for (const at::Tensor& w : weights) rows.push_back(w.dim() > 0 ? w.size(0) : 1);
    ctx->saved_data["dtype"] = static_cast<int64_t>(weights[0].scalar_type());
    ctx->saved_data["runs"] = runs;
    ctx->saved_data["rows"] = rows;
    ctx->set_materialize_grads(false);  // a weight without a gradient stays without, not zeros
    variable_list outputs;
    std::vector<at::Tensor> into;
    size_t next = 0;
    for (const int64_t n : runs) {
      const at::Tensor& first = weights[next];
      if (n == 1) {
        outputs.push_back(at::empty_like(first, first.options().dtype(dtype)));
        into.push_back(outputs.back());
      } else {
        std::vector<int64_t> sizes = first.sizes().vec();
        sizes[0] = 0;
        for (int64_t k = 0; k < n; ++k) sizes[0] += rows[next + k];
        outputs.push_back(at::empty(sizes, first.options().dtype(dtype)));
        for (int64_t k = 0, row = 0; k < n; row += rows[next + k], ++k)
          into.push_back(outputs.back().narrow(0, row, rows[next + k]));
      }
      next += n;
    }
    at::_foreach_copy_(into, weights);
    return outputs;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto dtype = static_cast<at::ScalarType>(ctx->saved_data["dtype"].toInt());
    const std::vector<int64_t> runs = ctx->saved_data["runs"].toIntVector();
    const std::vector<int64_t> rows = ctx->saved_data["rows"].toIntVector();
    // Each weight's gradient: its run's gradient, or that gradient's rows where the run concatenated weights.
    std::vector<at::Tensor> per_weight(rows.size());
    size_t next = 0;
    for (size_t r = 0; r < runs.size(); ++r) {
      if (grads[r].defined()) {
        for (int64_t k = 0, row = 0; k < runs[r]; row += rows[next + k], ++k)
          per_weight[next + k] = runs[r] == 1 ? grads[r] : grads[r].narrow(0, row, rows[next + k]);
      }
      next += runs[r];
    }
    std::vector<at::Tensor> present;
    for (const at::Tensor& g : per_weight)
      if (g.defined()) present.push_back(g);
    const std::vector<at::Tensor> cast = cast_all(present, dtype);
    variable_list out(per_weight.size() + 2);  // one per weight, and none for `dtype` and `runs`
    size_t k = 0;
    for (size_t i = 0; i < per_weight.size(); ++i)
      if (per_weight[i].defined()) out[i] = cast[k++];
    return out;
  }
};

struct CastGroup {
  at::ScalarType dtype = at::ScalarType::Undefined;  // Undefined: nothing to cast (or autocast off)
  std::vector<size_t> members;                       // indices into the weights
};

// What autocast casts (floating point other than float64, on its device, not yet in its dtype) that shares the
// first such weight's device, dtype and need of a gradient (a frozen weight in a group that trains would get its
// gradient computed for nothing); the others are left as they are, for autocast to cast as it goes.
CastGroup cast_group(const std::vector<at::Tensor>& weights) {
  CastGroup group;
  if (!grouped_on || weights.empty() || !weights[0].defined()) return group;
  const at::DeviceType device = weights[0].device().type();
  if (!at::autocast::is_autocast_enabled(device)) return group;
  const at::ScalarType dtype = at::autocast::get_autocast_dtype(device);
  auto castable = [&](const at::Tensor& w) {
    return w.defined() && w.is_floating_point() && w.scalar_type() != at::kDouble && w.scalar_type() != dtype &&
           w.device().type() == device;
  };
  const auto first = std::find_if(weights.begin(), weights.end(), castable);
  if (first == weights.end()) return group;
  group.dtype = dtype;
  for (size_t i = 0; i < weights.size(); ++i) {
    const at::Tensor& w = weights[i];
    if (castable(w) && w.scalar_type() == first->scalar_type() && w.device() == first->device() &&
        w.requires_grad() == first->requires_grad())
      group.members.push_back(i);
  }
  return group;
}

// Concatenates weights along dim 0 as an op under autocast would take them: each cast first (through autocast's
// cache, once per weight per autocast region, where not cast already), so the concatenation runs in the low
// precision and is not repeated in fp32.
at::Tensor concatenate(const std::vector<at::Tensor>& parts) {
  const at::DeviceType device = parts.front().device().type();
  if (!at::autocast::is_autocast_enabled(device)) return at::cat(parts);
  const at::ScalarType dtype = at::autocast::get_autocast_dtype(device);
  std::vector<at::Tensor> cast;
  for (const auto& p : parts) cast.push_back(at::autocast::cached_cast(dtype, p, device));
  return at::cat(cast);
}

}  // namespace

void set_grouped_weight_casts(bool on) { grouped_on = on; }

std::vector<at::Tensor> autocast_weights(const std::vector<at::Tensor>& weights) {
  const CastGroup group = cast_group(weights);
  if (group.members.empty()) return weights;
  std::vector<at::Tensor> members;
  for (size_t i : group.members) members.push_back(weights[i]);
  const variable_list cast =
      CastWeights::apply(at::TensorList(members), group.dtype, std::vector<int64_t>(members.size(), 1));
  std::vector<at::Tensor> out = weights;
  for (size_t k = 0; k < group.members.size(); ++k) out[group.members[k]] = cast[k];
  return out;
}

std::vector<at::Tensor> autocast_concatenated(const std::vector<at::Tensor>& weights,
                                              const std::vector<int64_t>& run_lengths) {
  size_t covered = 0;
  for (const int64_t n : run_lengths) covered += n > 0 ? static_cast<size_t>(n) : weights.size() + 1;
  if (covered != weights.size())
    fail("autocast_concatenated: runs of {} do not cover {} weights", fmt::join(run_lengths, "+"), weights.size());
  bool stackable = true;  // every run's weights share their sizes past dim 0
  for (size_t next = 0; const int64_t n : run_lengths) {
    for (int64_t k = 1; k < n; ++k)
      stackable = stackable && weights[next].dim() > 0 && weights[next + k].dim() == weights[next].dim() &&
                  weights[next + k].sizes().slice(1) == weights[next].sizes().slice(1);
    next += static_cast<size_t>(n);
  }
  const CastGroup group = cast_group(weights);
  // All cast in one launch, into the concatenations.
  if (stackable && !group.members.empty() && group.members.size() == weights.size())
    return CastWeights::apply(at::TensorList(weights), group.dtype, run_lengths);
  const std::vector<at::Tensor> cast = autocast_weights(weights);
  std::vector<at::Tensor> out;
  for (size_t next = 0; const int64_t n : run_lengths) {
    const std::vector<at::Tensor> run(cast.begin() + next, cast.begin() + next + n);
    out.push_back(n == 1 ? run[0] : concatenate(run));
    next += static_cast<size_t>(n);
  }
  return out;
}

}  // namespace bk
