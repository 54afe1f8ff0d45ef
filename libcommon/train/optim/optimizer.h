// The training optimizers: NVLAMB (as NVIDIA's BERT trains with apex's FusedLAMB), AdamW (as torch.optim.AdamW)
// and StableAdamW (as torch-optimi's, which ModernBERT trains with), over named parameters, with their state
// exported as named tensors for checkpoints.
//
// They keep their moments in two flat float32 buffers (one element per parameter element, parameters in the
// order given) and run each step as a handful of whole-buffer kernels plus multi-tensor (at::_foreach_*)
// launches; StableAdamW alone adds two kernels per parameter (each tensor's own rate). A step does not synchronise
// with the device unless its caller reads the returned gradient norm as a double.
//
// LAMB step t (t counts the steps taken, from 1), lr given by the caller, all gradients g, parameters w:
//   n     = ||concat(all g)||                         (global norm, returned)
//   g'    = g / max(1, n / max_grad_norm)              (pre-normalisation; skipped when max_grad_norm <= 0)
//   m     = beta1 m + (1 - beta1) g'                   ((1 - beta1) becomes 1 without grad_averaging)
//   v     = beta2 v + (1 - beta2) g'^2
//   u     = (m / (1 - beta1^t)) / (sqrt(v / (1 - beta2^t)) + eps) + wd w
//   r     = ||w|| / ||u|| per tensor, 1 where either norm is 0
//   w    -= lr r u
// wd is weight_decay for every parameter except biases and LayerNorm parameters (decays_weight below), which get
// wd = 0. As in apex (use_nvlamb=False, what NVIDIA's BERT scripts use), parameters with wd = 0 take a plain
// Adam step (r = 1); trust_ratio_all = true applies r to them too (apex's use_nvlamb=True).
//
// AdamW step t, as torch.optim.AdamW, after clipping the gradients as torch.nn.utils.clip_grad_norm_
// (g *= min(1, max_grad_norm / (n + 1e-6)); skipped when max_grad_norm <= 0):
//   w *= 1 - lr wd;  m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2
//   w -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
//
// StableAdamW step t, as torch-optimi's StableAdamW (Wortsman et al. 2023): AdamW whose moments are kept debiased
// and whose rate is cut per tensor where the gradient is large for its second moment (AdaFactor's update
// clipping), so it needs no gradient clipping (clip_grad_norm's still applies first when max_grad_norm > 0):
//   m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2;  m_hat = m / (1 - beta1^t), v_hat likewise
//   rate = lr / max(1, sqrt(mean over the tensor of g^2 / max(v_hat, eps^2)))   (over its counted_rows)
//   w *= 1 - rate wd     (fully_decoupled_decay: 1 - rate / max_lr wd)
//   w -= rate m_hat / (sqrt(v_hat) + eps)
// (optimi keeps m_hat and v_hat themselves, updated by "debiased betas": the same values.)
//
// A parameter without a gradient (grad undefined) is stepped as if its gradient were zero.
#pragma once

#include "train/optim/optimizer_kind.h"

#include <ATen/Tensor.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bk {

struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::lamb;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-6;
  double weight_decay = 0.01;
  double max_grad_norm = 1.0;    // LAMB: pre-normalisation threshold; AdamW: clipping threshold; <= 0: off
  bool grad_averaging = true;    // LAMB: m takes (1 - beta1) g (apex's default); false: m takes g
  bool trust_ratio_all = false;  // LAMB: trust ratio also for parameters without weight decay (apex use_nvlamb)
  // StableAdamW: decay by rate / max_lr wd instead of rate wd (optimi's decouple_lr), max_lr the schedule's peak:
  // the decay a step takes then follows the schedule's shape but not the size of the peak rate.
  bool fully_decoupled_decay = false;
  double max_lr = 0;
  // StableAdamW: each parameter's leading rows that its mean counts, in order (the padded vocabulary's rows are no
  // part of the model, whose tensor optimi averages over); empty: every row.
  std::vector<int64_t> counted_rows;
  // The moments and the Adam direction by torch's fused kernels (one pass over each parameter's state) instead of
  // multi-tensor passes over the flat buffers: AdamW's whole update by _fused_adamw_ (as
  // torch.optim.AdamW(fused=True)); LAMB's m, v and m_hat / (sqrt(v_hat) + eps) by _fused_adam_ (not with
  // grad_averaging = false, which Adam's kernel cannot express: that takes the passes). Both read the gradients
  // where backward left them, never gathered into a buffer. StableAdamW always takes AdamW's fused kernel (with
  // each tensor's rate) and ignores it. The trainer sets it.
  bool fused = false;
};

using NamedTensors = std::vector<std::pair<std::string, at::Tensor>>;

// Whether a parameter takes weight decay: all but biases (a name ending in ".bias", or "bias") and LayerNorm
// parameters (a name containing "LayerNorm"), as NVIDIA's and Google's BERT scripts decide it for HF-style names,
// and ModernBERT's norms (a name ending in "norm.weight"), as its recipe leaves biases and norms undecayed.
bool decays_weight(std::string_view name);

class Optimizer {
 public:
  virtual ~Optimizer() = default;

  // One update with learning rate lr from the parameters' current gradients; returns the global L2 norm of the
  // gradients as they came in (before pre-normalisation or clipping). step() reads it back from the device;
  // step_async() returns it as a 0-dim float32 tensor on the parameters' device without waiting.
  // With config.fused the gradients are left divided by the clipping (pre-normalisation) divisor, as torch's fused
  // kernels store them; the multi-tensor passes leave them as they were.
  double step(double lr);
  at::Tensor step_async(double lr);

  // The two halves of a step, for a step captured in a CUDA graph (train/loop/graphed_step.h): prepare_step, on
  // the host before each replay, counts the step and copies its learning rate and bias corrections to the device
  // without waiting; apply_step is the device work alone. A capturable() optimizer's apply_step reads those
  // scalars from the device, so one captured apply_step is right at every replay; the others read the host's.
  void prepare_step(double lr);
  at::Tensor apply_step();
  virtual bool capturable() const { return false; }

  // Sets every parameter's gradient to zero (in one multi-tensor launch), keeping the tensors where they are: what a
  // step captured in a CUDA graph needs, whose replays write the gradients to the addresses of the capture.
  void zero_grad();
  // Drops every parameter's gradient, as torch's zero_grad(set_to_none=True) does: the next backward then hands
  // each gradient over as computed instead of adding it to zeros, which saves the zeroing pass and an addition
  // pass over all gradients per step (the accumulation of further micro-batches still adds).
  void release_grads();
  // Every parameter's gradient, in order (undefined where a parameter has none): what LossScaler::unscale takes.
  std::vector<at::Tensor> grads() const;

  // Steps taken so far (what bias correction counts; NVIDIA's schedule reads it as steps() + 1).
  int64_t steps() const { return steps_; }
  const OptimizerConfig& config() const { return config_; }
  const NamedTensors& params() const { return params_; }

  // The state as named tensors: "<param>.exp_avg" and "<param>.exp_avg_sq" (float32, the parameter's shape; for
  // ACClip the momentum and the clipping level, for MADGRAD the sum of gradients and of their squares, MADGRAD
  // adding "<param>.x0", the initial point),
  // views of the optimizer's buffers: clone or copy them before the next step if they must be kept) and
  // "step" (int64, 0-dim, on the CPU). load_state copies such a map back in (any device); it must hold every
  // one of these names with the right shapes, and names that end in ".exp_avg" or ".exp_avg_sq" for a parameter
  // it does not know are errors; other names (a loss scaler's, say) are left alone. Resuming is bit-exact.
  std::map<std::string, at::Tensor> state() const;
  void load_state(const std::map<std::string, at::Tensor>& state);

 protected:
  // The flat work buffers a kind uses (each the size of the model: 1.3 GB of float32 at BERT-large): update_
  // and its views, scratch_.
  enum Buffers : unsigned { kNoBuffers = 0, kUpdateBuffer = 1, kScratchBuffer = 2, kBothBuffers = 3 };
  Optimizer(NamedTensors named_params, const OptimizerConfig& config, Buffers buffers);

  // The update itself (apply_step, without autograd recording).
  virtual at::Tensor apply_update() = 0;

  // The gradients gathered into update_ (zeros for a parameter without one); returns their global norm.
  at::Tensor gather_grads();
  // Every parameter's gradient where it is (a zero tensor where a parameter has none), shapes checked: what the
  // fused kernels read in place.
  std::vector<at::Tensor> gradients_in_place() const;
  // A third state buffer saved as "<param>.x0" (MADGRAD's initial point), set to the parameters' current values.
  void add_initial_point();
  const std::vector<at::Tensor>& x0_views() const { return x0_views_; }
  // update_ (and the moments) cut into one view per parameter, shaped like it.
  const std::vector<at::Tensor>& update_views() const { return update_views_; }
  const std::vector<at::Tensor>& exp_avg_views() const { return exp_avg_views_; }
  const std::vector<at::Tensor>& exp_avg_sq_views() const { return exp_avg_sq_views_; }

  OptimizerConfig config_;
  NamedTensors params_;
  std::vector<at::Tensor> param_list_;       // the parameters alone, in order
  std::vector<bool> decays_;                 // decays_weight(name) per parameter
  std::vector<at::Tensor> decayed_params_;   // the parameters that take weight decay
  std::vector<at::Tensor> decayed_updates_;  // their views of update_
  at::Tensor exp_avg_, exp_avg_sq_;          // flat float32 [numel_]
  at::Tensor update_, scratch_;              // flat float32 work buffers [numel_], where the kind asked for them
  int64_t numel_ = 0;
  int64_t steps_ = 0;
  double lr_ = 0;  // the step's learning rate, as prepare_step got it
  // The step's scalars on the parameters' device (0-dim float32 views of one buffer prepare_step fills): lr,
  // 1 - beta1^t, sqrt(1 - beta2^t) and t.
  at::Tensor lr_on_device_, correction1_on_device_, sqrt_correction2_on_device_, step_on_device_;

 private:
  at::Tensor checked_grad(size_t i) const;

  std::vector<at::Tensor> update_views_;
  std::vector<at::Tensor> exp_avg_views_, exp_avg_sq_views_;
  at::Tensor step_scalars_;  // float32 [4]: what the *_on_device_ views show
  at::Tensor x0_;  // flat, only with add_initial_point()
  std::vector<at::Tensor> x0_views_;
};

// Clips tensors (gradients) in place to a global L2 norm of at most max_norm as torch.nn.utils.clip_grad_norm_
// does (scale min(1, max_norm / (norm + 1e-6))), in multi-tensor launches; returns the norm before clipping as a
// 0-dim float32 tensor (no device synchronisation). Undefined tensors are skipped.
at::Tensor clip_grad_norm(const std::vector<at::Tensor>& tensors, double max_norm);

// The L2 norm of defined tensors taken together, as a 0-dim float32 tensor, from one multi-tensor norm launch (no
// device synchronisation, nothing the size of the tensors allocated).
at::Tensor global_norm(const std::vector<at::Tensor>& tensors);

}  // namespace bk
