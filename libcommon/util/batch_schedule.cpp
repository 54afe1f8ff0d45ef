#include "util/batch_schedule.h"

#include <algorithm>
#include <utility>

namespace bk {

namespace {

// sum over i in [0, n) of floor((a i + b) / m), for a, b >= 0 and m > 0, in O(log) (the Euclid-like reduction).
int64_t floor_sum(int64_t n, int64_t m, int64_t a, int64_t b) {
  int64_t sum = 0;
  while (true) {
    if (a >= m) {
      sum += (n - 1) * n / 2 * (a / m);
      a %= m;
    }
    if (b >= m) {
      sum += n * (b / m);
      b %= m;
    }
    const int64_t y_max = a * n + b;
    if (y_max < m) return sum;
    n = y_max / m;
    b = y_max % m;
    std::swap(m, a);
  }
}

}  // namespace

int64_t BatchSchedule::micro_batches_at(int64_t step) const {
  if (warmup_steps <= 0 || step > warmup_steps) return full;
  return start + (full - start) * (std::max<int64_t>(step, 1) - 1) / warmup_steps;
}

int64_t BatchSchedule::micro_batches_through(int64_t step) const {
  if (step <= 0) return 0;
  if (warmup_steps <= 0) return full * step;
  const int64_t ramp = std::min(step, warmup_steps);
  const int64_t during = start * ramp + floor_sum(ramp, warmup_steps, full - start, 0);
  return during + full * (step - ramp);
}

int64_t BatchSchedule::step_of(int64_t index) const {
  if (warmup_steps <= 0) return index / full + 1;
  const int64_t ramp_total = micro_batches_through(warmup_steps);
  if (index >= ramp_total) return warmup_steps + (index - ramp_total) / full + 1;
  int64_t lo = 1, hi = warmup_steps;  // the first step whose cumulative count exceeds index
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (micro_batches_through(mid) > index) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

}  // namespace bk
