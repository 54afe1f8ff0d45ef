// Dropout, residual add and LayerNorm in one CUDA kernel each way, for the post-LayerNorm BERT layer's
// LayerNorm(dropout(sublayer + bias) + residual) (model/fused_layer_norm.h wraps them for autograd). The bias is
// optional; with it the backward also sums the bias's gradient, so the dense layer before needs neither its bias
// epilogue nor its bias-gradient reduction. Forward: one block per row, each thread 8 contiguous columns in
// registers; the sum is rounded to the storage type before the statistics are taken, as the unfused ops would
// store it, and kept for backward with the per-row mean and 1/std (fp32) and the keep mask (one byte per
// element). Backward: blocks of consecutive rows, the input gradient per row and the gamma/beta (and bias)
// gradients as per-block partial sums (fp32, [blocks, cols]) that the caller adds up. Dropout draws from
// Philox4x32-10 (curand) at the caller's seed and offset, 8 numbers per thread: the caller advances its generator
// by 8 (under CUDA graph capture, the seed and offset are read on the device). Plain pointers and a cudaStream_t
// passed as void*: no LibTorch or CUDA headers here, so the host side compiles without nvcc.
#pragma once

#include "kernels/half_type.h"

#include <cstdint>

namespace bk::kernels {

// cols: a multiple of 8, at most 8192 (one thread per 8 columns, up to 1024 threads).
bool dropout_add_layer_norm_supports(int64_t cols);

struct DropoutAddLayerNormForward {
  const void* input;     // [rows, cols]: the sublayer's output, dropped out
  const void* bias = nullptr;  // [cols], added to the input before dropout (a dense layer's bias), or null
  const void* residual;  // [rows, cols]
  const void* gamma;     // [cols]
  const void* beta;      // [cols]
  void* out;             // [rows, cols]: LayerNorm(dropout(input) + residual)
  void* sum;             // [rows, cols]: dropout(input) + residual, kept for backward
  uint8_t* keep;         // [rows, cols]: 1 where the input was kept; unused when p == 0
  float* mean;           // [rows]
  float* rstd;           // [rows]
  int64_t rows = 0, cols = 0;
  float p = 0, eps = 1e-12f;
  // Philox's seed and offset: the values, or, in a CUDA graph's capture, where the graph's replay puts them
  // (torch's generator fills seed_at and offset_at before each replay; this launch adds offset_in_graph): what
  // ATen's PhiloxCudaState holds, so the same captured graph draws new numbers at every replay.
  uint64_t seed = 0, offset = 0;
  const int64_t* seed_at = nullptr;
  const int64_t* offset_at = nullptr;
  uint64_t offset_in_graph = 0;
};

struct DropoutAddLayerNormBackward {
  const void* grad_out;  // [rows, cols]
  const void* grad_out2 = nullptr;  // [rows, cols]: a second gradient of the output, added to grad_out (an output
                                    // read twice, whose two gradients meet here instead of in a pass of their own)
  const void* sum;       // [rows, cols], mean, rstd, keep: as forward left them
  const void* gamma;
  const float* mean;
  const float* rstd;
  const uint8_t* keep;   // unused when p == 0
  void* grad_input;      // [rows, cols]: the gradient reaching the sublayer (through the dropout)
  void* grad_residual;   // [rows, cols]: the gradient reaching the residual
  float* gamma_partial;  // [backward_blocks, cols]
  float* beta_partial;   // [backward_blocks, cols]
  float* bias_partial = nullptr;  // [backward_blocks, cols]: grad_input summed (the bias's gradient), or null
  int64_t rows = 0, cols = 0;
  float p = 0;
};

// The number of blocks (rows of the partial sums) backward uses for `rows` rows on the current device.
int64_t dropout_add_layer_norm_backward_blocks(int64_t rows);

// Both return the launch's error text, or an empty string.
const char* dropout_add_layer_norm_forward(HalfType type, const DropoutAddLayerNormForward& args, void* stream);
const char* dropout_add_layer_norm_backward(HalfType type, const DropoutAddLayerNormBackward& args, void* stream);

}  // namespace bk::kernels
