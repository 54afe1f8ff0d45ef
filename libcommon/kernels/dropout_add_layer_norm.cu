// The kernels of dropout_add_layer_norm.h. Each thread holds 8 columns of a row (one 16-byte load per tensor);
// a row's sums go through warp shuffles and one shared-memory round.
#include "kernels/dropout_add_layer_norm.h"
#include "kernels/vector8.cuh"

#include <curand_kernel.h>

namespace bk::kernels {
namespace {

// Rounds to the 16-bit type and back: the value a stored tensor would hold.
template <typename T2>
__device__ inline void round8(float (&v)[kPerThread]) {
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const float2 f = to_float2(from_float2<T2>(v[2 * k], v[2 * k + 1]));
    v[2 * k] = f.x;
    v[2 * k + 1] = f.y;
  }
}

// The block's total of (a, b); every thread gets it. blockDim.x is a multiple of 32.
__device__ inline float2 block_sum(float2 v, float2* shared) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    v.x += __shfl_xor_sync(0xffffffffu, v.x, o);
    v.y += __shfl_xor_sync(0xffffffffu, v.y, o);
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  __syncthreads();  // the previous call's readers are done with `shared`
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  float2 t = lane < warps ? shared[lane] : make_float2(0.f, 0.f);
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    t.x += __shfl_xor_sync(0xffffffffu, t.x, o);
    t.y += __shfl_xor_sync(0xffffffffu, t.y, o);
  }
  return t;
}

template <typename T2>
__global__ void dropout_add_layer_norm_forward_kernel(DropoutAddLayerNormForward a) {
  __shared__ float2 shared[32];
  const int64_t row = blockIdx.x;
  const int vectors = static_cast<int>(a.cols / kPerThread);
  const int t = threadIdx.x;
  const bool active = t < vectors;
  const int64_t index = row * a.cols + static_cast<int64_t>(t) * kPerThread;
  float x[kPerThread] = {};
  if (active) {
    float in[kPerThread];
    load8<T2>(a.input, index, in);
    load8<T2>(a.residual, index, x);
    if (a.bias != nullptr) {
      float bias[kPerThread];
      load8<T2>(a.bias, static_cast<int64_t>(t) * kPerThread, bias);
#pragma unroll
      for (int k = 0; k < kPerThread; ++k) in[k] += bias[k];
    }
    if (a.p > 0) {
      curandStatePhilox4_32_10_t state;
      const uint64_t seed = a.seed_at ? static_cast<uint64_t>(*a.seed_at) : a.seed;
      const uint64_t offset = a.offset_at ? static_cast<uint64_t>(*a.offset_at) + a.offset_in_graph : a.offset;
      curand_init(seed, static_cast<uint64_t>(row) * vectors + t, offset, &state);
      const float4 u0 = curand_uniform4(&state), u1 = curand_uniform4(&state);
      const float u[kPerThread] = {u0.x, u0.y, u0.z, u0.w, u1.x, u1.y, u1.z, u1.w};
      const float keep_p = 1.f - a.p, scale = 1.f / keep_p;
      union {
        uint2 word;
        uint8_t bytes[kPerThread];
      } keep;
#pragma unroll
      for (int k = 0; k < kPerThread; ++k) {
        keep.bytes[k] = u[k] < keep_p;
        x[k] += keep.bytes[k] ? in[k] * scale : 0.f;
      }
      *reinterpret_cast<uint2*>(a.keep + index) = keep.word;
    } else {
#pragma unroll
      for (int k = 0; k < kPerThread; ++k) x[k] += in[k];
    }
    round8<T2>(x);
    store8<T2>(a.sum, index, x);
  }
  float s = 0;
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) s += x[k];
  const float mean = block_sum(make_float2(s, 0.f), shared).x / static_cast<float>(a.cols);
  float d = 0;
  if (active) {
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) d += (x[k] - mean) * (x[k] - mean);
  }
  const float rstd = rsqrtf(block_sum(make_float2(d, 0.f), shared).x / static_cast<float>(a.cols) + a.eps);
  if (t == 0) {
    a.mean[row] = mean;
    a.rstd[row] = rstd;
  }
  if (!active) return;
  float g[kPerThread], b[kPerThread], y[kPerThread];
  load8<T2>(a.gamma, static_cast<int64_t>(t) * kPerThread, g);
  load8<T2>(a.beta, static_cast<int64_t>(t) * kPerThread, b);
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) y[k] = (x[k] - mean) * rstd * g[k] + b[k];
  store8<T2>(a.out, index, y);
}

// kBias: also sums grad_input into a.bias_partial. A template parameter, so the kernel without it stays within 64
// registers (a block of 1,024 threads, 8,192 columns); the bounds keep the one with it there too.
template <typename T2, bool kBias>
__global__ void __launch_bounds__(1024) dropout_add_layer_norm_backward_kernel(DropoutAddLayerNormBackward a,
                                                                               int64_t rows_per_block) {
  __shared__ float2 shared[32];
  const int vectors = static_cast<int>(a.cols / kPerThread);
  const int t = threadIdx.x;
  const bool active = t < vectors;
  const int64_t column = static_cast<int64_t>(t) * kPerThread;
  const float inv_cols = 1.f / static_cast<float>(a.cols), scale = a.p > 0 ? 1.f / (1.f - a.p) : 1.f;
  float g[kPerThread] = {}, dgamma[kPerThread] = {}, dbeta[kPerThread] = {}, dbias[kPerThread] = {};
  if (active) load8<T2>(a.gamma, column, g);
  const int64_t first = blockIdx.x * rows_per_block, last = min(a.rows, first + rows_per_block);
  for (int64_t row = first; row < last; ++row) {
    const int64_t index = row * a.cols + column;
    float dy[kPerThread] = {}, xhat[kPerThread] = {}, dxhat[kPerThread] = {};
    const float mean = a.mean[row], rstd = a.rstd[row];
    float2 partial = make_float2(0.f, 0.f);
    if (active) {
      load8<T2>(a.grad_out, index, dy);
      if (a.grad_out2 != nullptr) {
        float dy2[kPerThread];
        load8<T2>(a.grad_out2, index, dy2);
#pragma unroll
        for (int k = 0; k < kPerThread; ++k) dy[k] += dy2[k];
      }
      load8<T2>(a.sum, index, xhat);
#pragma unroll
      for (int k = 0; k < kPerThread; ++k) {
        xhat[k] = (xhat[k] - mean) * rstd;
        dxhat[k] = dy[k] * g[k];
        dgamma[k] += dy[k] * xhat[k];
        dbeta[k] += dy[k];
        partial.x += dxhat[k];
        partial.y += dxhat[k] * xhat[k];
      }
    }
    const float2 total = block_sum(partial, shared);
    if (!active) continue;
    const float mean_dxhat = total.x * inv_cols, mean_dxhat_xhat = total.y * inv_cols;
    float dx[kPerThread];
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) dx[k] = rstd * (dxhat[k] - mean_dxhat - xhat[k] * mean_dxhat_xhat);
    store8<T2>(a.grad_residual, index, dx);
    if (a.p > 0) {
      union {
        uint2 word;
        uint8_t bytes[kPerThread];
      } keep;
      keep.word = *reinterpret_cast<const uint2*>(a.keep + index);
#pragma unroll
      for (int k = 0; k < kPerThread; ++k) dx[k] = keep.bytes[k] ? dx[k] * scale : 0.f;
    }
    store8<T2>(a.grad_input, index, dx);
    if constexpr (kBias) {
#pragma unroll
      for (int k = 0; k < kPerThread; ++k) dbias[k] += dx[k];
    }
  }
  if (!active) return;
  float* gp = a.gamma_partial + blockIdx.x * a.cols + column;
  float* bp = a.beta_partial + blockIdx.x * a.cols + column;
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    gp[k] = dgamma[k];
    bp[k] = dbeta[k];
  }
  if constexpr (kBias) {
    float* dp = a.bias_partial + blockIdx.x * a.cols + column;
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) dp[k] = dbias[k];
  }
}

// The launches for each storage type (launch_as, vector8.cuh).
struct Launch {
  template <typename T2>
  static const char* run(const DropoutAddLayerNormForward& a, cudaStream_t stream) {
    if (a.rows == 0) return "";
    dropout_add_layer_norm_forward_kernel<T2><<<static_cast<unsigned>(a.rows), threads_for(a.cols), 0, stream>>>(a);
    return last_error();
  }

  template <typename T2>
  static const char* run(const DropoutAddLayerNormBackward& a, cudaStream_t stream) {
    if (a.rows == 0) return "";
    const int64_t per_block = rows_per_backward_block(a.rows);
    const auto blocks = static_cast<unsigned>(backward_blocks(a.rows));
    if (a.bias_partial != nullptr)
      dropout_add_layer_norm_backward_kernel<T2, true><<<blocks, threads_for(a.cols), 0, stream>>>(a, per_block);
    else
      dropout_add_layer_norm_backward_kernel<T2, false><<<blocks, threads_for(a.cols), 0, stream>>>(a, per_block);
    return last_error();
  }
};

}  // namespace

bool dropout_add_layer_norm_supports(int64_t cols) { return row_fits_block(cols); }

int64_t dropout_add_layer_norm_backward_blocks(int64_t rows) { return backward_blocks(rows); }

const char* dropout_add_layer_norm_forward(HalfType type, const DropoutAddLayerNormForward& args, void* stream) {
  return launch_as<Launch>(type, args, stream);
}

const char* dropout_add_layer_norm_backward(HalfType type, const DropoutAddLayerNormBackward& args, void* stream) {
  return launch_as<Launch>(type, args, stream);
}

}  // namespace bk::kernels
