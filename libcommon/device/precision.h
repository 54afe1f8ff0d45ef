// The precision a forward pass computes in (--precision), its autocast, and the device's peak for MFU.
#pragma once

#include "device/precision_kind.h"

#include <ATen/ATen.h>

#include <optional>
#include <string>

namespace bk {

// --precision on `device`: an asked precision is obeyed (fp16 off CUDA is a bk::UsageError: its loss scaling is
// CUDA's; bf16 on a CPU without native bf16 runs, with a warning, when `warn`, that it is emulated and slower);
// auto (nullopt) is bf16 where the device multiplies in bf16 natively (cpu_native_bf16, a GPU of compute
// capability 8.0 or later), else fp32.
ChosenPrecision choose_precision(std::optional<Precision> asked, const at::Device& device, bool warn = true);

// The CPU's native bf16 multiply as LibTorch's oneDNN may use it: "AMX-BF16", "AVX512-BF16", or "" (none, or
// oneDNN's own ONEDNN_MAX_CPU_ISA caps it below them: then oneDNN emulates bf16).
std::string cpu_native_bf16();

// The dtype the model's matmuls compute in under `precision`.
at::ScalarType compute_dtype(Precision precision);

// Autocast for the forward pass (bf16 and fp16); restores the previous state when destroyed.
class AutocastScope {
 public:
  AutocastScope(Precision precision, const at::Device& device);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool active_ = false;
  at::DeviceType device_type_;
  bool was_enabled_ = false;
  at::ScalarType previous_dtype_;
};

// Peak dense matmul FLOP/s of the device for MFU (0 when unknown): --peak-tflops, else a table of known GPUs.
double peak_flops(const at::Device& device, Precision precision, double peak_tflops_flag);

}  // namespace bk
