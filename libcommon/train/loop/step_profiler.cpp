#include "train/loop/step_profiler.h"

#include "util/tool_name.h"
#include "util/error.h"

#include <c10/core/impl/VirtualGuardImpl.h>
#include <torch/csrc/autograd/profiler_kineto.h>

#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

namespace bk {

namespace {

namespace prof = torch::autograd::profiler;

int64_t parse_count(const std::string& text, const std::string& value) {
  size_t used = 0;
  long long n = 0;
  try {
    n = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || n < 1)
    usage_fail("BERTKIT_PROFILE must be FILE[:FIRST[:COUNT]] with positive counts, got '{}'", value);
  return n;
}

}  // namespace

std::unique_ptr<StepProfiler> StepProfiler::from_env(const at::Device& device, int rank) {
  const char* env = std::getenv("BERTKIT_PROFILE");
  if (env == nullptr || *env == '\0') return nullptr;
  const std::string value = env;
  std::string path = value;
  int64_t first = 10, count = 3;
  // FILE may hold colons itself: only trailing numeric fields are FIRST and COUNT.
  const auto numeric = [](const std::string& s) {
    return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
  };
  size_t colon = path.rfind(':');
  if (colon != std::string::npos && numeric(path.substr(colon + 1))) {
    const std::string last = path.substr(colon + 1);
    path.resize(colon);
    colon = path.rfind(':');
    if (colon != std::string::npos && numeric(path.substr(colon + 1))) {
      first = parse_count(path.substr(colon + 1), value);
      count = parse_count(last, value);
      path.resize(colon);
    } else {
      first = parse_count(last, value);
    }
  }
  if (path.empty()) usage_fail("BERTKIT_PROFILE must be FILE[:FIRST[:COUNT]], got '{}'", value);
  if (rank > 0) path += ".rank" + std::to_string(rank);
  return std::unique_ptr<StepProfiler>(new StepProfiler(path, first, count, device));
}

StepProfiler::StepProfiler(std::string path, int64_t first, int64_t count, const at::Device& device)
    : path_(std::move(path)), first_(first), count_(count), device_(device) {}

StepProfiler::~StepProfiler() {
  if (!active_) return;
  prof::disableProfiler();  // a run that ended inside the window
  std::fprintf(stderr, "%s: the run ended before the profiled steps did; %s not written\n", tool_name().c_str(),
               path_.c_str());
}

void StepProfiler::before_step(int64_t step) {
  if (step != first_ || active_) return;
  std::set<torch::profiler::impl::ActivityType> activities{torch::profiler::impl::ActivityType::CPU};
  if (device_.is_cuda()) activities.insert(torch::profiler::impl::ActivityType::CUDA);
  const torch::profiler::impl::ProfilerConfig config(torch::profiler::impl::ProfilerState::KINETO,
                                                     /*report_input_shapes=*/true);
  prof::prepareProfiler(config, activities);
  prof::enableProfiler(config, activities);
  active_ = true;
}

void StepProfiler::after_step(int64_t step) {
  if (!active_ || step != first_ + count_ - 1) return;
  // The steps' kernels are queued, not done: wait for them so the trace holds all of them.
  if (device_.is_cuda()) c10::impl::VirtualGuardImpl(device_.type()).synchronizeDevice(device_.index());
  const auto result = prof::disableProfiler();
  active_ = false;
  // Written beside its final name and renamed, so a trace file is always whole.
  const std::string partial = path_ + ".partial";
  result->save(partial);
  if (std::rename(partial.c_str(), path_.c_str()) != 0) fail("{}: cannot write the profile", path_);
  std::fprintf(stderr, "%s: steps %lld-%lld profiled to %s\n", tool_name().c_str(), static_cast<long long>(first_),
               static_cast<long long>(step), path_.c_str());
}

}  // namespace bk
