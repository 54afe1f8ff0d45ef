// Which of bertkit's CUDA kernels the model's layers use: the one place that owns the choice (torch-free). The
// layers ask here (fused_layer_norm, fused_gelu, fused_cross_entropy); the training loop sets it from
// --fused-kernels before the model runs, as torch's backend switches are set: process-wide, once.
#pragma once

#include "util/choices.h"

namespace bk {

// --fused-kernels: auto uses the kernels where this build has them, on requires them, experimental adds those not
// yet measured on a GPU.
enum class FusedKernels { automatic, on, off, experimental };
inline constexpr Choice<FusedKernels> kFusedKernels[] = {{"auto", FusedKernels::automatic},
                                                          {"on", FusedKernels::on},
                                                          {"off", FusedKernels::off},
                                                          {"experimental", FusedKernels::experimental}};

// Whether this build has the kernels (nvcc at build time).
bool fused_kernels_built();

// The measured kernels: dropout + residual add + LayerNorm each way. Off by default; on is ignored where the
// kernels were not built.
void set_fused_kernels(bool on);
bool fused_kernels_enabled();

// The kernels not yet measured on a GPU, on top of the others (--fused-kernels experimental): the dense layers'
// biases folded into the kernel after them (dropout_add_layer_norm's and bias + GELU's), so each bias costs neither
// a GEMM epilogue nor its own gradient reduction; the LayerNorm output's two gradients added in its backward
// kernel (NormOutput); the masked-LM cross entropy. Off by default; on only with set_fused_kernels(true) too.
void set_experimental_kernels(bool on);
bool experimental_kernels_enabled();

}  // namespace bk
