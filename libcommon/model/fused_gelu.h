// The intermediate dense layer and its activation, act(x W^T + b). With the experimental kernels on
// (set_experimental_kernels, --fused-kernels experimental) and where they apply (BERT's erf "gelu", CUDA in
// bf16/fp16, a width that is a multiple of 8 up to 8192), the product runs without its bias and one kernel adds
// the bias and applies GELU; in backward one kernel computes the product's gradient and sums the bias's in the
// same pass (kernels/bias_gelu.h). Elsewhere, and as the reference the CUDA test compares the kernels with,
// at::linear and bert_activation (model/parameters.h).
#pragma once

#include <ATen/Tensor.h>

#include <string>

namespace bk {

at::Tensor dense_activation(const std::string& hidden_act, const at::Tensor& x, const at::Tensor& w,
                            const at::Tensor& b);

// gelu(input + bias), the erf form: the kernel where it applies (as above), else the ATen ops. input: [..., F] in
// the autocast dtype; bias: [F] (cast to it under autocast).
at::Tensor bias_gelu(const at::Tensor& input, const at::Tensor& bias);

}  // namespace bk
