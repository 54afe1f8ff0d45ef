// The precision a forward pass computes in (--precision), its autocast, and the device's peak for MFU.
#pragma once

#include "device/precision_kind.h"

#include <ATen/ATen.h>

#include <string>

namespace bk {

// bk::UsageError for another name, and for fp16 off CUDA.
Precision parse_precision(const std::string& name, const at::Device& device);
// bk::UsageError for fp16 off CUDA (fp16's loss scaling is CUDA's).
void check_precision(Precision precision, const at::Device& device);

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
