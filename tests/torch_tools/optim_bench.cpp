// Bench helper (bench/optimizer.sh): optimizer steps on the parameters of a BERT model built from a config, with
// random gradients. Prints one JSON line per optimizer: milliseconds per step (best of the timed steps), the
// resident memory the optimizer holds (its state and work buffers, measured over its construction and first step)
// and the peak resident memory the steps added beyond the parameters, gradients and optimizer state.
//
//   optim_bench CONFIG.json STEPS KIND...     (KIND: lamb, lamb-fused, adamw, adamw-fused, stableadamw)
#include "cli/run_tool.h"
#include "model_config/bert_config.h"
#include "model/bert.h"
#include "train/optim/make_optimizer.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <sys/resource.h>

namespace {

// Resident memory now and at its peak, in MB, from /proc/self/status (VmHWM can be reset through clear_refs).
double status_mb(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key, 0) == 0) return std::stod(line.substr(std::string(key).size())) / 1024.0;
  return 0;
}

void reset_peak() { std::ofstream("/proc/self/clear_refs") << "5"; }

int bench(int argc, char** argv) {
  if (argc < 4) bk::usage_fail("usage: optim_bench CONFIG.json STEPS KIND...");
  const bk::BertConfig config = bk::BertConfig::load(argv[1]);
  const int steps = std::stoi(argv[2]);
  at::NoGradGuard no_grad;
  for (int k = 3; k < argc; ++k) {
    const std::string kind = argv[k];
    at::manual_seed(1);
    bk::BertForPreTraining model(config);
    bk::NamedTensors params;
    int64_t numel = 0;
    for (const auto& p : model.named_parameter_list()) {
      p.tensor.mutable_grad() = at::randn_like(p.tensor) * 1e-3;
      params.emplace_back(p.name, p.tensor);
      numel += p.tensor.numel();
    }
    const bk::OptimizerKind optimizer_kind = kind.starts_with("lamb")     ? bk::OptimizerKind::lamb
                                             : kind.starts_with("stable") ? bk::OptimizerKind::stableadamw
                                                                          : bk::OptimizerKind::adamw;
    bk::OptimizerConfig oc = bk::training_optimizer_config(optimizer_kind);  // as bert-train steps it
    oc.fused = kind.ends_with("-fused");
    if (optimizer_kind == bk::OptimizerKind::stableadamw) oc.max_grad_norm = 0;  // bert-train's default for it
    const double before = status_mb("VmRSS:");
    auto optimizer = bk::make_optimizer(params, oc);
    optimizer->step(1e-4);  // first step: allocations settle
    reset_peak();
    const double base = status_mb("VmRSS:");
    double best = 1e30;
    for (int s = 0; s < steps; ++s) {
      const auto start = std::chrono::steady_clock::now();
      optimizer->step(1e-4);
      best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    std::printf("{\"optimizer\": \"%s\", \"parameters\": %lld, \"ms_per_step\": %.1f, \"state_mb\": %.1f, "
                "\"peak_extra_mb\": %.1f}\n",
                kind.c_str(), static_cast<long long>(numel), best, base - before, status_mb("VmHWM:") - base);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return bk::run_tool("optim_bench", argc, argv, bench); }
