// What the host sides of bertkit's CUDA kernels share (model/fused_layer_norm.cpp, fused_gelu.cpp,
// fused_cross_entropy.cpp, weight_cast.cpp), defined in cuda_kernels.cpp; all but autocast_weight only where the
// build has the kernels (BERTKIT_CUDA_KERNELS).
#pragma once

#include <ATen/Tensor.h>

#include <initializer_list>

namespace bk {

// Under autocast, a weight in the autocast dtype (through autocast's cache, so the cast is differentiable and done
// once per step); as it is without autocast.
at::Tensor autocast_weight(const at::Tensor& w, const at::Tensor& like);

}  // namespace bk

#ifdef BERTKIT_CUDA_KERNELS

#include "kernels/half_type.h"

namespace bk {

kernels::HalfType half_type(const at::Tensor& t);
// Fails with the launch's error text, if there is one.
void check_launch(const char* error, const char* what);
// The current CUDA stream, as the kernels take it.
void* current_stream();

// Whether a kernel can take t: its 16-byte loads need a 16-byte aligned start, which a contiguous view at an odd
// offset lacks (a tensor that is not contiguous is copied first, and copies are aligned).
bool kernel_can_read(const at::Tensor& t);
// Whether a kernel launched on `like` can take t beside it: the same dtype and device, and readable as above.
bool kernel_can_take(const at::Tensor& t, const at::Tensor& like);
// t as a kernel reads it: contiguous, of `type`, 16-byte aligned (a gradient autograd hands over may be none of these).
at::Tensor kernel_input(const at::Tensor& t, at::ScalarType type);

// The 16-bit dtype a kernel would compute x's dense layer and the weights in (autocast's where it is on, which casts
// them; else x's own, which the weights must share), or Undefined where no kernel applies: not CUDA, not bf16/fp16.
at::ScalarType kernel_dtype(const at::Tensor& x, std::initializer_list<at::Tensor> weights);

}  // namespace bk

#endif  // BERTKIT_CUDA_KERNELS
