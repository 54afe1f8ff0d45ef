// Bias add and GELU (the erf form, BERT's "gelu") in one CUDA kernel each way, for the intermediate dense layer's
// gelu(x W^T + b), whose matrix product then runs without its bias (model/fused_gelu.h wraps them for autograd).
// Forward: each thread 8 contiguous elements (one 16-byte load per tensor), gelu(input + bias) in fp32, rounded once
// to the storage type. Backward: grad_input = grad_out * gelu'(input + bias), and the bias's gradient as per-block
// partial sums of grad_input (fp32, [blocks, cols]) that the caller adds up: the pass that writes the gradient also
// reduces it, where the separate ops read it once more. Plain pointers and a cudaStream_t passed as void*, as in
// dropout_add_layer_norm.h.
#pragma once

#include "kernels/half_type.h"

#include <cstdint>

namespace bk::kernels {

// cols: a multiple of 8, at most 8192 (backward: one thread per 8 columns, up to 1024 threads).
bool bias_gelu_supports(int64_t cols);

struct BiasGeluForward {
  const void* input = nullptr;  // [rows, cols]: the dense layer's product without its bias
  const void* bias = nullptr;   // [cols]
  void* out = nullptr;          // [rows, cols]: gelu(input + bias)
  int64_t rows = 0, cols = 0;
};

struct BiasGeluBackward {
  const void* grad_out = nullptr;  // [rows, cols]
  const void* input = nullptr;     // [rows, cols], bias [cols]: as forward took them
  const void* bias = nullptr;
  void* grad_input = nullptr;      // [rows, cols]: the gradient of input + bias
  float* bias_partial = nullptr;   // [backward_blocks, cols]
  int64_t rows = 0, cols = 0;
};

// The number of blocks (rows of the partial sums) backward uses for `rows` rows on the current device.
int64_t bias_gelu_backward_blocks(int64_t rows);

// Both return the launch's error text, or an empty string.
const char* bias_gelu_forward(HalfType type, const BiasGeluForward& args, void* stream);
const char* bias_gelu_backward(HalfType type, const BiasGeluBackward& args, void* stream);

}  // namespace bk::kernels
