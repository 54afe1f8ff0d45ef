// The kernels of bias_gelu.h. GELU in the erf form: gelu(v) = v * Phi(v), gelu'(v) = Phi(v) + v * phi(v), with the
// standard normal's distribution Phi and density phi, in fp32 whatever the storage type.
#include "kernels/bias_gelu.h"
#include "kernels/vector8.cuh"

namespace bk::kernels {
namespace {

constexpr float kSqrtHalf = 0.70710678118654752f;    // 1 / sqrt(2)
constexpr float kInvSqrt2Pi = 0.39894228040143268f;  // 1 / sqrt(2 pi)

__device__ inline float normal_cdf(float v) { return 0.5f * (1.f + erff(v * kSqrtHalf)); }

template <typename T2>
__global__ void bias_gelu_forward_kernel(BiasGeluForward a) {
  const int64_t vectors = a.rows * a.cols / kPerThread;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t v = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; v < vectors; v += stride) {
    const int64_t index = v * kPerThread;
    float x[kPerThread], b[kPerThread];
    load8<T2>(a.input, index, x);
    load8<T2>(a.bias, index % a.cols, b);
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) {
      const float u = x[k] + b[k];
      x[k] = u * normal_cdf(u);
    }
    store8<T2>(a.out, index, x);
  }
}

template <typename T2>
__global__ void __launch_bounds__(1024) bias_gelu_backward_kernel(BiasGeluBackward a, int64_t rows_per_block) {
  const int t = threadIdx.x;
  if (t >= a.cols / kPerThread) return;  // no block-wide synchronisation below
  const int64_t column = static_cast<int64_t>(t) * kPerThread;
  float b[kPerThread], dbias[kPerThread] = {};
  load8<T2>(a.bias, column, b);
  const int64_t first = blockIdx.x * rows_per_block, last = min(a.rows, first + rows_per_block);
  for (int64_t row = first; row < last; ++row) {
    const int64_t index = row * a.cols + column;
    float dy[kPerThread], x[kPerThread];
    load8<T2>(a.grad_out, index, dy);
    load8<T2>(a.input, index, x);
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) {
      const float u = x[k] + b[k];
      const float g = dy[k] * (normal_cdf(u) + u * kInvSqrt2Pi * expf(-0.5f * u * u));
      x[k] = g;
      dbias[k] += g;
    }
    store8<T2>(a.grad_input, index, x);
  }
  float* partial = a.bias_partial + blockIdx.x * a.cols + column;
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) partial[k] = dbias[k];
}

// The launches for each storage type (launch_as, vector8.cuh).
struct Launch {
  template <typename T2>
  static const char* run(const BiasGeluForward& a, cudaStream_t stream) {
    const int64_t vectors = a.rows * a.cols / kPerThread;
    if (vectors == 0) return "";
    constexpr int kThreads = 256;
    // Enough blocks to fill every SM several times over; the grid-stride loop covers the rest.
    const int64_t blocks = std::min<int64_t>((vectors + kThreads - 1) / kThreads, int64_t{multiprocessors()} * 16);
    bias_gelu_forward_kernel<T2><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(a);
    return last_error();
  }

  template <typename T2>
  static const char* run(const BiasGeluBackward& a, cudaStream_t stream) {
    if (a.rows == 0) return "";
    const int64_t per_block = rows_per_backward_block(a.rows);
    const auto blocks = static_cast<unsigned>(backward_blocks(a.rows));
    bias_gelu_backward_kernel<T2><<<blocks, threads_for(a.cols), 0, stream>>>(a, per_block);
    return last_error();
  }
};

}  // namespace

bool bias_gelu_supports(int64_t cols) { return row_fits_block(cols); }

int64_t bias_gelu_backward_blocks(int64_t rows) { return backward_blocks(rows); }

const char* bias_gelu_forward(HalfType type, const BiasGeluForward& args, void* stream) {
  return launch_as<Launch>(type, args, stream);
}

const char* bias_gelu_backward(HalfType type, const BiasGeluBackward& args, void* stream) {
  return launch_as<Launch>(type, args, stream);
}

}  // namespace bk::kernels
