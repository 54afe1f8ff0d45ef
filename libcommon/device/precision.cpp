#include "device/precision.h"

#include "util/error.h"

#include <ATen/autocast_mode.h>
#include <ATen/cuda/CUDAContext.h>

namespace bk {

Precision parse_precision(const std::string& name, const at::Device& device) {
  const std::optional<Precision> precision = find_choice(kPrecisions, name);
  if (!precision) usage_fail("--precision must be {}, got '{}'", choice_list(kPrecisions), name);
  check_precision(*precision, device);
  return *precision;
}

void check_precision(Precision precision, const at::Device& device) {
  if (precision == Precision::fp16 && !device.is_cuda())
    usage_fail("--precision fp16 needs --device cuda (use bf16 on the CPU)");
}

at::ScalarType compute_dtype(Precision precision) {
  return precision == Precision::bf16 ? at::kBFloat16 : precision == Precision::fp16 ? at::kHalf : at::kFloat;
}

AutocastScope::AutocastScope(Precision precision, const at::Device& device) : device_type_(device.type()) {
  if (precision == Precision::fp32) return;
  active_ = true;
  was_enabled_ = at::autocast::is_autocast_enabled(device_type_);
  previous_dtype_ = at::autocast::get_autocast_dtype(device_type_);
  at::autocast::set_autocast_enabled(device_type_, true);
  at::autocast::set_autocast_dtype(device_type_, compute_dtype(precision));
}

AutocastScope::~AutocastScope() {
  if (!active_) return;
  at::autocast::set_autocast_enabled(device_type_, was_enabled_);
  at::autocast::set_autocast_dtype(device_type_, previous_dtype_);
  at::autocast::clear_cache();
}

double peak_flops(const at::Device& device, Precision precision, double peak_tflops_flag) {
  if (peak_tflops_flag > 0) return peak_tflops_flag * 1e12;
  if (!device.is_cuda()) return 0;
  // Dense (no sparsity) tensor-core peaks from NVIDIA's data sheets; fp32 runs on TF32 at best.
  const std::string name = at::cuda::getDeviceProperties(device.index() < 0 ? 0 : device.index())->name;
  const bool half = precision != Precision::fp32;
  if (name.find("H100") != std::string::npos || name.find("H200") != std::string::npos) return half ? 989e12 : 494e12;
  if (name.find("A100") != std::string::npos) return half ? 312e12 : 156e12;
  return 0;
}

}  // namespace bk
