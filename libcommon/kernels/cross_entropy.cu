// The kernels of cross_entropy.h. Forward keeps, per thread, a running (max, sum of exp(x - max), first arg-max)
// over its share of the row, the online softmax's one pass, then merges the threads' triples: across a warp by
// shuffles, across the block through shared memory. All arithmetic in fp32.
#include "kernels/cross_entropy.h"
#include "kernels/vector8.cuh"

#include <climits>

namespace bk::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

struct Running {
  float max = -INFINITY;
  float sum = 0.f;     // of exp(x - max) over the values seen
  int index = INT_MAX;  // where max was first seen
};

__device__ inline void add(Running& r, float x, int column) {
  if (x > r.max) {  // false for NaN, which then makes the sum NaN below, and so the loss
    r.sum = r.sum * expf(r.max - x) + 1.f;  // r.max = -inf on the first value: 0 * 0
    r.max = x;
    r.index = column;
  } else if (x != -INFINITY) {  // -inf adds nothing (and exp(-inf - -inf) would be NaN)
    r.sum += expf(x - r.max);
  }
}

__device__ inline Running merge(Running a, Running b) {
  if (b.max > a.max || (b.max == a.max && b.index < a.index)) {
    const Running t = a;
    a = b;
    b = t;
  }
  if (b.max != -INFINITY) a.sum += b.sum * expf(b.max - a.max);
  else if (isnan(b.sum)) a.sum = NAN;  // a part of only NaN (and -inf) values: its NaN still reaches the loss
  return a;
}

__device__ inline Running block_merge(Running r) {
  __shared__ float maxes[kWarps], sums[kWarps];
  __shared__ int indices[kWarps];
  for (int offset = 16; offset > 0; offset /= 2) {
    Running other;
    other.max = __shfl_xor_sync(0xffffffffu, r.max, offset);
    other.sum = __shfl_xor_sync(0xffffffffu, r.sum, offset);
    other.index = __shfl_xor_sync(0xffffffffu, r.index, offset);
    r = merge(r, other);
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) {
    maxes[warp] = r.max;
    sums[warp] = r.sum;
    indices[warp] = r.index;
  }
  __syncthreads();
  Running all;
  if (warp == 0) {
    for (int w = 0; w < kWarps; ++w) {
      Running part;
      part.max = maxes[w];
      part.sum = sums[w];
      part.index = indices[w];
      all = merge(all, part);
    }
  }
  return all;  // in warp 0
}

template <typename T2>
__global__ void __launch_bounds__(kThreads) cross_entropy_forward_kernel(CrossEntropyForward a) {
  const int64_t row = blockIdx.x, start = row * a.padded_cols;
  Running r;
  for (int64_t c = static_cast<int64_t>(threadIdx.x) * kPerThread; c < a.cols; c += kThreads * kPerThread) {
    float x[kPerThread];
    load8<T2>(a.logits, start + c, x);
#pragma unroll
    for (int k = 0; k < kPerThread; ++k)
      if (c + k < a.cols) add(r, x[k], static_cast<int>(c + k));
  }
  r = block_merge(r);
  if (threadIdx.x != 0) return;
  const float lse = r.max + logf(r.sum);
  const int64_t label = a.labels[row];
  float loss = 0.f;
  if (label >= a.cols) {
    loss = NAN;
  } else if (label >= 0) {
    float x[kPerThread];  // the 8 values around the label's, one aligned load
    load8<T2>(a.logits, start + label / kPerThread * kPerThread, x);
    loss = lse - x[label % kPerThread];
  }
  a.loss[row] = loss;
  a.logsumexp[row] = lse;
  a.predicted[row] = r.index == INT_MAX ? 0 : r.index;  // a row of only NaN or -inf: class 0
}

template <typename T2>
__global__ void __launch_bounds__(kThreads) cross_entropy_backward_kernel(CrossEntropyBackward a) {
  const int64_t row = blockIdx.x, start = row * a.padded_cols;
  const int64_t label = a.labels[row];
  const bool labelled = label >= 0 && label < a.cols;
  const float g = labelled ? a.grad_loss[row] : 0.f, lse = a.logsumexp[row];
  for (int64_t c = static_cast<int64_t>(threadIdx.x) * kPerThread; c < a.padded_cols; c += kThreads * kPerThread) {
    float x[kPerThread];
    load8<T2>(a.logits, start + c, x);
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) {
      const int64_t column = c + k;
      x[k] = labelled && column < a.cols ? (expf(x[k] - lse) - (column == label ? 1.f : 0.f)) * g : 0.f;
    }
    store8<T2>(a.grad_logits, start + c, x);
  }
}

// The launches for each storage type (launch_as, vector8.cuh).
struct Launch {
  template <typename T2>
  static const char* run(const CrossEntropyForward& a, cudaStream_t stream) {
    if (a.rows == 0) return "";
    cross_entropy_forward_kernel<T2><<<static_cast<unsigned>(a.rows), kThreads, 0, stream>>>(a);
    return last_error();
  }

  template <typename T2>
  static const char* run(const CrossEntropyBackward& a, cudaStream_t stream) {
    if (a.rows == 0) return "";
    cross_entropy_backward_kernel<T2><<<static_cast<unsigned>(a.rows), kThreads, 0, stream>>>(a);
    return last_error();
  }
};

}  // namespace

bool cross_entropy_supports(int64_t cols, int64_t padded_cols) {
  return cols > 0 && cols <= padded_cols && padded_cols % kPerThread == 0 && padded_cols < INT_MAX;
}

const char* cross_entropy_forward(HalfType type, const CrossEntropyForward& args, void* stream) {
  return launch_as<Launch>(type, args, stream);
}

const char* cross_entropy_backward(HalfType type, const CrossEntropyBackward& args, void* stream) {
  return launch_as<Launch>(type, args, stream);
}

}  // namespace bk::kernels
