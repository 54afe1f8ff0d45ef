// Dynamic loss scaling for fp16 training, with torch.cuda.amp.GradScaler's rule (apex's dynamic scaler is the
// same with other defaults):
//   the loss is multiplied by the scale before backward; the gradients are divided by it before the optimizer
//   step and checked for inf/NaN. A step whose gradients are not all finite is skipped (the optimizer is not
//   called) and the scale is multiplied by backoff_factor; after growth_interval finite steps in a row it is
//   multiplied by growth_factor (unless that overflows float32).
// Training cannot go on once the scale falls below min_scale: update() then throws bk::Error("loss scale
// collapsed to X after N consecutive overflowing steps").
//
// The scale and the growth tracker live on the training device (float32 [1], int32 [1]) and are updated there
// by at::_amp_update_scale_; unscale() synchronises once per step to learn whether to skip. Works on CPU
// tensors as well. A disabled scaler (bf16 or fp32 training) scales by 1 and never skips.
//
// Use per optimizer step:
//   scaler.scale_loss(loss).backward();            (every micro-batch)
//   if (scaler.unscale(grads)) optimizer.step(lr);
//   scaler.update();
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace bk {

struct LossScalerConfig {
  bool enabled = true;
  double init_scale = 65536.0;  // 2^16, GradScaler's default (NVIDIA's BERT starts at 2^20, apex's at 2^16)
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int64_t growth_interval = 2000;
  double min_scale = 1.0;

  // A fixed scale (NVIDIA's --loss_scale S, apex's static scaler): the scale never moves; a step whose gradients
  // overflow is still skipped.
  bool dynamic = true;
  static LossScalerConfig fixed(double scale) {
    LossScalerConfig c;
    c.init_scale = scale;
    c.dynamic = false;
    return c;
  }
};

class LossScaler {
 public:
  LossScaler(const LossScalerConfig& config, const at::Device& device);

  bool enabled() const { return config_.enabled; }
  // loss * scale (loss itself when disabled).
  at::Tensor scale_loss(const at::Tensor& loss) const;
  // Divides the tensors (gradients; undefined ones are skipped) by the scale in place and returns whether all
  // of them are finite. Call once per optimizer step, after the last backward. Disabled: returns true, no work.
  bool unscale(const std::vector<at::Tensor>& grads);
  // Moves the scale after unscale(); throws bk::Error when it collapses below min_scale.
  void update();

  double scale() const;  // reads the device value (1 without a read when disabled)
  int64_t skipped_steps() const { return skipped_; }
  int64_t consecutive_overflows() const { return consecutive_; }

  // "loss_scale.scale" (float32 [1]), "loss_scale.growth_tracker" (int32 [1]), "loss_scale.skipped" (int64
  // 0-dim), all on the CPU; load_state reads them back (other names are ignored; missing ones are an error).
  std::map<std::string, at::Tensor> state() const;
  void load_state(const std::map<std::string, at::Tensor>& state);

 private:
  LossScalerConfig config_;
  at::Tensor scale_;           // float32 [1]
  at::Tensor growth_tracker_;  // int32 [1]
  at::Tensor found_inf_;       // float32 [1], set by unscale
  bool unscaled_ = false;
  bool last_finite_ = true;
  int64_t skipped_ = 0;
  int64_t consecutive_ = 0;
};

// Throws bk::Error("loss is NaN at step N") (or "... infinite ...") unless loss is finite.
void check_loss_finite(double loss, int64_t step);

}  // namespace bk
