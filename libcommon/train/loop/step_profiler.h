// BERTKIT_PROFILE=FILE[:FIRST[:COUNT]]: torch's profiler (Kineto: host operators and, on CUDA, every kernel and
// copy) over COUNT steps from step FIRST (defaults 10 and 3, after the warm-up steps), saved as a Chrome trace
// (chrome://tracing, Perfetto; bench/profile_summary.py totals it). Other ranks write FILE.rankN. Kept out of the
// loop's translation unit: the profiler's headers are large.
#pragma once

#include <ATen/core/TensorBody.h>

#include <cstdint>
#include <memory>
#include <string>

namespace bk {

class StepProfiler {
 public:
  // Null when BERTKIT_PROFILE is unset or empty; a malformed value is a usage error.
  static std::unique_ptr<StepProfiler> from_env(const at::Device& device, int rank);
  ~StepProfiler();

  void before_step(int64_t step);  // step: the one about to run (1-based)
  void after_step(int64_t step);   // waits for the device and saves once the window's last step is queued

 private:
  StepProfiler(std::string path, int64_t first, int64_t count, const at::Device& device);
  std::string path_;
  int64_t first_, count_;
  at::Device device_;
  bool active_ = false;
};

}  // namespace bk
