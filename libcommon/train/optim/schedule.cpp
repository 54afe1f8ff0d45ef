#include "train/optim/schedule.h"

#include "util/error.h"

#include <algorithm>
#include <cmath>

namespace bk {

double LrSchedule::at(int64_t step) const {
  const double progress = std::clamp(static_cast<double>(step) / static_cast<double>(total_steps), 0.0, 1.0);
  if (progress < warmup_proportion) return base_lr * progress / warmup_proportion;
  if (decay == LrDecay::linear)
    return warmup_proportion >= 1 ? 0.0 : base_lr * std::max(0.0, (1 - progress) / (1 - warmup_proportion));
  return base_lr * std::pow(1 - progress, degree);
}

void LrSchedule::validate() const {
  if (total_steps <= 0) fail("learning-rate schedule: total steps must be positive, got {}", total_steps);
  if (!(base_lr >= 0)) fail("learning-rate schedule: the learning rate must be non-negative, got {}", base_lr);
  if (!(warmup_proportion >= 0 && warmup_proportion <= 1))
    fail("learning-rate schedule: the warm-up proportion must lie in [0, 1], got {}", warmup_proportion);
  if (!(degree > 0)) fail("learning-rate schedule: the decay degree must be positive, got {}", degree);
}

double lr_at(int64_t step, double base_lr, int64_t total_steps, double warmup_proportion, double degree) {
  return LrSchedule{base_lr, total_steps, warmup_proportion, degree, LrDecay::poly}.at(step);
}


}  // namespace bk
