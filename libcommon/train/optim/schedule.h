// The learning-rate schedules: linear warm-up, then a decay to zero at total_steps, over the whole run after the
// warm-up (NVIDIA's BERT scripts, schedulers.py) or over its last decay_steps only, the rate holding at its peak in
// between (warm-up-stable-decay, "trapezoidal": Hägele et al. 2024, as ModernBERT trains).
//
// `step` is the number of the update about to be applied, counted from 1 (NVIDIA's scheduler reads the
// optimizer's step count + 1, so a step skipped for a loss-scale overflow does not advance the schedule).
// With p = step / total_steps (clamped to [0, 1]) and w = warmup_proportion:
//   p < w:              lr = base_lr * p / w
// then, without decay_steps, q = (p - w) / (1 - w):
//   poly:               lr = base_lr * (1 - p)^degree        (NVIDIA's PolyWarmUpScheduler; degree 0.5 by default)
//   linear:             lr = base_lr * (1 - q)               (NVIDIA's LinearWarmUpScheduler, as (1 - p) / (1 - w))
//   cosine:             lr = base_lr * (1 + cos(pi q)) / 2   (HF's get_cosine_schedule_with_warmup)
//   1-sqrt:             lr = base_lr * (1 - sqrt(q))
//   constant:           lr = base_lr, to the end (a stable phase run on its own, its decay a later run)
// with decay_steps D > 0: lr = base_lr until step total_steps - D, then q = (step - (total_steps - D)) / D and the
// same shapes in q, poly as (1 - q)^degree.
// Except constant's, the rate is 0 from total_steps on. At the end of warm-up NVIDIA's poly drops from nearly
// base_lr to base_lr * (1 - w)^degree, as NVIDIA's does: the two pieces do not meet.
#pragma once

#include "util/choices.h"

#include <cstdint>
#include <string>

namespace bk {

enum class LrDecay { poly, linear, cosine, one_minus_sqrt, constant };
inline constexpr Choice<LrDecay> kLrDecays[] = {{"poly", LrDecay::poly},
                                                {"linear", LrDecay::linear},
                                                {"cosine", LrDecay::cosine},
                                                {"1-sqrt", LrDecay::one_minus_sqrt},
                                                {"constant", LrDecay::constant}};

struct LrSchedule {
  double base_lr = 1e-3;
  int64_t total_steps = 1;
  double warmup_proportion = 0.01;
  double degree = 0.5;  // poly only
  LrDecay decay = LrDecay::poly;
  int64_t decay_steps = 0;  // > 0: the decay takes the last decay_steps steps only

  double at(int64_t step) const;
  // The last step at the peak before the decay phase (total_steps - decay_steps); 0 without decay_steps.
  int64_t stable_until() const { return decay_steps > 0 ? total_steps - decay_steps : 0; }
  // Checks total_steps > 0, base_lr >= 0, warmup_proportion in [0, 1], degree > 0, and that a decay phase fits
  // after the warm-up; throws bk::Error.
  void validate() const;
};

// LrSchedule{base_lr, total_steps, warmup_proportion, degree, LrDecay::poly}.at(step).
double lr_at(int64_t step, double base_lr, int64_t total_steps, double warmup_proportion, double degree = 0.5);

}  // namespace bk
