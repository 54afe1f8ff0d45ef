#include "train/optim/schedule.h"

#include "util/error.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace bk {

namespace {

// The share of the peak rate at decay progress q in [0, 1] (0: the decay's start, 1: its end).
double decay_shape(LrDecay decay, double q, double degree) {
  switch (decay) {
    case LrDecay::poly: return std::pow(1 - q, degree);
    case LrDecay::linear: return 1 - q;
    case LrDecay::cosine: return (1 + std::cos(std::numbers::pi * q)) / 2;
    case LrDecay::one_minus_sqrt: return 1 - std::sqrt(q);
    case LrDecay::constant: return 1;
  }
  return 0;
}

}  // namespace

double LrSchedule::at(int64_t step) const {
  const double progress = std::clamp(static_cast<double>(step) / static_cast<double>(total_steps), 0.0, 1.0);
  if (progress < warmup_proportion) return base_lr * progress / warmup_proportion;
  if (decay == LrDecay::constant) return base_lr;
  if (decay_steps > 0) {
    const double q = static_cast<double>(step - stable_until()) / static_cast<double>(decay_steps);
    return q <= 0 ? base_lr : base_lr * decay_shape(decay, std::min(q, 1.0), degree);
  }
  if (decay == LrDecay::poly) return base_lr * std::pow(1 - progress, degree);  // NVIDIA's: p, not q
  if (warmup_proportion >= 1) return 0.0;
  // NVIDIA's LinearWarmUpScheduler's arithmetic, (1 - p) / (1 - w): 1 - q rounds otherwise in the last bits.
  if (decay == LrDecay::linear) return base_lr * std::max(0.0, (1 - progress) / (1 - warmup_proportion));
  return base_lr * decay_shape(decay, (progress - warmup_proportion) / (1 - warmup_proportion), degree);
}

void LrSchedule::validate() const {
  if (total_steps <= 0) fail("learning-rate schedule: total steps must be positive, got {}", total_steps);
  if (!(base_lr >= 0)) fail("learning-rate schedule: the learning rate must be non-negative, got {}", base_lr);
  if (!(warmup_proportion >= 0 && warmup_proportion <= 1))
    fail("learning-rate schedule: the warm-up proportion must lie in [0, 1], got {}", warmup_proportion);
  if (!(degree > 0)) fail("learning-rate schedule: the decay degree must be positive, got {}", degree);
  if (decay == LrDecay::constant && decay_steps > 0)
    fail("learning-rate schedule: a constant rate has no decay phase ({} decay steps)", decay_steps);
  if (decay_steps < 0 || decay_steps > total_steps)
    fail("learning-rate schedule: {} decay steps in a run of {}", decay_steps, total_steps);
  const auto warmup_steps =
      static_cast<int64_t>(std::ceil(warmup_proportion * static_cast<double>(total_steps) - 1e-9));
  if (decay_steps > 0 && warmup_steps > stable_until())
    fail("learning-rate schedule: the warm-up ({} steps) runs into the decay phase (the last {} of {} steps)",
         warmup_steps, decay_steps, total_steps);
}

double lr_at(int64_t step, double base_lr, int64_t total_steps, double warmup_proportion, double degree) {
  return LrSchedule{base_lr, total_steps, warmup_proportion, degree, LrDecay::poly}.at(step);
}

}  // namespace bk
