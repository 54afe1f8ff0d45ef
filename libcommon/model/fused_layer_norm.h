// LayerNorm(dropout(input) + residual), the post-LayerNorm BERT layer's two sums, as one CUDA kernel each way
// (kernels/dropout_add_layer_norm.h) under autograd, or as the separate ATen ops. The fused kernels run only where
// they were built and were switched on (model/kernel_switches.h: --fused-kernels, auto by default), and apply: CUDA tensors in bf16/fp16 with a hidden size that is a multiple of 8 up to 8192. Everywhere
// else, and as the reference the CUDA test compares the kernels with, the ATen ops. dense_dropout_add_layer_norm
// puts the dense layer before it in front, and with the experimental kernels on, its bias into the kernel.
#pragma once

#include <ATen/Tensor.h>

namespace bk {

// input, residual: [..., H] in the autocast dtype; gamma, beta: [H] (cast to it under autocast). Dropout with
// probability p when training. A defined `bias` ([H]) is added to the input before dropout: in the kernel with the
// experimental kernels on, else as its own op.
at::Tensor dropout_add_layer_norm(const at::Tensor& input, const at::Tensor& residual, const at::Tensor& gamma,
                                  const at::Tensor& beta, double p, double eps, bool training,
                                  const at::Tensor& bias = {});

// A post-LayerNorm output, which the encoder reads twice: `hidden` for the next dense layer, `residual` for the next
// residual add. The same values; with the experimental kernels, two outputs of one autograd node, so that its
// backward receives the two uses' gradients apart and adds them inside the kernel instead of autograd adding them
// in a pass of their own. Otherwise one tensor, twice.
struct NormOutput {
  at::Tensor hidden, residual;
};

// LayerNorm(dropout(x W^T + b) + residual): the attention output's and the output layer's dense layer with what
// follows it. With the experimental kernels on and applying, the product runs without its bias, the bias goes into
// the kernel, and the output comes as two autograd outputs; else at::linear and dropout_add_layer_norm.
NormOutput dense_dropout_add_layer_norm(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b,
                                        const at::Tensor& residual, const at::Tensor& gamma, const at::Tensor& beta,
                                        double p, double eps, bool training);

// LayerNorm over the last dimension that keeps autocast's low precision (autocast alone would run it in fp32 and
// return fp32); plain layer_norm without autocast.
at::Tensor autocast_layer_norm(const at::Tensor& x, const at::Tensor& gamma, const at::Tensor& beta, double eps);

// The ATen ops alone (what dropout_add_layer_norm computes without the kernels).
at::Tensor dropout_add_layer_norm_reference(const at::Tensor& input, const at::Tensor& residual,
                                            const at::Tensor& gamma, const at::Tensor& beta, double p, double eps,
                                            bool training, const at::Tensor& bias = {});

}  // namespace bk
