#include "model/cuda_kernels.h"

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>

#ifdef BERTKIT_CUDA_KERNELS
#include "util/error.h"

#include <ATen/cuda/CUDAContext.h>
#endif

#include <cstdint>

namespace bk {

#ifdef BERTKIT_CUDA_KERNELS

kernels::HalfType half_type(const at::Tensor& t) {
  return t.scalar_type() == at::kBFloat16 ? kernels::HalfType::bf16 : kernels::HalfType::fp16;
}

void check_launch(const char* error, const char* what) {
  if (error != nullptr && *error != '\0') fail("fused {}: CUDA error: {}", what, error);
}

void* current_stream() { return at::cuda::getCurrentCUDAStream().stream(); }

bool kernel_can_read(const at::Tensor& t) {
  return !t.is_contiguous() || reinterpret_cast<uintptr_t>(t.const_data_ptr()) % 16 == 0;
}

bool kernel_can_take(const at::Tensor& t, const at::Tensor& like) {
  return t.scalar_type() == like.scalar_type() && t.device() == like.device() && kernel_can_read(t);
}

at::Tensor kernel_input(const at::Tensor& t, at::ScalarType type) {
  const at::Tensor c = t.contiguous().to(type);
  return kernel_can_read(c) ? c : c.clone();
}

at::ScalarType kernel_dtype(const at::Tensor& x, std::initializer_list<at::Tensor> weights) {
  if (!x.is_cuda()) return at::ScalarType::Undefined;
  const bool autocast = at::autocast::is_autocast_enabled(at::kCUDA);
  const at::ScalarType type = autocast ? at::autocast::get_autocast_dtype(at::kCUDA) : x.scalar_type();
  if (type != at::kBFloat16 && type != at::kHalf) return at::ScalarType::Undefined;
  if (!autocast)
    for (const auto& w : weights)
      if (w.scalar_type() != type) return at::ScalarType::Undefined;
  return type;
}

#endif  // BERTKIT_CUDA_KERNELS

at::Tensor autocast_weight(const at::Tensor& w, const at::Tensor& like) {
  const at::DeviceType device = like.device().type();
  if (!at::autocast::is_autocast_enabled(device)) return w;
  return at::autocast::cached_cast(at::autocast::get_autocast_dtype(device), w, device);
}

}  // namespace bk
