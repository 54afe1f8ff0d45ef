// The learning-rate schedules of NVIDIA's BERT scripts (schedulers.py): linear warm-up, then polynomial
// (PolyWarmUpScheduler, the default) or linear (LinearWarmUpScheduler) decay to zero at total_steps.
//
// `step` is the number of the update about to be applied, counted from 1 (NVIDIA's scheduler reads the
// optimizer's step count + 1, so a step skipped for a loss-scale overflow does not advance the schedule).
// With p = step / total_steps and w = warmup_proportion:
//   p < w:             lr = base_lr * p / w
//   otherwise, poly:   lr = base_lr * (1 - p)^degree             (degree 0.5 by default)
//   otherwise, linear: lr = base_lr * max(0, (1 - p) / (1 - w))
// p is clamped to [0, 1], so the rate is 0 from total_steps on. At the end of warm-up poly drops from nearly
// base_lr to base_lr * (1 - w)^degree, exactly as NVIDIA's does: the two pieces do not meet.
#pragma once

#include "util/choices.h"

#include <cstdint>
#include <string>

namespace bk {

enum class LrDecay { poly, linear };
inline constexpr Choice<LrDecay> kLrDecays[] = {{"poly", LrDecay::poly}, {"linear", LrDecay::linear}};

struct LrSchedule {
  double base_lr = 1e-3;
  int64_t total_steps = 1;
  double warmup_proportion = 0.01;
  double degree = 0.5;  // poly only
  LrDecay decay = LrDecay::poly;

  double at(int64_t step) const;
  // Checks total_steps > 0, base_lr >= 0, warmup_proportion in [0, 1], degree > 0; throws bk::Error.
  void validate() const;
};

// LrSchedule{base_lr, total_steps, warmup_proportion, degree, LrDecay::poly}.at(step).
double lr_at(int64_t step, double base_lr, int64_t total_steps, double warmup_proportion, double degree = 0.5);

}  // namespace bk
