// Throughput over the timed steps of a run (those after --throughput-warmup-steps): sequences, tokens and model
// FLOPs per second, summed over all ranks. Torch-free.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>

namespace bk {

struct Throughput {
  int64_t steps = 0, sequences = 0, tokens = 0;
  double seconds = 0, flops = 0;

  void add(int64_t step_sequences, int64_t step_tokens, double step_seconds, double step_flops) {
    ++steps;
    sequences += step_sequences;
    tokens += step_tokens;
    seconds += step_seconds;
    flops += step_flops;
  }

  // "12.3 seq/s, 4567 tokens/s over 10 timed steps[, MFU 41.0%]"; peak: FLOP/s of all devices (0 = unknown).
  std::string summary(double peak) const {
    std::string text = fmt::format("{:.1f} seq/s, {:.0f} tokens/s over {} timed steps", sequences / seconds,
                                   static_cast<double>(tokens) / seconds, steps);
    if (peak > 0) text += fmt::format(", MFU {:.1f}%", 100 * flops / seconds / peak);
    return text;
  }
};

}  // namespace bk
